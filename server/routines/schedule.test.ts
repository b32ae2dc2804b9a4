import { describe, expect, it } from "vitest";
import { isAppError } from "../errors";
import { nextTimes, type Schedule } from "./schedule";

// Schedules are pure: the times a cron expression in a time zone, or an interval, gives after a
// moment, across daylight-saving changes; what does not parse is a typed error naming its field.

const iso = (s: Schedule, after: string, n = 3) => nextTimes(s, new Date(after), n).map((d) => d.toISOString());

function fieldOf(f: () => unknown): string | null {
  try {
    f();
    return null;
  } catch (e) {
    if (!isAppError(e, "ROUTINE_INVALID_SCHEDULE")) throw e;
    return String((e.details as { field?: string }).field);
  }
}

describe("routine schedules", () => {
  it("read a cron expression in its time zone, daylight-saving changes included", () => {
    const weekdays = { kind: "cron", cron: "0 9 * * 1-5", timeZone: "America/New_York" } as const;
    // 09:00 in New York is 13:00 UTC before the clocks go back on 1 November 2026, 14:00 after.
    expect(iso(weekdays, "2026-10-29T00:00:00Z")).toEqual(["2026-10-29T13:00:00.000Z", "2026-10-30T13:00:00.000Z", "2026-11-02T14:00:00.000Z"]);
    // 02:30 does not exist in Berlin on 29 March 2026 (02:00 → 03:00): that day it runs at 03:00, once.
    const night = { kind: "cron", cron: "30 2 * * *", timeZone: "Europe/Berlin" } as const;
    expect(iso(night, "2026-03-28T00:00:00Z")).toEqual(["2026-03-28T01:30:00.000Z", "2026-03-29T01:00:00.000Z", "2026-03-30T00:30:00.000Z"]);
    // 02:30 happens twice on 25 October 2026 (03:00 → 02:00): it runs once.
    expect(iso(night, "2026-10-24T12:00:00Z", 2)).toEqual(["2026-10-25T00:30:00.000Z", "2026-10-26T01:30:00.000Z"]);
  });

  it("run intervals on a fixed grid, strictly after the moment", () => {
    expect(iso({ kind: "interval", every: 30, unit: "minutes" }, "2026-12-08T10:14:00Z")).toEqual(["2026-12-08T10:30:00.000Z", "2026-12-08T11:00:00.000Z", "2026-12-08T11:30:00.000Z"]);
    expect(iso({ kind: "interval", every: 2, unit: "hours" }, "2026-12-08T10:00:00Z", 1)).toEqual(["2026-12-08T12:00:00.000Z"]);
  });

  it("refuse what does not parse with ROUTINE_INVALID_SCHEDULE naming the field", () => {
    expect(fieldOf(() => nextTimes({ kind: "cron", cron: "61 * * * *", timeZone: "UTC" }, new Date(), 1))).toBe("cron");
    expect(fieldOf(() => nextTimes({ kind: "cron", cron: "* * *", timeZone: "UTC" }, new Date(), 1))).toBe("cron");
    expect(fieldOf(() => nextTimes({ kind: "cron", cron: "0 0 * * * *", timeZone: "UTC" }, new Date(), 1))).toBe("cron");
    expect(fieldOf(() => nextTimes({ kind: "cron", cron: "0 9 * * *", timeZone: "Mars/Olympus" }, new Date(), 1))).toBe("timeZone");
    expect(fieldOf(() => nextTimes({ kind: "cron", cron: "0 0 30 2 *", timeZone: "UTC" }, new Date(), 1))).toBe("cron");
    expect(fieldOf(() => nextTimes({ kind: "cron", cron: "0 9 * * *", timeZone: "UTC" }, new Date(), 1))).toBeNull();
  });
});
