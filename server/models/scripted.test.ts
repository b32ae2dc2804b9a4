import { describe, expect, it } from "vitest";
import { formatRuntimeContext } from "../runtime/context-registry";
import { defaultPlaybook, formatScriptedSummary, parseScriptedSummary, readTail, SUMMARY_PREFIX } from "./scripted";
import type { ModelMessage } from "./types";

// The keyless model's text contracts: the summaries it writes read back, and runtime-context
// snapshots are never taken for a prompt.

describe("scripted compaction summaries", () => {
  it("read back exactly the entries they were written from", () => {
    const lines = ["[user] hello", "[assistant] hi [called current_time {}]", "- a dash inside"];
    const text = formatScriptedSummary(lines);
    expect(text.startsWith(`${SUMMARY_PREFIX}\n`)).toBe(true);
    expect(parseScriptedSummary(text)).toEqual(lines);
    expect(parseScriptedSummary(formatScriptedSummary([]))).toEqual([]);
  });

  it("are what the default playbook writes for a summary request", () => {
    const transcript = "Summarise this conversation for your own future reference:\n\n[user] first\n[assistant] second";
    const { text } = defaultPlaybook({ system: "", messages: [{ role: "user", text: transcript }], tools: [], purpose: "summary" });
    expect(parseScriptedSummary(text)).toEqual(["[user] first", "[assistant] second"]);
  });

  it("read nothing from other text", () => {
    expect(parseScriptedSummary("hello")).toBeNull();
    expect(parseScriptedSummary(SUMMARY_PREFIX)).toBeNull();
    expect(parseScriptedSummary(`${SUMMARY_PREFIX}\nnot an entry`)).toBeNull();
  });
});

describe("readTail", () => {
  it("skips runtime-context snapshots among the new inputs", () => {
    const messages: ModelMessage[] = [
      { role: "assistant", text: "earlier", toolCalls: [] },
      { role: "user", text: "do this" },
      { role: "user", text: formatRuntimeContext([{ name: "clock:date", text: "Today is 2030-01-02 (UTC)." }]) },
    ];
    expect(readTail(messages)).toEqual({ inputs: ["do this"], toolResults: [] });
  });
});
