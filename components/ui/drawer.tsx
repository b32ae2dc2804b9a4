"use client";

import { Dialog } from "radix-ui";
import type { ReactNode } from "react";
import { DialogClose } from "./dialog";

// A side sheet (Radix Dialog): modal, focus kept inside, Escape or the close button closes it
// and focus returns to the trigger.

export function Drawer({
  open,
  onOpenChange,
  trigger,
  title,
  children,
}: {
  open: boolean;
  onOpenChange: (open: boolean) => void;
  /** The button that opens it: its visible words are its name. */
  trigger: ReactNode;
  title: string;
  children: ReactNode;
}) {
  return (
    <Dialog.Root open={open} onOpenChange={onOpenChange}>
      <Dialog.Trigger asChild>{trigger}</Dialog.Trigger>
      <Dialog.Portal>
        <Dialog.Overlay className="dialog-overlay" />
        <Dialog.Content className="drawer" aria-describedby={undefined}>
          <div className="drawer-head">
            <Dialog.Title className="dialog-title">{title}</Dialog.Title>
            <DialogClose />
          </div>
          {children}
        </Dialog.Content>
      </Dialog.Portal>
    </Dialog.Root>
  );
}
