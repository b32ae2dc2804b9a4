"use client";

import { Dialog } from "radix-ui";
import type { ReactNode } from "react";
import { Button } from "./button";

// The app's dialogs over Radix Dialog: modal, focus kept inside, Escape or Close closes them and
// focus returns to what opened them. Looks: `.dialog*` in app/globals.css. Confirmations of a
// destructive action are ConfirmButton (Radix AlertDialog); side sheets are Drawer.

/** The Close button of a dialog or sheet. */
export function DialogClose({ children = "Close" }: { children?: ReactNode }) {
  return (
    <Dialog.Close asChild>
      <Button variant="secondary">{children}</Button>
    </Dialog.Close>
  );
}

/** A centred dialog: its title, a line saying what it is for, its content, then Close. */
export function Modal({
  open,
  onOpenChange,
  title,
  description,
  children,
}: {
  open: boolean;
  onOpenChange: (open: boolean) => void;
  title: string;
  description: string;
  children: ReactNode;
}) {
  return (
    <Dialog.Root open={open} onOpenChange={onOpenChange}>
      <Dialog.Portal>
        <Dialog.Overlay className="dialog-overlay" />
        <Dialog.Content className="dialog">
          <Dialog.Title className="dialog-title">{title}</Dialog.Title>
          <Dialog.Description className="dialog-description">{description}</Dialog.Description>
          {children}
          <div className="dialog-actions">
            <DialogClose />
          </div>
        </Dialog.Content>
      </Dialog.Portal>
    </Dialog.Root>
  );
}
