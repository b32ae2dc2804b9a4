import { z } from "zod";
import type { DbOrTx } from "../db/client";
import { excerpt, recordTeamEvent } from "../runtime/team-events";

// Mentions (SPEC.md §17): `@name` in a prompt or a task names a person of the team, who is
// notified. A name matches a person whose name, without spaces, or whose first name is it
// (letters and digits, case aside): "@olive" and "@OliveStone" both reach Olive Stone. The
// author is never notified of their own mention.

const MENTION = /(?:^|[^\p{L}\p{N}_@])@([\p{L}\p{N}][\p{L}\p{N}._-]*)/gu;

export function mentionedNames(text: string): string[] {
  return [...new Set([...text.matchAll(MENTION)].map((m) => m[1]!.replace(/[._-]+$/, "").toLowerCase()))];
}

/** Whether `token` (lowercase) names the person called `name`. */
export function namesPerson(token: string, name: string): boolean {
  const words = name.toLowerCase().split(/\s+/).filter(Boolean);
  return token === words.join("") || token === words[0];
}

const PeopleRows = z.array(z.object({ user_id: z.string(), name: z.string() }));

/**
 * In the transaction of the prompt or task change: a mention event for the team's people that
 * `text` names (none: nothing recorded). `key` makes it once per prompt or task revision.
 */
export async function recordMentions(
  tx: DbOrTx,
  teamId: string,
  text: string,
  m: { by: { name: string; userId: string | null }; where: string; key: string },
): Promise<void> {
  const tokens = mentionedNames(text);
  if (tokens.length === 0) return;
  const people = PeopleRows.parse(await tx.$queryRaw`SELECT p.user_id, u.name FROM team_people p JOIN users u ON u.id = p.user_id WHERE p.team_id = ${teamId}`);
  const userIds = people.filter((p) => p.user_id !== m.by.userId && tokens.some((t) => namesPerson(t, p.name))).map((p) => p.user_id);
  if (userIds.length === 0) return;
  await recordTeamEvent(tx, teamId, m.key, { kind: "mention", userIds, by: m.by.name, where: m.where, text: excerpt(text) });
}
