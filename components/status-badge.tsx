"use client";

import { STATUS_HELP, statusSlug, type AgentStatusName } from "./room/agent-status";
import { Tooltip } from "./ui/tooltip";
import { Button } from "./ui/button";

/**
 * An agent's status in the one vocabulary (agent-status.ts), explained on hover and focus.
 * `inert` inside another control (a roster entry): no control of its own, the explanation as
 * its title.
 */
export function StatusBadge({ status, inert = false }: { status: AgentStatusName; inert?: boolean }) {
  const className = `badge badge-${statusSlug(status)}`;
  if (inert) {
    return (
      <span className={className} title={STATUS_HELP[status]}>
        {status}
      </span>
    );
  }
  return (
    <Tooltip content={STATUS_HELP[status]}>
      <Button className={`${className} badge-button`} aria-label={`status: ${status}`}>
        {status}
      </Button>
    </Tooltip>
  );
}
