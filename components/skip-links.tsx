"use client";

import { useSyncExternalStore, type MouseEvent } from "react";
import { createPortal } from "react-dom";
import { SKIP_SLOT_ID } from "./skip-slot";

// Skip links at the top of the room: straight to the selected agent's transcript or to its
// prompt box, past the top bar, the header and the sidebar (hidden until focused). They render
// into the layout's slot before the top bar: the first Tab stops of a fresh load. On a phone the centre
// may be another screen: it is shown first, then focus moves.

export const SKIP_TARGETS = { transcript: "transcript", prompt: "prompt" } as const;

const noChanges = () => () => undefined;
const findSlot = () => document.getElementById(SKIP_SLOT_ID);
const noSlot = () => null;

export function SkipLinks({ canAct, onBeforeSkip }: { canAct: boolean; onBeforeSkip: () => void }) {
  const skip = (id: string) => (e: MouseEvent) => {
    e.preventDefault();
    onBeforeSkip();
    document.getElementById(id)?.focus();
  };
  // The slot is the layout's and never changes: nothing to subscribe to. None on the server.
  const slot = useSyncExternalStore(noChanges, findSlot, noSlot);
  if (!slot) return null;
  return createPortal(
    <nav aria-label="Skip links" className="skip-links">
      <a href={`#${SKIP_TARGETS.transcript}`} onClick={skip(SKIP_TARGETS.transcript)}>
        Skip to the transcript
      </a>
      {canAct && (
        <a href={`#${SKIP_TARGETS.prompt}`} onClick={skip(SKIP_TARGETS.prompt)}>
          Skip to the prompt box
        </a>
      )}
    </nav>,
    slot,
  );
}
