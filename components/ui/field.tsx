import { cloneElement, useId, type ComponentProps, type ReactElement, type ReactNode } from "react";

// Labelled controls. A field's label points at its control by id (not by wrapping it), so the
// control's name is the label's words alone: a wrapped select would add its chosen option.

/**
 * A control with its label's words above it, or only for screen readers (`hideLabel`) where
 * the place already says what the control is (a row's select, the prompt box). The control is
 * the one child; it gets an id unless it has one.
 */
export function Field({ label, hideLabel = false, className, children }: { label: ReactNode; hideLabel?: boolean; className?: string; children: ReactElement<{ id?: string }> }) {
  const fallback = useId();
  const id = children.props.id ?? fallback;
  return (
    <div className={className}>
      <label htmlFor={id} className={hideLabel ? "sr-only" : "label"}>
        {label}
      </label>
      {cloneElement(children, { id })}
    </div>
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
