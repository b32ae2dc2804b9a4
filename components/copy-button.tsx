"use client";

import { useState } from "react";
import { Button } from "./ui/button";

/** Copies a secret (an invite link, an API token) to the clipboard, saying whether it worked. */
export function CopyButton({ text, label }: { text: string; label: string }) {
  const [copied, setCopied] = useState<"yes" | "no" | null>(null);
  return (
    <>
      <Button
       
        variant="secondary"
        onClick={() =>
          navigator.clipboard.writeText(text).then(
            () => setCopied("yes"),
            () => setCopied("no"),
          )
        }
      >
        {label}
      </Button>
      {copied && (
        <span role="status" className="muted">
          {copied === "yes" ? "Copied" : "Copying is blocked here: select the text and copy it"}
        </span>
      )}
    </>
  );
}
