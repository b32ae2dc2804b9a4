import { z } from "zod";
import type { Tx } from "../db/client";
import type { SessionId } from "../ids";
import { recordAction, type HumanActor } from "../people/actions";
import { ref } from "../person-ref";
import type { Membership } from "../members/membership";
import { LEAD_NAME } from "../members/names";

import { pathWithin } from "./paths";
import type { Author } from "./schema";
import { formatTaskId } from "../task-ids";

// Who changes a file, and what the board says about it (SPEC.md §14, "write scopes meet
// files"): the author's in-progress tasks are recorded with the version, and a change outside
// the author's write scopes, or inside another member's, carries warnings. Advisory, never a
// lock: the change is made either way.

/** An agent (through its tools) or a person (in the browser) changing the workspace. */
export type Writer = { kind: "member"; member: Membership } | { kind: "person"; actor: HumanActor };

export function authorOf(w: Writer): Author {
  return w.kind === "member"
    ? { kind: "member", name: w.member.name, sessionId: w.member.sessionId }
    : { kind: "person", ...ref(w.actor.person) };
}

const InProgressRow = z.object({
  number: z.number().int(),
  owner_session_id: z.string().nullable(),
  owner_name: z.string().nullable(),
  write_scopes: z.array(z.string()).nullable(),
});
const InProgressRows = z.array(InProgressRow);

export interface ScopeCheck {
  taskIds: string[];
  warnings: string[];
}

/** The writer's in-progress tasks and the write-scope warnings for `path`, read in `tx`. */
export async function checkScopes(tx: Tx, teamId: SessionId, writer: Writer, path: string): Promise<ScopeCheck> {
  const rows = InProgressRows.parse(
    await tx.$queryRaw`SELECT t.number, t.owner_session_id, t.write_scopes,
        CASE WHEN t.owner_session_id = ${teamId} THEN ${LEAD_NAME} ELSE m.name END AS owner_name
      FROM team_tasks t LEFT JOIN team_members m ON m.session_id = t.owner_session_id
      WHERE t.team_id = ${teamId} AND t.status = 'in_progress'
      ORDER BY t.number`,
  );
  const mine = writer.kind === "member" ? rows.filter((r) => r.owner_session_id === writer.member.sessionId) : [];
  const others = writer.kind === "member" ? rows.filter((r) => r.owner_session_id !== writer.member.sessionId) : rows;
  const warnings: string[] = [];
  if (writer.kind === "member") {
    const scopes = mine.flatMap((t) => t.write_scopes ?? []);
    if (!scopes.some((s) => pathWithin(path, s))) {
      warnings.push(
        scopes.length === 0
          ? `${path} is outside your write scopes: you have no in-progress task with write_scopes (claim one that covers it).`
          : `${path} is outside the write scopes of your in-progress tasks (${scopes.join(", ")}).`,
      );
    }
  }
  for (const t of others) {
    const hit = (t.write_scopes ?? []).find((s) => pathWithin(path, s));
    if (hit) warnings.push(`${path} is inside write scope ${hit} of ${formatTaskId(t.number)}, in progress by ${t.owner_name ?? "another member"}.`);
  }
  return { taskIds: mine.map((t) => formatTaskId(t.number)), warnings };
}

/** A person's change is recorded in the action log, after their role is re-checked in `tx`. */
export async function recordPersonChange(tx: Tx, writer: Writer, detail: { path: string; version: number; deleted: boolean }) {
  if (writer.kind === "person") await recordAction(tx, writer.actor, "file_changed", { detail });
}
