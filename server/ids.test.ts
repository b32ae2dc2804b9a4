import { describe, expect, it } from "vitest";
import { newMessageId } from "./ids";

describe("newId", () => {
  it("gives distinct, time-ordered ids of the documented shape across refills of its random pool", () => {
    // 5 random bytes each: 2,000 ids draw the 4 KB pool more than twice over.
    const ids = Array.from({ length: 2_000 }, () => newMessageId());
    for (const id of ids) expect(id).toMatch(/^msg_[0-9a-f]{12}[0-9a-f]{10}$/);
    expect(new Set(ids).size).toBe(ids.length);
    expect(new Set(ids.map((id) => id.slice(-10))).size).toBe(ids.length);
    expect([...ids].map((id) => id.slice(4, 16)).every((t, i, all) => i === 0 || t >= all[i - 1]!)).toBe(true);
  });
});
