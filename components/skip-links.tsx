// Skip links at the top of the room: straight to the selected agent's transcript or to its
// prompt box, past the header and the roster (hidden until focused).

export const SKIP_TARGETS = { transcript: "transcript", prompt: "prompt" } as const;

export function SkipLinks({ canAct }: { canAct: boolean }) {
  return (
    <nav aria-label="Skip links" className="skip-links">
      <a href={`#${SKIP_TARGETS.transcript}`}>Skip to the transcript</a>
      {canAct && <a href={`#${SKIP_TARGETS.prompt}`}>Skip to the prompt box</a>}
    </nav>
  );
}
