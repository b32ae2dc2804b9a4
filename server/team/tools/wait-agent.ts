import { z } from "zod";
import type { Db } from "../../db/client";
import { abortableWait } from "../../abortable";
import { AppError } from "../../errors";
import { LIMITS } from "../../../shared/limits";
import type { SessionId } from "../../ids";
import { NEEDS_DRIVER } from "../../runtime/lease";
import { defineTool } from "../../runtime/tools";
import { membershipOf } from "../../members/membership";
import { listMembers } from "../roster";
import type { TeamToolDeps } from "./deps";

export const waitAgentTool = (deps: TeamToolDeps) =>
  defineTool({
    name: "wait_agent",
    description:
      "Waits until something changes in the team after this call (a message, a task update, a member status change) or the timeout passes, then re-read what you need. Returns noProgress at once when no other member is working.",
    input: z.object({ timeout_ms: z.number().int().optional() }).strict(),
    output: z.union([z.object({ timedOut: z.boolean() }), z.object({ noProgress: z.literal(true), hint: z.string() })]),
    async execute({ timeout_ms = LIMITS.waitDefaultMs }, ctx) {
      if (timeout_ms < LIMITS.waitMinMs || timeout_ms > LIMITS.waitMaxMs) {
        throw new AppError("TEAM_INVALID_TIMEOUT", `timeout_ms must be between ${LIMITS.waitMinMs} and ${LIMITS.waitMaxMs}`);
      }
      const me = await membershipOf(ctx.db.sql, ctx.sessionId);
      const members = await listMembers(ctx.db.sql, me.teamId);
      // Subscribe before checking, so a change between the check and the wait is not missed.
      // Status changes and arriving input of any member; task and mailbox changes are
      // announced on the team id (the Lead's session). Log appends ("event") do not count.
      let wake!: () => void;
      const woken = new Promise<void>((resolve) => (wake = resolve));
      const offs = members.map((m) =>
        deps.hub.on(m.sessionId, (a) => {
          if (a.kind === "state" || a.kind === "inbox" || a.kind === "team" || a.kind === "board" || a.kind === "mail") wake();
        }),
      );
      try {
        if (!(await othersMakingProgress(ctx.db, me.teamId, me.sessionId))) {
          return {
            noProgress: true as const,
            hint: "No other member is running. Use list_agents, then send_message to wake an inactive teammate, or finish.",
          };
        }
        const outcome = await abortableWait({ ms: timeout_ms, until: woken, signal: ctx.signal });
        if (outcome === "aborted") throw new AppError("TEAM_WAIT_ABORTED", "The wait was aborted");
        return { timedOut: outcome === "elapsed" };
      } finally {
        for (const off of offs) off();
      }
    },
  });

const CountRows = z.array(z.object({ n: z.number() }));

/**
 * Another member can still change something: it needs a driver (runs a turn, or has input
 * waiting that will wake or cold-resume it), waits for a person's decision or answer (its turn
 * goes on after it), or is being provisioned.
 */
async function othersMakingProgress(db: Db, teamId: SessionId, me: SessionId): Promise<boolean> {
  const rows = CountRows.parse(
    await db.$queryRaw`SELECT count(*)::int AS n FROM sessions s WHERE s.team_id = ${teamId} AND s.id <> ${me}
      AND (s.waiting_for IS NOT NULL OR ${NEEDS_DRIVER})`,
  );
  const provisioning = await db.teamMember.count({ where: { teamId, phase: "provisioning" } });
  return (rows[0]?.n ?? 0) > 0 || provisioning > 0;
}
