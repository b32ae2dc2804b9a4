import { describe, expect, it } from "vitest";
import { asSessionId } from "../ids";
import { ContextRegistry } from "./context-registry";
import { formatRuntimeContext, isRuntimeContext, parseRuntimeContext, RUNTIME_CONTEXT_HEADER, type ContextSection } from "../models/runtime-context";

// The runtime-context text format: written by the registry, read back by the keyless model.

const scope = { sessionId: asSessionId("ses_context_format"), now: new Date("2030-01-02T03:04:05Z") };

describe("runtime-context text", () => {
  it("reads back exactly the sections it was written from", () => {
    const sections: ContextSection[] = [
      { name: "team:identity", text: "Role: lead. Your name in the team is `lead`.\nTeam: \"T\" (team id ses_1)." },
      { name: "clock:date", text: "Today is 2030-01-02 (UTC)." },
      { name: "x", text: "a <b>tag</b> and </y>\n\nblank lines" },
    ];
    const text = formatRuntimeContext(sections);
    expect(text.split("\n")[0]).toBe(RUNTIME_CONTEXT_HEADER);
    expect(isRuntimeContext(text)).toBe(true);
    expect(parseRuntimeContext(text)).toEqual(sections);
    expect(parseRuntimeContext(formatRuntimeContext([]))).toEqual([]);
  });

  it("is what the registry renders, sections trimmed and in registration order", async () => {
    const registry = new ContextRegistry([
      { name: "b:first", required: true, render: () => "  one\n" },
      { name: "a:empty", required: true, render: () => "   " },
      { name: "c:optional", required: false, render: () => "two" },
    ]);
    const text = await registry.renderSnapshot(scope, { includeOptional: true });
    expect(text).toBe(`${RUNTIME_CONTEXT_HEADER}\n<b:first>\none\n</b:first>\n<c:optional>\ntwo\n</c:optional>`);
    expect(parseRuntimeContext(text!)).toEqual([
      { name: "b:first", text: "one" },
      { name: "c:optional", text: "two" },
    ]);
    expect(parseRuntimeContext((await registry.renderSnapshot(scope, { includeOptional: false }))!)).toEqual([{ name: "b:first", text: "one" }]);
  });

  it("reads nothing from other text or a malformed snapshot", () => {
    expect(isRuntimeContext("Runtime context (current):\n## team:identity")).toBe(false);
    expect(parseRuntimeContext("Runtime context (current):\n<a>\nx\n</a>")).toBeNull();
    expect(parseRuntimeContext(`hello ${RUNTIME_CONTEXT_HEADER}`)).toBeNull();
    expect(parseRuntimeContext(`${RUNTIME_CONTEXT_HEADER}\n<a>\nunclosed`)).toBeNull();
    expect(parseRuntimeContext(`${RUNTIME_CONTEXT_HEADER}\n<a>\nx\n</b>`)).toBeNull();
    expect(parseRuntimeContext(`${RUNTIME_CONTEXT_HEADER}\n<a>\nx\n</a>\nstray line`)).toBeNull();
  });
});
