"use client";

import { AlertDialog, Dialog } from "radix-ui";
import type { ComponentProps, ReactNode } from "react";
import { Button } from "./button";

// The app's dialogs over Radix Dialog and AlertDialog, with one shell: an overlay, then a panel
// centred (or, for the command palette, near the top). Modal, focus kept inside, Escape closes
// them and focus returns to what opened them. Side sheets are Drawer.

const PANEL = { centred: "dialog", palette: "dialog palette" } as const;

/** The Close button of a dialog or sheet. */
export function DialogClose({ children = "Close" }: { children?: ReactNode }) {
  return (
    <Dialog.Close asChild>
      <Button variant="secondary">{children}</Button>
    </Dialog.Close>
  );
}

/** A dialog's panel above its overlay, in a portal (inside Dialog.Root). */
export function DialogPanel({ shape = "centred", ...props }: Omit<ComponentProps<typeof Dialog.Content>, "className"> & { shape?: keyof typeof PANEL }) {
  return (
    <Dialog.Portal>
      <Dialog.Overlay className="dialog-overlay" />
      <Dialog.Content className={PANEL[shape]} {...props} />
    </Dialog.Portal>
  );
}

/** The row of a dialog's buttons, at its end. */
export function DialogActions({ children }: { children: ReactNode }) {
  return <div className="dialog-actions">{children}</div>;
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
      <DialogPanel>
        <Dialog.Title className="dialog-title">{title}</Dialog.Title>
        <Dialog.Description className="dialog-description">{description}</Dialog.Description>
        {children}
        <DialogActions>
          <DialogClose />
        </DialogActions>
      </DialogPanel>
    </Dialog.Root>
  );
}

/**
 * An alert dialog's panel (inside AlertDialog.Root): the same shell, its title and what the
 * action does, then its buttons (an AlertDialog.Cancel and an AlertDialog.Action).
 */
export function AlertDialogPanel({ title, description, children }: { title: string; description: ReactNode; children: ReactNode }) {
  return (
    <AlertDialog.Portal>
      <AlertDialog.Overlay className="dialog-overlay" />
      <AlertDialog.Content className={PANEL.centred}>
        <AlertDialog.Title className="dialog-title">{title}</AlertDialog.Title>
        <AlertDialog.Description className="dialog-description">{description}</AlertDialog.Description>
        <DialogActions>{children}</DialogActions>
      </AlertDialog.Content>
    </AlertDialog.Portal>
  );
}
