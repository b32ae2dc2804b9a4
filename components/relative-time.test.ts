import { describe, expect, it } from "vitest";
import { relativeTime } from "./relative-time";

describe("relativeTime", () => {
  const now = Date.parse("2026-12-04T12:00:00Z");
  const ago = (ms: number) => relativeTime(new Date(now - ms), now);
  it("reads recent times relatively and older ones as dates", () => {
    expect(ago(10_000)).toBe("just now");
    expect(ago(-5_000)).toBe("just now");
    expect(ago(4 * 60_000)).toBe("4 min ago");
    expect(ago(2 * 3_600_000)).toBe("2 h ago");
    expect(ago(30 * 3_600_000)).toBe("yesterday");
    expect(ago(3 * 86_400_000)).toBe("3 days ago");
    expect(ago(40 * 86_400_000)).toMatch(/\d/);
    expect(ago(40 * 86_400_000)).not.toMatch(/ago/);
  });
});
