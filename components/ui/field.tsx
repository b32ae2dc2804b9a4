import type { ComponentProps, ReactNode } from "react";

// Labelled controls. The <label> wraps its control, so the words name it and clicking them
// focuses it, with no ids to keep in step.

/**
 * A control with its label's words above it, or only for screen readers (`hideLabel`) where
 * the place already says what the control is (a row's select, the prompt box).
 */
export function Field({ label, hideLabel = false, className, children }: { label: ReactNode; hideLabel?: boolean; className?: string; children: ReactNode }) {
  return (
    <label className={className}>
      <span className={hideLabel ? "sr-only" : "label"}>{label}</span>
      {children}
    </label>
  );
}

/** A checkbox followed by its words. */
export function Check({ children, className, ...input }: Omit<ComponentProps<"input">, "type"> & { children: ReactNode }) {
  return (
    <label className={className ?? "check"}>
      <input type="checkbox" {...input} />
      {children}
    </label>
  );
}
