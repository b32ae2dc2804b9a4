import { z } from "zod";
import { AppError } from "../errors";

// Team roles and what each may do (docs/SPEC.md §13): the one table the access check and the
// in-transaction re-check both read.

export const TeamRoleSchema = z.enum(["owner", "member", "viewer"]);
export type TeamRole = z.infer<typeof TeamRoleSchema>;
/** What a request needs: to watch (any role), to act (owner, member), or to manage people (owner). */
export type Need = "view" | "act" | "own";

const ALLOWED: Record<Need, readonly TeamRole[]> = {
  view: ["owner", "member", "viewer"],
  act: ["owner", "member"],
  own: ["owner"],
};

/** Null when `role` may do what `need` asks; otherwise the FORBIDDEN refusal. */
export function refusalFor(need: Need, role: TeamRole): AppError | null {
  if (ALLOWED[need].includes(role)) return null;
  return new AppError("FORBIDDEN", need === "own" ? "Only a team owner can do this" : "A viewer watches and cannot act in this team", { role });
}
