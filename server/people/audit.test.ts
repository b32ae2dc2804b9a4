import { describe, expect } from "vitest";
import { isAppError } from "../errors";
import { asUserId } from "../ids";
import { databaseTest } from "../testing/fixtures";
import { createTestPerson } from "../testing/people";
import { newTestSession } from "../testing/runtime-harness";
import { setToolMode } from "../team/tool-policy";
import { createApiToken, revokeApiToken } from "./api-tokens";
import { auditCsv, listAudit, type AuditEntry } from "./audit";
import { setRole } from "./team-people";
import { createInvite } from "./invites";

// The audit log: security-relevant team actions recorded with the action (others not), API
// tokens with the token; the instance owner reads everything, a team owner their teams' only,
// anyone else nothing; filters and pages; rows cannot be changed or removed; CSV is safe to open.

const it = databaseTest();

describe("the audit log", () => {
  it("records what changes who may do what, shows each owner their teams', and refuses changes", async ({ db }) => {
    const boss = { ...(await createTestPerson(db, "Ida Instance")), instanceOwner: true };
    const olga = await createTestPerson(db, "Olga Owner");
    const mike = await createTestPerson(db, "Mike Member");
    const mine = await newTestSession(db, "Olga's team", olga);
    const theirs = await newTestSession(db, "Another team", boss);

    await setToolMode(db, { person: olga, teamId: mine }, ["workspace_write"], "workspace_write", "ask");
    await db.teamPerson.create({ data: { teamId: mine, userId: mike.id, role: "viewer" } });
    await setRole(db, olga, mine, asUserId(mike.id), "member");
    await createInvite(db, olga, mine, { role: "viewer", expiresInHours: 24 });
    await setToolMode(db, { person: boss, teamId: theirs }, ["workspace_write"], "workspace_write", "off");
    const token = await createApiToken(db, asUserId(olga.id), "ci");
    await revokeApiToken(db, asUserId(olga.id), token.id);

    const kinds = (entries: AuditEntry[]) => entries.map((e) => `${e.kind}:${e.teamTitle ?? "-"}`);
    const all = await listAudit(db, boss, {}, { limit: 100 });
    // Newest first; the viewer added by a row of its own (not an action) is not there.
    expect(kinds(all.entries)).toEqual([
      "api_token_revoked:-",
      "api_token_created:-",
      "tool_policy_set:Another team",
      "invite_created:Olga's team",
      "role_changed:Olga's team",
      "tool_policy_set:Olga's team",
      "team_created:Another team",
      "team_created:Olga's team",
    ]);
    expect(all.entries.find((e) => e.kind === "role_changed")).toMatchObject({ actorName: "Olga Owner", teamId: mine });
    expect(all.entries.find((e) => e.kind === "api_token_created")).toMatchObject({ actorId: olga.id, detail: { tokenId: token.id, name: "ci" } });

    // A team owner: their team's entries only (not another team's, not anyone's tokens).
    const hers = await listAudit(db, olga, {}, { limit: 100 });
    expect(new Set(hers.entries.map((e) => e.teamId))).toEqual(new Set([mine]));
    expect(hers.entries.some((e) => e.kind === "tool_policy_set" && e.detail.mode === "ask")).toBe(true);
    expect(await listAudit(db, olga, { teamId: theirs }, { limit: 100 })).toEqual({ entries: [], nextBefore: null });
    // Anyone else: refused.
    expect(isAppError(await listAudit(db, mike, {}, { limit: 10 }).catch((e: unknown) => e), "AUDIT_FORBIDDEN")).toBe(true);

    // Filters and pages.
    expect(kinds((await listAudit(db, boss, { kind: "tool_policy_set" }, { limit: 100 })).entries)).toEqual(["tool_policy_set:Another team", "tool_policy_set:Olga's team"]);
    expect((await listAudit(db, boss, { actor: "olga", teamId: mine }, { limit: 100 })).entries.every((e) => e.actorName === "Olga Owner")).toBe(true);
    expect((await listAudit(db, boss, { from: new Date(Date.now() + 60_000) }, { limit: 100 })).entries).toEqual([]);
    const first = await listAudit(db, boss, {}, { limit: 2 });
    const second = await listAudit(db, boss, {}, { before: first.nextBefore!, limit: 2 });
    expect([...first.entries, ...second.entries].map((e) => e.id)).toEqual(all.entries.slice(0, 4).map((e) => e.id));

    // Append-only, whoever asks.
    await expect(db.$executeRaw`UPDATE audit_log SET actor_name = 'someone else'`).rejects.toThrow(/append-only/);
    await expect(db.$executeRaw`DELETE FROM audit_log`).rejects.toThrow(/append-only/);
    expect((await listAudit(db, boss, {}, { limit: 100 })).entries).toHaveLength(all.entries.length);
  });

  it("CSV: a header, fields quoted when they must be, and formulas defused", () => {
    const at = new Date("2026-12-04T10:00:00.000Z");
    const csv = auditCsv([
      { id: "1", at, kind: "sign_in_failed", actorId: null, actorName: '=HYPERLINK("x"), ok', teamId: null, teamTitle: null, detail: { reason: "INVALID" }, ip: "10.0.0.1" },
    ]);
    expect(csv).toBe(
      'time,kind,actor,actor_id,team,team_id,ip,detail\r\n2026-12-04T10:00:00.000Z,sign_in_failed,"\'=HYPERLINK(""x""), ok",,,,10.0.0.1,"{""reason"":""INVALID""}"\r\n',
    );
  });
});
