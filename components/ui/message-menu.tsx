"use client";

import { DropdownMenu } from "radix-ui";
import { useState } from "react";
import { Button } from "./button";

// One menu per transcript message (Radix DropdownMenu) for what a person may do with it: fork
// a new team from it, copy its text, copy its id. Ids live here, never in the message itself.

export function MessageMenu({ text, id, onFork }: { text: string; id?: string; onFork?: () => void }) {
  const [copied, setCopied] = useState<string | null>(null);
  const copy = (what: string, value: string) =>
    void navigator.clipboard.writeText(value).then(
      () => setCopied(`${what} copied`),
      () => setCopied("Copying is blocked here"),
    );
  return (
    <>
      {/* Not modal: the page stays as it is (a modal menu hides the rest from assistive technology while it stays focusable). */}
      <DropdownMenu.Root modal={false}>
        <DropdownMenu.Trigger asChild>
          <Button variant="icon" aria-label="Message actions">
            ⋯
          </Button>
        </DropdownMenu.Trigger>
        <DropdownMenu.Portal>
          <DropdownMenu.Content className="menu" align="end" sideOffset={4} collisionPadding={8}>
            {onFork && (
              <DropdownMenu.Item className="menu-item" onSelect={onFork}>
                Fork a new team from here
              </DropdownMenu.Item>
            )}
            <DropdownMenu.Item className="menu-item" onSelect={() => copy("Text", text)}>
              Copy text
            </DropdownMenu.Item>
            {id && (
              <DropdownMenu.Item className="menu-item" onSelect={() => copy("Message id", id)}>
                Copy message id
              </DropdownMenu.Item>
            )}
          </DropdownMenu.Content>
        </DropdownMenu.Portal>
      </DropdownMenu.Root>
      {copied && (
        <span role="status" className="muted">
          {copied}
        </span>
      )}
    </>
  );
}
