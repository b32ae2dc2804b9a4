import { describe, expect, it } from "vitest";
import { findCycle } from "./graph";

const edges = (pairs: Record<number, number[]>) => new Map(Object.entries(pairs).map(([k, v]) => [Number(k), v]));

describe("findCycle", () => {
  it("accepts dependencies that keep the graph acyclic", () => {
    expect(findCycle(edges({ 1: [], 2: [1], 3: [2] }), 4, [3, 1])).toBeNull();
    // A diamond is not a cycle.
    expect(findCycle(edges({ 1: [], 2: [1], 3: [1] }), 4, [2, 3])).toBeNull();
  });

  it("refuses a task that waits for itself", () => {
    expect(findCycle(edges({}), 5, [5])).toEqual([5, 5]);
  });

  it("returns the closing path, each task waiting for the next", () => {
    // 3 waits for 2, 2 for 1; making 1 wait for 3 closes 1 → 3 → 2 → 1.
    expect(findCycle(edges({ 1: [], 2: [1], 3: [2] }), 1, [3])).toEqual([1, 3, 2, 1]);
  });

  it("uses the new edges of the task, not its stored ones", () => {
    // Stored: 1 waits for 2. Replacing 1's blockers with [] cannot close a cycle through 2.
    expect(findCycle(edges({ 1: [2], 2: [] }), 2, [1])).toEqual([2, 1, 2]);
    expect(findCycle(edges({ 1: [2], 2: [] }), 1, [])).toBeNull();
  });
});
