// When a failed model request is worth another try, and how long to wait first (SPEC.md §15).
// Pure: the caller says what failed (an HTTP status with its headers, a connection error, a
// timeout before the first token) and gets a decision; the waiting and the transcript's
// "retrying in N s (reason)" belong to the caller. Errors arriving after text was streamed
// are never retried here: the caller keeps that text as an interrupted reply.

export interface RetryPolicy {
  /** Retries after the first attempt (0: never retry). */
  maxRetries: number;
  /** The first backoff; each retry doubles it, up to `maxDelayMs`. */
  baseDelayMs: number;
  maxDelayMs: number;
  /** The longest wait a provider's Retry-After is honoured for; asking for more is a refusal. */
  maxRetryAfterMs: number;
}

/** The settings the retry policy comes from (env.ts validates them). */
export interface RetrySettings {
  MODEL_MAX_RETRIES: number;
  MODEL_RETRY_BASE_MS: number;
  MODEL_RETRY_MAX_MS: number;
  MODEL_RETRY_AFTER_MAX_MS: number;
}

/** The retry policy the settings give. */
export function retryPolicyOf(env: RetrySettings): RetryPolicy {
  return { maxRetries: env.MODEL_MAX_RETRIES, baseDelayMs: env.MODEL_RETRY_BASE_MS, maxDelayMs: env.MODEL_RETRY_MAX_MS, maxRetryAfterMs: env.MODEL_RETRY_AFTER_MAX_MS };
}

export const DEFAULT_RETRY_POLICY: Readonly<RetryPolicy> = { maxRetries: 4, baseDelayMs: 1000, maxDelayMs: 60_000, maxRetryAfterMs: 300_000 };

/** What went wrong with one attempt, as the provider adapter saw it. */
export type Failure =
  | { kind: "http"; status: number; headers?: Record<string, string | undefined>; message?: string }
  | { kind: "connection"; message?: string }
  | { kind: "first-token-timeout"; afterMs: number };

export type Decision =
  | { retry: true; delayMs: number; reason: string }
  | { retry: false; reason: string; permanent: boolean };

const CONTEXT_TOO_LONG = /context[ _-]?length|context window|maximum context|too many tokens|prompt is too long/i;

/** A readable reason: "429 rate limited", "503 unavailable", "connection failed", … */
export function failureReason(f: Failure): string {
  if (f.kind === "connection") return "connection failed";
  if (f.kind === "first-token-timeout") return `no first token after ${Math.round(f.afterMs / 1000)} s`;
  if (f.status === 429) return "429 rate limited";
  if (f.status === 529) return "529 overloaded";
  if (f.status === 503) return "503 unavailable";
  if (f.status >= 500) return `${f.status} server error`;
  if (f.status === 401 || f.status === 403) return `${f.status} not authorised (check the API key)`;
  if (f.status === 400 && f.message && CONTEXT_TOO_LONG.test(f.message)) return "400 context too long";
  return `${f.status} request refused`;
}

/** Transient: rate limits, server errors, the connection, a silent provider. Anything else is permanent. */
export function isTransient(f: Failure): boolean {
  if (f.kind !== "http") return true;
  return f.status === 429 || f.status === 408 || f.status >= 500;
}

/**
 * `Retry-After` (RFC 9110): delay-seconds or an HTTP date; also the `retry-after-ms` header some
 * providers send. Null when absent or unreadable; never negative.
 */
export function retryAfterMs(headers: Record<string, string | undefined> | undefined, now = Date.now()): number | null {
  if (!headers) return null;
  const get = (name: string) => Object.entries(headers).find(([k]) => k.toLowerCase() === name)?.[1]?.trim();
  const ms = get("retry-after-ms");
  if (ms && /^\d+(\.\d+)?$/.test(ms)) return Math.max(0, Math.round(Number(ms)));
  const value = get("retry-after");
  if (!value) return null;
  if (/^\d+$/.test(value)) return Number(value) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}

/**
 * The decision after attempt number `attempt` (1 = the first request) failed. The backoff is
 * exponential with full jitter (`random` in [0, 1)), so agents that failed together do not
 * retry together; a provider's Retry-After wins when it asks for longer, up to maxRetryAfterMs
 * (a provider asking for more than that is treated as refusing: retries exhausted).
 */
export function decide(f: Failure, attempt: number, policy: RetryPolicy = DEFAULT_RETRY_POLICY, opts: { random?: () => number; now?: number } = {}): Decision {
  const reason = failureReason(f);
  if (!isTransient(f)) return { retry: false, reason, permanent: true };
  if (attempt > policy.maxRetries) return { retry: false, reason: `${reason}; gave up after ${attempt} attempts`, permanent: false };
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (attempt - 1));
  const jittered = Math.round((opts.random ?? Math.random)() * ceiling);
  const asked = f.kind === "http" ? retryAfterMs(f.headers, opts.now) : null;
  if (asked !== null && asked > policy.maxRetryAfterMs) {
    return { retry: false, reason: `${reason}; the provider asked to wait ${Math.ceil(asked / 1000)} s`, permanent: false };
  }
  return { retry: true, delayMs: Math.max(jittered, asked ?? 0), reason };
}
