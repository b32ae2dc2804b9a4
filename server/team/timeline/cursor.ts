import { z } from "zod";
import { int4 } from "../../../shared/input-guard";

/** Seqs, the mailbox's seq and workspace changes are int4 columns; action ids are bigint. */
const Pos = int4();
const ActionPos = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);
/** Up to the year 9999: `t` becomes a timestamp parameter. */
const TimePos = z.number().int().min(0).max(253_402_300_799_999);

/**
 * One position per source: `s` a session's seq (by session id), `m` the mailbox's seq, `a` the
 * action record's id, `w` the workspace's change; `t` the time (ms) of the read that made it. An earlier-cursor bounds
 * from above (exclusive; a source missing from it has nothing earlier), a live cursor from
 * below (a session missing from it — a new teammate — is read from its start).
 */
const CursorSchema = z
  .object({
    s: z.record(z.string().min(1).max(64), Pos).refine((r) => Object.keys(r).length <= 256, "too many sessions"),
    m: Pos,
    a: ActionPos,
    // Cursors from before file changes were on the timeline have none.
    w: Pos.default(0),
    t: TimePos,
  })
  .strict();
export type TimelineCursor = z.infer<typeof CursorSchema>;

export function encodeCursor(c: TimelineCursor): string {
  return Buffer.from(JSON.stringify(c)).toString("base64url");
}

/** A cursor as the API carries it (opaque base64url); anything else is INVALID_INPUT. */
export const TimelineCursorString = z
  .string()
  .min(1)
  .max(16 * 1024)
  .regex(/^[A-Za-z0-9_-]+$/, "not a timeline cursor")
  .transform((s, ctx) => {
    let json: unknown;
    try {
      json = JSON.parse(Buffer.from(s, "base64url").toString("utf8"));
    } catch {
      json = null;
    }
    const parsed = CursorSchema.safeParse(json);
    if (parsed.success) return parsed.data;
    ctx.addIssue({ code: "custom", message: "not a timeline cursor" });
    return z.NEVER;
  });
