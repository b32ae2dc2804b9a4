import { describe, expect, it, vi } from "vitest";
import { formatRuntimeContext } from "../runtime/context-registry";
import { defaultPlaybook, formatScriptedSummary, parseScriptedSummary, readTail, ScriptedModel, SUMMARY_PREFIX } from "./scripted";
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

describe("the keyless model's pacing", () => {
  const request = { system: "", messages: [{ role: "user" as const, text: "Plan a picnic" }], tools: [], purpose: "step" as const };

  it("streams a chunk per pause, many streams on shared timers, and stops at once on an abort", async () => {
    vi.useFakeTimers({ now: 1_000 });
    try {
      const model = new ScriptedModel({ delayMs: 25, playbook: () => ({ text: "one two three four" }) });
      const seen: number[][] = [[], [], []];
      const abort = new AbortController();
      const run = async (i: number, signal: AbortSignal) => {
        for await (const chunk of model.stream(request, signal)) if (chunk.type === "text-delta") seen[i]!.push(Date.now());
      };
      const timersBefore = vi.getTimerCount();
      const done = [run(0, new AbortController().signal), run(1, new AbortController().signal), run(2, abort.signal).catch((e: unknown) => e)];
      await vi.advanceTimersByTimeAsync(0);
      // Three streams due at the same mark: one timer.
      expect(vi.getTimerCount() - timersBefore).toBe(1);
      await vi.advanceTimersByTimeAsync(60);
      abort.abort();
      await vi.advanceTimersByTimeAsync(0);
      expect(await done[2]).toMatchObject({ name: "AbortError" });
      await vi.advanceTimersByTimeAsync(100);
      await Promise.all(done.slice(0, 2));
      expect(seen[0]).toEqual([1_025, 1_050, 1_075, 1_100]);
      expect(seen[1]).toEqual(seen[0]);
      expect(seen[2]).toEqual([1_025, 1_050]);
    } finally {
      vi.useRealTimers();
    }
  });
});
