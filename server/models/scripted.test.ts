import { describe, expect, it, vi } from "vitest";
import { formatRuntimeContext } from "./runtime-context";
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

describe("the keyless model's output limit", () => {
  const collect = async (model: ScriptedModel, maxOutputTokens?: number) => {
    const request = { system: "sys", messages: [{ role: "user" as const, text: "Write a long plan, please." }], tools: [], purpose: "step" as const, ...(maxOutputTokens ? { maxOutputTokens } : {}) };
    let text = "";
    const calls: unknown[] = [];
    let usage: { inputTokens: number; outputTokens: number } | null = null;
    for await (const c of model.stream(request, new AbortController().signal)) {
      if (c.type === "text-delta") text += c.text;
      else if (c.type === "tool-call") calls.push(c.call);
      else if (c.type === "finish") usage = c.usage;
    }
    return { text, calls, usage: usage! };
  };

  it("stops its text at the request's maxOutputTokens, as a provider does, and reports what it produced", async () => {
    const reply = { text: "word ".repeat(400).trim(), toolCalls: [{ toolName: "current_time", input: {} }] };
    const model = new ScriptedModel({ delayMs: 0, playbook: () => reply });
    const whole = await collect(model);
    expect(whole.text).toBe(reply.text);
    expect(whole.calls).toHaveLength(1);

    const capped = await collect(model, 100);
    expect(capped.usage.outputTokens).toBeLessThanOrEqual(100);
    expect(capped.usage.outputTokens).toBeGreaterThan(90);
    expect(reply.text.startsWith(capped.text)).toBe(true);
    expect(capped.text.endsWith("word")).toBe(true);
    // The calls did not fit: none is sent (a provider's would be cut half-written).
    expect(capped.calls).toEqual([]);
    // The model's own limit applies without one in the request.
    const long = new ScriptedModel({ delayMs: 0, playbook: () => ({ text: "word ".repeat(2_000) }) });
    expect((await collect(long)).usage.outputTokens).toBeLessThanOrEqual(model.maxOutputTokens);
  });

  it("counts the tool list in its input, as a provider bills it", async () => {
    const model = new ScriptedModel({ delayMs: 0, playbook: () => ({ text: "ok" }) });
    const tools = [{ name: "t", description: "d".repeat(400), inputSchema: { type: "object" } }];
    const base = { system: "s", messages: [{ role: "user" as const, text: "hi" }], purpose: "step" as const };
    const usageOf = async (request: typeof base & { tools: typeof tools }) => {
      for await (const c of model.stream(request, new AbortController().signal)) if (c.type === "finish") return c.usage;
      throw new Error("no usage");
    };
    const chars = (t: typeof tools) => base.system.length + JSON.stringify(t).length + JSON.stringify(base.messages).length;
    expect((await usageOf({ ...base, tools })).inputTokens).toBe(Math.ceil(chars(tools) / 4));
    expect((await usageOf({ ...base, tools: [] })).inputTokens).toBe(Math.ceil(chars([]) / 4));
  });
});
