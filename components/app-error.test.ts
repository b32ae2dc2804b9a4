import { TRPCClientError } from "@trpc/client";
import { describe, expect, it } from "vitest";
import type { AppRouter } from "./api-types";
import { appCodeOf } from "./app-error";

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
