import type { SqlRunner } from "../db/sql";
import type { ContextProvider } from "../runtime/context-registry";
import { membershipAndTeamTitle } from "../members/membership";

// team:identity (SPEC.md §5, the identity decision): the member's role, name, team and how to
// address peers, rendered from current membership before every step. Required: optional-context
// switches cannot drop it.

export const TEAM_IDENTITY = "team:identity";

export interface Identity {
  role: "lead" | "teammate";
  name: string;
  teamTitle: string;
  teamId: string;
}

const ROLE_LINE = /Role: (lead|teammate)\. Your name in the team is `([^`]+)`\./;

/** The identity section's text. parseIdentity reads it back. */
export function formatIdentity(who: Identity): string {
  const teamLine = `Team: "${who.teamTitle}" (team id ${who.teamId}).`;
  if (who.role === "lead") {
    return [
      "Role: lead. Your name in the team is `lead`.",
      teamLine,
      "You lead this team: spawn teammates with spawn_teammate, address them by their names with send_message, and wait for the teammates you need before your final answer.",
    ].join("\n");
  }
  return [
    `Role: teammate. Your name in the team is \`${who.name}\`.`,
    teamLine,
    "Address the Lead as `lead` and other teammates by their names with send_message; use list_agents to see who is on the team.",
  ].join("\n");
}

/** Role and name from any text that contains an identity section, or null. */
export function parseIdentity(text: string): Pick<Identity, "role" | "name"> | null {
  const m = ROLE_LINE.exec(text);
  return m ? { role: m[1] as Identity["role"], name: m[2]! } : null;
}

export function teamIdentityProvider(db: SqlRunner): ContextProvider {
  return {
    name: TEAM_IDENTITY,
    required: true,
    async render({ sessionId, db: within }) {
      const read = within ?? db;
      const { me, teamTitle } = await membershipAndTeamTitle(read, sessionId);
      return formatIdentity({
        role: me.isLead ? "lead" : "teammate",
        name: me.name,
        teamTitle: teamTitle ?? me.teamId,
        teamId: me.teamId,
      });
    },
  };
}
