import { z } from "zod";
import type { DbOrTx } from "../db/client";
import type { SqlRunner } from "../db/sql";
import { AppError } from "../errors";
import type { PersonActionKind } from "./actions";
import { AUDIT_KINDS, AUDITED_TEAM_ACTION_KINDS, type AuditKind } from "../../shared/audit-kinds";

// The audit log: who did what security-relevant thing, append-only (a trigger refuses any
// change). Written in the transaction of what it records (team actions through recordAction,
// API tokens with the token's row), or right after a sign-in. The instance owner reads all of
// it; a team's owners read their teams' entries. Filterable by kind, person, team and time, and
// exported as CSV. The kinds: shared/audit-kinds.ts.

export { AUDIT_KINDS };
const AUDITED: ReadonlySet<string> = new Set(AUDITED_TEAM_ACTION_KINDS);
/** Whether a team action is recorded here too. */
export function isAudited(action: PersonActionKind): action is (typeof AUDITED_TEAM_ACTION_KINDS)[number] {
  return AUDITED.has(action);
}
export const AuditKindSchema = z.enum(AUDIT_KINDS);

export interface AuditRecord {
  kind: AuditKind;
  actor: { id: string | null; name: string };
  teamId?: string | null;
  detail?: Record<string, unknown>;
  ip?: string | null;
}

export async function recordAudit(db: SqlRunner, r: AuditRecord): Promise<void> {
  await db.$executeRaw`INSERT INTO audit_log (kind, actor_id, actor_name, team_id, detail, ip)
    VALUES (${r.kind}, ${r.actor.id}, ${r.actor.name.slice(0, 254)}, ${r.teamId ?? null}, ${JSON.stringify(r.detail ?? {})}::jsonb, ${r.ip ?? null})`;
}

export const AUDIT_PAGE = 100;
/** The most rows one CSV export holds (newest first); narrow the filter for older ones. */
export const AUDIT_EXPORT_MAX = 10_000;

export const AuditFilterSchema = z.object({
  kind: AuditKindSchema.optional(),
  teamId: z.string().min(1).max(64).optional(),
  /** Part of the actor's name (or the email a failed sign-in tried), case-insensitive. */
  actor: z.string().trim().min(1).max(254).optional(),
  from: z.date().optional(),
  to: z.date().optional(),
});
export type AuditFilter = z.infer<typeof AuditFilterSchema>;

export const AuditEntrySchema = z.object({
  id: z.string(),
  at: z.date(),
  kind: z.string(),
  actorId: z.string().nullable(),
  actorName: z.string(),
  teamId: z.string().nullable(),
  teamTitle: z.string().nullable(),
  detail: z.record(z.string(), z.unknown()),
  ip: z.string().nullable(),
});
export type AuditEntry = z.infer<typeof AuditEntrySchema>;

/** Who is reading: the instance owner reads everything; anyone else only teams they own. */
export interface AuditReader {
  id: string;
  instanceOwner: boolean;
}

/**
 * A page of entries, newest first (`before`: an entry id, for the next page). Refused with
 * AUDIT_FORBIDDEN for a person who owns no team and is not the instance owner.
 */
export async function listAudit(db: DbOrTx, reader: AuditReader, filter: AuditFilter, page: { before?: string; limit: number }): Promise<{ entries: AuditEntry[]; nextBefore: string | null }> {
  let teams: string[] | undefined;
  if (!reader.instanceOwner) {
    teams = (await db.teamPerson.findMany({ where: { userId: reader.id, role: "owner" }, select: { teamId: true } })).map((t) => t.teamId);
    if (teams.length === 0) throw new AppError("AUDIT_FORBIDDEN", "The audit log is for the instance owner and team owners");
    if (filter.teamId && !teams.includes(filter.teamId)) return { entries: [], nextBefore: null };
  }
  const rows = await db.auditEntry.findMany({
    where: {
      ...(filter.kind ? { kind: filter.kind } : {}),
      ...(filter.teamId ? { teamId: filter.teamId } : teams ? { teamId: { in: teams } } : {}),
      ...(filter.actor ? { actorName: { contains: filter.actor, mode: "insensitive" as const } } : {}),
      ...(filter.from || filter.to ? { at: { ...(filter.from ? { gte: filter.from } : {}), ...(filter.to ? { lte: filter.to } : {}) } } : {}),
      ...(page.before ? { id: { lt: BigInt(page.before) } } : {}),
    },
    orderBy: { id: "desc" },
    take: page.limit + 1,
  });
  const shown = rows.slice(0, page.limit);
  const teamIds = [...new Set(shown.flatMap((r) => (r.teamId ? [r.teamId] : [])))];
  const titles = new Map((await db.session.findMany({ where: { id: { in: teamIds } }, select: { id: true, title: true } })).map((s) => [s.id, s.title]));
  return {
    entries: shown.map((r) =>
      AuditEntrySchema.parse({
        id: r.id.toString(),
        at: r.at,
        kind: r.kind,
        actorId: r.actorId,
        actorName: r.actorName,
        teamId: r.teamId,
        teamTitle: r.teamId ? (titles.get(r.teamId) ?? null) : null,
        detail: r.detail,
        ip: r.ip,
      }),
    ),
    nextBefore: rows.length > page.limit ? shown.at(-1)!.id.toString() : null,
  };
}

/** One CSV field: quoted when it holds a comma, quote or line break; a leading formula sign is defused. */
function csvField(value: string): string {
  const safe = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
}

/** The entries as CSV (RFC 4180), with a header row. */
export function auditCsv(entries: readonly AuditEntry[]): string {
  const header = ["time", "kind", "actor", "actor_id", "team", "team_id", "ip", "detail"];
  const lines = entries.map((e) =>
    [e.at.toISOString(), e.kind, e.actorName, e.actorId ?? "", e.teamTitle ?? "", e.teamId ?? "", e.ip ?? "", JSON.stringify(e.detail)].map(csvField).join(","),
  );
  return `${[header.join(","), ...lines].join("\r\n")}\r\n`;
}
