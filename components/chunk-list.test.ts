import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { emptyList, listAt, listFrom, listItems, listSlice, listToArray, ListBuilder } from "./chunk-list";

type Op = { op: "push"; v: number } | { op: "set"; at: number; v: number } | { op: "remove"; at: number } | { op: "done" };

describe("ChunkList", () => {
  it("behaves like an array under pushes, sets and removals, across chunk edges, and never changes a list already built", () => {
    const op = fc.oneof(
      { weight: 6, arbitrary: fc.record({ op: fc.constant("push" as const), v: fc.integer() }) },
      { weight: 2, arbitrary: fc.record({ op: fc.constant("set" as const), at: fc.nat(), v: fc.integer() }) },
      { weight: 1, arbitrary: fc.record({ op: fc.constant("remove" as const), at: fc.nat() }) },
      { weight: 1, arbitrary: fc.record({ op: fc.constant("done" as const) }) },
    );
    fc.assert(
      fc.property(fc.array(fc.integer(), { maxLength: 700 }), fc.array(op as fc.Arbitrary<Op>, { maxLength: 400 }), (start, ops) => {
        const model = [...start];
        let list = listFrom(start);
        const built: [ReturnType<typeof listFrom<number>>, number[]][] = [[list, [...model]]];
        let b = new ListBuilder(list);
        for (const o of ops) {
          if (o.op === "push") {
            b.push(o.v);
            model.push(o.v);
          } else if (o.op === "set" && model.length > 0) {
            b.set(o.at % model.length, o.v);
            model[o.at % model.length] = o.v;
          } else if (o.op === "remove" && model.length > 0) {
            b.removeAt(o.at % model.length);
            model.splice(o.at % model.length, 1);
          } else if (o.op === "done") {
            list = b.done();
            built.push([list, [...model]]);
            b = new ListBuilder(list);
          }
          expect(b.length).toBe(model.length);
        }
        list = b.done();
        built.push([list, [...model]]);
        for (const [l, want] of built) {
          expect(listToArray(l)).toEqual(want);
          expect([...listItems(l)]).toEqual(want);
          expect(l.length).toBe(want.length);
        }
        expect(listSlice(list, 3, 300)).toEqual(model.slice(3, 300));
        expect(listAt(list, model.length - 1)).toBe(model.at(-1));
        expect(listAt(list, model.length)).toBeUndefined();
      }),
      { numRuns: 200 },
    );
  });

  it("starts empty", () => {
    expect(listToArray(emptyList())).toEqual([]);
    expect(() => new ListBuilder(emptyList()).set(0, 1)).toThrow(RangeError);
  });
});
