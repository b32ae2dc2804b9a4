import type { DbOrTx } from "../db/client";
import type { ContextProvider } from "../runtime/context-registry";
import { membershipOf } from "./roster";

// team:identity (seed 004): the member's role, name, team and how to address peers, rendered
// from current membership before every step. Required: optional-context switches cannot drop it.

export const TEAM_IDENTITY = "team:identity";

export function teamIdentityProvider(db: DbOrTx): ContextProvider {
  return {
    name: TEAM_IDENTITY,
    required: true,
    async render({ sessionId }) {
      const me = await membershipOf(db, sessionId);
      const team = await db.session.findUnique({ where: { id: me.teamId }, select: { title: true } });
      const teamLine = `Team: "${team?.title ?? me.teamId}" (team id ${me.teamId}).`;
      if (me.isLead) {
        return [
          "Role: lead. Your name in the team is `lead`.",
          teamLine,
          "You lead this team: spawn teammates with spawn_teammate, address them by their names with send_message, and wait for the teammates you need before your final answer.",
        ].join("\n");
      }
      return [
        `Role: teammate. Your name in the team is \`${me.name}\`.`,
        teamLine,
        "Address the Lead as `lead` and other teammates by their names with send_message; use list_agents to see who is on the team.",
      ].join("\n");
    },
  };
}
