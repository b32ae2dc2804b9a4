import { describe, expect, it } from "vitest";
import { REDACTED, redactSecrets } from "./redact";

describe("redactSecrets", () => {
  it("removes configured secrets verbatim, whatever their shape", () => {
    expect(redactSecrets("key was hunter2-local-key!", ["hunter2-local-key"])).toBe(`key was ${REDACTED}!`);
  });

  it("removes anything shaped like a provider key, whole or masked", () => {
    const samples = [
      "Incorrect API key provided: sk-proj-abcdefghijklmnopqrstuvwxyz012345.",
      "Incorrect API key provided: sk-abc1***********************wxyz.",
      "invalid x-api-key sk-ant-api03-AAAABBBBCCCCDDDD_eeee",
      "Authorization: Bearer abc.def.ghi-jklmnop",
      "gsk_0123456789abcdefABCDEF is not valid",
    ];
    for (const s of samples) {
      const out = redactSecrets(s);
      expect(out, s).toContain(REDACTED);
      expect(out, s).not.toMatch(/sk-[a-z0-9]|abc\.def|gsk_0/i);
    }
  });

  it("removes credentials written into a URL", () => {
    expect(redactSecrets("Request cannot be constructed from a URL that includes credentials: https://me:hunter2@llm.internal/v1/chat")).toBe(
      `Request cannot be constructed from a URL that includes credentials: https://${REDACTED}@llm.internal/v1/chat`,
    );
    expect(redactSecrets("fetch http://token123@gw.local:8080/v1 failed")).toBe(`fetch http://${REDACTED}@gw.local:8080/v1 failed`);
    expect(redactSecrets("see https://example.com/a@b and mail me@example.com")).toBe("see https://example.com/a@b and mail me@example.com");
  });

  it("leaves ordinary text alone", () => {
    const text = "upstream exploded (HTTP 500): ask-me-later, task-1, risk-free";
    expect(redactSecrets(text, [undefined, ""])).toBe(text);
  });
});
