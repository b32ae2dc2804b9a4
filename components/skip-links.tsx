"use client";

import type { MouseEvent } from "react";

// Skip links at the top of the room: straight to the selected agent's transcript or to its
// prompt box, past the header and the sidebar (hidden until focused). On a phone the centre
// may be another screen: it is shown first, then focus moves.

export const SKIP_TARGETS = { transcript: "transcript", prompt: "prompt" } as const;

export function SkipLinks({ canAct, onBeforeSkip }: { canAct: boolean; onBeforeSkip: () => void }) {
  const skip = (id: string) => (e: MouseEvent) => {
    e.preventDefault();
    onBeforeSkip();
    document.getElementById(id)?.focus();
  };
  return (
    <nav aria-label="Skip links" className="skip-links">
      <a href={`#${SKIP_TARGETS.transcript}`} onClick={skip(SKIP_TARGETS.transcript)}>
        Skip to the transcript
      </a>
      {canAct && (
        <a href={`#${SKIP_TARGETS.prompt}`} onClick={skip(SKIP_TARGETS.prompt)}>
          Skip to the prompt box
        </a>
      )}
    </nav>
  );
}
