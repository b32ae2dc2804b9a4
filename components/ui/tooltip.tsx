"use client";

import { Tooltip as Primitive } from "radix-ui";
import type { ReactElement, ReactNode } from "react";

// Tooltips (Radix): shown on hover and on keyboard focus, announced as the trigger's
// description. The trigger must be focusable (a button or a link).

export function TooltipProvider({ children }: { children: ReactNode }) {
  return <Primitive.Provider delayDuration={300}>{children}</Primitive.Provider>;
}

export function Tooltip({ content, children }: { content: ReactNode; children: ReactElement }) {
  return (
    <Primitive.Root>
      <Primitive.Trigger asChild>{children}</Primitive.Trigger>
      <Primitive.Portal>
        <Primitive.Content className="tooltip" sideOffset={4} collisionPadding={8}>
          {content}
          <Primitive.Arrow className="tooltip-arrow" />
        </Primitive.Content>
      </Primitive.Portal>
    </Primitive.Root>
  );
}
