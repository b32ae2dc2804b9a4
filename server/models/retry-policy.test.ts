import { describe, expect, it } from "vitest";
import { decide, DEFAULT_RETRY_POLICY, failureReason, isTransient, retryAfterMs, type Failure } from "./retry-policy";

// The retry policy of SPEC.md §15 as pure decisions: what is retried, how long to wait, when to give up.

const http = (status: number, headers?: Record<string, string>, message?: string): Failure => ({ kind: "http", status, headers, message });
const half = () => 0.5;

describe("the retry policy", () => {
  it("retries rate limits, server errors, connection failures and a silent provider; nothing else", () => {
    for (const f of [http(429), http(500), http(502), http(503), http(529), http(408), { kind: "connection" } as const, { kind: "first-token-timeout", afterMs: 30_000 } as const]) {
      expect(isTransient(f), JSON.stringify(f)).toBe(true);
    }
    for (const f of [http(400), http(401), http(403), http(404), http(422)]) expect(isTransient(f), String(f.kind)).toBe(false);
    expect(decide(http(401), 1)).toEqual({ retry: false, permanent: true, reason: "401 not authorised (check the API key)" });
    expect(decide(http(400, {}, "This model's maximum context length is 8192 tokens"), 1)).toEqual({ retry: false, permanent: true, reason: "400 context too long" });
  });

  it("backs off exponentially with full jitter, capped, and gives up after maxRetries", () => {
    const policy = { maxRetries: 3, baseDelayMs: 1000, maxDelayMs: 3000, maxRetryAfterMs: 10_000 };
    expect([1, 2, 3].map((n) => decide(http(503), n, policy, { random: half }))).toEqual([
      { retry: true, delayMs: 500, reason: "503 unavailable" },
      { retry: true, delayMs: 1000, reason: "503 unavailable" },
      { retry: true, delayMs: 1500, reason: "503 unavailable" },
    ]);
    expect(decide(http(503), 1, policy, { random: () => 0 })).toMatchObject({ delayMs: 0 });
    expect(decide(http(503), 3, policy, { random: () => 0.999 })).toMatchObject({ delayMs: 2997 });
    expect(decide(http(503), 4, policy, { random: half })).toEqual({ retry: false, permanent: false, reason: "503 unavailable; gave up after 4 attempts" });
    expect(decide(http(503), 1, { ...policy, maxRetries: 0 })).toMatchObject({ retry: false });
  });

  it("honours Retry-After in seconds, as a date, and retry-after-ms, when it asks for longer than the backoff", () => {
    const now = Date.parse("2026-12-01T12:00:00Z");
    expect(retryAfterMs({ "Retry-After": "7" })).toBe(7000);
    expect(retryAfterMs({ "retry-after": "Tue, 01 Dec 2026 12:00:30 GMT" }, now)).toBe(30_000);
    expect(retryAfterMs({ "retry-after": "Tue, 01 Dec 2026 11:00:00 GMT" }, now)).toBe(0);
    expect(retryAfterMs({ "retry-after-ms": "1500", "retry-after": "9" })).toBe(1500);
    expect(retryAfterMs({ "retry-after": "soon" })).toBeNull();
    expect(retryAfterMs(undefined)).toBeNull();
    expect(decide(http(429, { "retry-after": "5" }), 1, DEFAULT_RETRY_POLICY, { random: half })).toEqual({ retry: true, delayMs: 5000, reason: "429 rate limited" });
    // A backoff longer than what the provider asked for stands.
    expect(decide(http(429, { "retry-after": "0" }), 3, DEFAULT_RETRY_POLICY, { random: half })).toMatchObject({ delayMs: 2000 });
    // Longer than the longest backoff, within what Retry-After is honoured for: waited.
    expect(decide(http(429, { "retry-after": "90" }), 1, DEFAULT_RETRY_POLICY, { random: half })).toMatchObject({ retry: true, delayMs: 90_000 });
    // Asked to wait longer than the policy ever would: treated as retries exhausted.
    expect(decide(http(429, { "retry-after": "3600" }), 1)).toEqual({ retry: false, permanent: false, reason: "429 rate limited; the provider asked to wait 3600 s" });
  });

  it("names each failure readably for the transcript", () => {
    expect(failureReason({ kind: "connection" })).toBe("connection failed");
    expect(failureReason({ kind: "first-token-timeout", afterMs: 30_000 })).toBe("no first token after 30 s");
    expect(failureReason(http(502))).toBe("502 server error");
    expect(failureReason(http(418))).toBe("418 request refused");
  });
});
