import { TRPCClientError } from "@trpc/client";
import { describe, expect, it } from "vitest";
import type { AppRouter } from "./api-types";
import { accessLost, appCodeOf, feedRetries, retryDelayMs } from "./app-error";

describe("appCodeOf", () => {
  it("reads the app code the server's error formatter adds", () => {
    const error = TRPCClientError.from<AppRouter>({
      error: {
        code: -32009,
        message: "task-1 changed meanwhile",
        data: { code: "CONFLICT", httpStatus: 409, appCode: "TEAM_TASK_STALE_REVISION", details: null, zodError: null, path: "team.updateTask" },
      },
    });
    expect(appCodeOf(error)).toBe("TEAM_TASK_STALE_REVISION");
  });

  it("is null when the call got no answer from the app (network failure, no error at all)", () => {
    expect(appCodeOf(TRPCClientError.from<AppRouter>(new Error("fetch failed")))).toBeNull();
    expect(appCodeOf(null)).toBeNull();
    expect(appCodeOf(undefined)).toBeNull();
  });
});

const refusal = (
  appCode: "TEAM_NOT_FOUND" | "SESSION_NOT_FOUND" | "UNAUTHORIZED" | "FORBIDDEN" | "INTERNAL" | "INVALID_INPUT" | "UNAVAILABLE",
  code: "NOT_FOUND" | "UNAUTHORIZED" | "FORBIDDEN" | "INTERNAL_SERVER_ERROR" | "BAD_REQUEST" | "SERVICE_UNAVAILABLE",
) =>
  TRPCClientError.from<AppRouter>({
    error: { code: -32004, message: "refused", data: { code, httpStatus: 404, appCode, details: null, zodError: null, path: "team.live" } },
  });

describe("accessLost", () => {
  it("is true when the team is gone for the person or they are signed out", () => {
    expect(accessLost(refusal("TEAM_NOT_FOUND", "NOT_FOUND"))).toBe(true);
    expect(accessLost(refusal("SESSION_NOT_FOUND", "NOT_FOUND"))).toBe(true);
    expect(accessLost(refusal("UNAUTHORIZED", "UNAUTHORIZED"))).toBe(true);
  });

  it("is false for refusals a reconnect or another action may get past", () => {
    expect(accessLost(refusal("FORBIDDEN", "FORBIDDEN"))).toBe(false);
    expect(accessLost(refusal("INTERNAL", "INTERNAL_SERVER_ERROR"))).toBe(false);
    expect(accessLost(TRPCClientError.from<AppRouter>(new Error("fetch failed")))).toBe(false);
    expect(accessLost(null)).toBe(false);
  });
});

describe("feedRetries", () => {
  it("opens a feed again for as long as the app gives no answer (server away, a proxy's 503)", () => {
    expect(feedRetries(TRPCClientError.from<AppRouter>(new Error("EventSource failed")))).toBe(true);
  });

  it("while the app says its database is away (503 UNAVAILABLE)", () => {
    expect(feedRetries(refusal("UNAVAILABLE", "SERVICE_UNAVAILABLE"))).toBe(true);
  });

  it("never after a refusal another try would get again", () => {
    expect(feedRetries(refusal("TEAM_NOT_FOUND", "NOT_FOUND"))).toBe(false);
    expect(feedRetries(refusal("UNAUTHORIZED", "UNAUTHORIZED"))).toBe(false);
    expect(feedRetries(refusal("INVALID_INPUT", "BAD_REQUEST"))).toBe(false);
  });
});

describe("retryDelayMs", () => {
  it("doubles from 500 ms and stays at 5 s", () => {
    expect([0, 1, 2, 3, 4, 10].map(retryDelayMs)).toEqual([500, 1_000, 2_000, 4_000, 5_000, 5_000]);
  });
});
