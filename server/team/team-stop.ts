import { z } from "zod";
import { inTx, type Db } from "../db/client";
import { notifyActivity } from "../db/notify";
import { recordAction, type HumanActor } from "../people/actions";
import { asSessionId } from "../ids";
import { cancelPending } from "../runtime/approvals";

// "Stop the team": one action stops every member at once. Each running turn ends as a Stop
// ends it; every member's inbox is parked, so queued prompts and delivered mail stay where they
// are and nothing starts again until new input arrives (a person's prompt to the Lead, whose
// work then wakes the others). One attributed record names who stopped which members.

const Stopped = z.array(z.object({ id: z.string(), name: z.string(), working: z.boolean() }));

export async function stopTeam(db: Db, by: HumanActor): Promise<{ stopped: string[] }> {
  const { teamId } = by;
  return inTx(db, async (tx) => {
    const rows = Stopped.parse(
      await tx.$queryRaw`UPDATE sessions
        SET abort_request = CASE WHEN active_turn_id IS NULL THEN abort_request ELSE 'stop' END, parked = true
        WHERE team_id = ${teamId} AND status NOT IN ('provisioning', 'failed')
        RETURNING id, coalesce(member_name, 'lead') AS name, active_turn_id IS NOT NULL AS working`,
    );
    const stopped = rows.filter((r) => r.working).map((r) => r.name).sort();
    await recordAction(tx, by, "team_stopped", { detail: { members: stopped } });
    for (const r of rows) {
      if (!r.working) continue;
      await notifyActivity(tx, r.id, "abort");
      // A member parked for people: what it waits for ends cancelled, and a driver closes its turn.
      if ((await cancelPending(tx, asSessionId(r.id), { id: by.person.id, name: by.person.name })) > 0) await notifyActivity(tx, r.id, "inbox");
    }
    return { stopped };
  });
}
