"use client";

import { useState, type ReactNode } from "react";
import { Check } from "./field";

/**
 * A checkbox for a saved setting: it shows the person's choice at once, and the saved value
 * again once `save` (the mutation, then the read back) has settled, whatever its outcome.
 */
export function SettingCheckbox({ saved, pending, save, children }: { saved: boolean; pending: boolean; save: (value: boolean) => Promise<unknown>; children: ReactNode }) {
  const [choice, setChoice] = useState<boolean | null>(null);
  return (
    <Check
      checked={choice ?? saved}
      disabled={pending}
      onChange={(e) => {
        setChoice(e.target.checked);
        // A failure is shown by the caller (its mutation's error); the box goes back to what is saved.
        void save(e.target.checked)
          .catch(() => undefined)
          .finally(() => setChoice(null));
      }}
    >
      {children}
    </Check>
  );
}
