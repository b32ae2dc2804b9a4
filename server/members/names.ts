import { z } from "zod";
import { LIMITS } from "../../shared/limits";

// Teammate names: lowercase kebab-case, 1–64 characters, never `lead` (the Lead's address)
// nor `unowned` (a task-board filter word).

export const LEAD_NAME = "lead";

export const MemberNameSchema = z
  .string()
  .max(LIMITS.memberNameChars, `at most ${LIMITS.memberNameChars} characters`)
  .regex(/^[a-z0-9]+(?:-[a-z0-9]+)*$/, "lowercase kebab-case: letters, digits and single hyphens, not at either end")
  .refine((n) => n !== LEAD_NAME, "`lead` is reserved for the Lead")
  // The task board's owner filter uses `unowned` for "no owner".
  .refine((n) => n !== "unowned", "`unowned` is reserved");
