"use client";

import { AlertDialog } from "radix-ui";
import { useState, type ReactNode } from "react";
import { Button } from "./button";
import { AlertDialogPanel } from "./dialog";

// A button whose action asks first (Radix AlertDialog): the dialog names the consequence, and
// the action runs only on the explicit confirm. Focus starts on Cancel, Escape cancels.

export function ConfirmButton({
  children,
  label,
  title,
  description,
  confirm,
  onConfirm,
  className = "secondary danger",
  disabled,
}: {
  /** The trigger's visible content. */
  children: ReactNode;
  /** The trigger's accessible name, when its content alone is ambiguous ("Remove" → "Remove Bob"). */
  label?: string;
  title: string;
  description: ReactNode;
  /** The confirm button's words: the action itself ("Remove Bob"), never "OK". */
  confirm: string;
  onConfirm: () => void;
  className?: string;
  disabled?: boolean;
}) {
  const [open, setOpen] = useState(false);
  return (
    <AlertDialog.Root open={open} onOpenChange={setOpen}>
      <AlertDialog.Trigger asChild>
        <Button className={className} aria-label={label} disabled={disabled}>
          {children}
        </Button>
      </AlertDialog.Trigger>
      <AlertDialogPanel title={title} description={description}>
        <AlertDialog.Cancel asChild>
          <Button variant="secondary">Cancel</Button>
        </AlertDialog.Cancel>
        <AlertDialog.Action asChild>
          <Button variant="danger-solid" onClick={onConfirm}>
            {confirm}
          </Button>
        </AlertDialog.Action>
      </AlertDialogPanel>
    </AlertDialog.Root>
  );
}
