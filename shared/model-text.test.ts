import { describe, expect, it } from "vitest";
import { unlistedModelText } from "./model-text";

describe("unlistedModelText", () => {
  it("names a model the server no longer offers by its id and its provider, never as provider:model", () => {
    expect(unlistedModelText({ provider: "openai-compatible", model: "gpt-4o" })).toBe("gpt-4o (OpenAI-compatible)");
    expect(unlistedModelText({ provider: "anthropic", model: "claude-3-5-sonnet-20241022" })).toBe("claude-3-5-sonnet-20241022 (Anthropic)");
    expect(unlistedModelText({ provider: "scripted", model: "keyless" })).toBe("Keyless scripted model");
  });
});
