import { Cron } from "croner";
import { z } from "zod";
import { AppError } from "../errors";

// When a routine runs (SPEC.md §21): a five-field cron expression read in an IANA time zone
// (croner: daylight-saving changes follow the zone; a time the clock skips runs at the first
// time after it), or every N minutes or hours. Pure: no clock but the one passed in.

export const INTERVAL_UNITS = ["minutes", "hours"] as const;
const UNIT_MS = { minutes: 60_000, hours: 3_600_000 } as const;

export const ScheduleSchema = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("cron"), cron: z.string().trim().min(1).max(100), timeZone: z.string().trim().min(1).max(64) }),
  z.object({ kind: z.literal("interval"), every: z.number().int().min(1).max(10_000), unit: z.enum(INTERVAL_UNITS) }),
]);
export type Schedule = z.infer<typeof ScheduleSchema>;

/** The shortest time between two runs: a schedule that runs more often is refused. */
const MIN_GAP_MS = 60_000;

function invalid(field: "cron" | "timeZone" | "every", message: string): AppError {
  return new AppError("ROUTINE_INVALID_SCHEDULE", message, { field });
}

function cronOf(s: Extract<Schedule, { kind: "cron" }>): Cron {
  try {
    new Intl.DateTimeFormat("en", { timeZone: s.timeZone });
  } catch {
    throw invalid("timeZone", `"${s.timeZone}" is not an IANA time zone (for example Europe/Berlin or UTC)`);
  }
  // Five fields only: croner also reads seconds (six) and years (seven), which would run too often or never.
  if (s.cron.split(/\s+/).length !== 5) throw invalid("cron", "A cron expression has five fields: minute, hour, day of month, month, day of week");
  try {
    return new Cron(s.cron, { timezone: s.timeZone, mode: "5-part" });
  } catch (e) {
    throw invalid("cron", `Invalid cron expression: ${e instanceof Error ? e.message.replace(/^CronPattern: /, "") : String(e)}`);
  }
}

/**
 * The next `n` times after `after` (exclusive), in order. Throws ROUTINE_INVALID_SCHEDULE (with
 * the field) for a cron or time zone that does not parse, or one that never runs again.
 */
export function nextTimes(s: Schedule, after: Date, n: number): Date[] {
  if (s.kind === "interval") {
    const step = s.every * UNIT_MS[s.unit];
    if (step < MIN_GAP_MS) throw invalid("every", "A routine runs at most once a minute");
    // Times on a grid from the epoch, so "every 30 minutes" runs at :00 and :30 wherever it starts.
    const first = Math.floor(after.getTime() / step) * step + step;
    return Array.from({ length: n }, (_, i) => new Date(first + i * step));
  }
  const times = cronOf(s).nextRuns(n, after);
  if (times.length === 0) throw invalid("cron", "This cron expression never runs again");
  return times;
}

/** The first time after `after`. */
export const nextTime = (s: Schedule, after: Date): Date => nextTimes(s, after, 1)[0]!;
