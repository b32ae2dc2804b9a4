import type { ReactNode } from "react";
import { Button } from "./button";

// What went wrong, said where it happened: a live region screen readers announce at once.

export function Alert({ children }: { children: ReactNode }) {
  return (
    <p role="alert" className="error">
      {children}
    </p>
  );
}

/** A failed load, with a Retry beside the reason. */
export function InlineError({ children, onRetry }: { children: ReactNode; onRetry: () => void }) {
  return (
    <Alert>
      {children}{" "}
      <Button variant="secondary" size="small" onClick={onRetry}>
        Retry
      </Button>
    </Alert>
  );
}

/** A failed action's reason (a mutation's error, say); nothing while there is none. */
export function ErrorAlert({ error }: { error: { message: string } | null | undefined }) {
  return error ? <Alert>{error.message}</Alert> : null;
}
