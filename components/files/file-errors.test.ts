import { TRPCClientError } from "@trpc/client";
import { describe, expect } from "vitest";
import type { AppServer } from "~/server/main";
import { appServerTest } from "~/server/testing/app-tests";
import { httpClient } from "~/server/testing/http-client";
import { signUpOverHttp } from "~/server/testing/people";
import type { AppRouter } from "../api-types";
import { fileErrorText, staleOf } from "./file-errors";

// The Files view's reading of refused changes, against the real refusals a real server sends
// (its error formatter, codes and details), so a renamed detail breaks this test, not the page.

const it = appServerTest({ WORKSPACE_MAX_FILE_BYTES: "2048", WORKSPACE_MAX_FILES: "3" });

let client: ReturnType<typeof httpClient>;
let teamId: string;
it.beforeAll(async ({ server }: { server: AppServer }) => {
  client = httpClient(server.url, { cookie: (await signUpOverHttp(server.url, { name: "Fay Files" })).cookie });
  teamId = (await client.session.create.mutate({ title: "Refusals" })).id;
});

type Refusal = TRPCClientError<AppRouter>;
async function refused(p: Promise<unknown>): Promise<Refusal> {
  return p.then(
    () => {
      throw new Error("expected a refusal");
    },
    (e: unknown) => e as Refusal,
  );
}

describe("refused file changes, as the Files view reads them", () => {
  it("a stale version gives the current version and the normalised path; a deletion meanwhile gives 0", async () => {
    await client.workspace.write.mutate({ teamId, path: "notes/a.md", content: "one", expectedVersion: 0 });
    const exists = await refused(client.workspace.write.mutate({ teamId, path: "./notes/a.md", content: "mine", expectedVersion: 0 }));
    expect(staleOf(exists)).toEqual({ currentVersion: 1, path: "notes/a.md" });
    expect(fileErrorText(exists)).toBe("The file changed since you opened it. Nothing was saved.");

    await client.workspace.write.mutate({ teamId, path: "notes/a.md", content: "two", expectedVersion: 1 });
    const moved = await refused(client.workspace.delete.mutate({ teamId, path: "notes/a.md", expectedVersion: 1 }));
    expect(staleOf(moved)).toEqual({ currentVersion: 2, path: "notes/a.md" });

    await client.workspace.delete.mutate({ teamId, path: "notes/a.md", expectedVersion: 2 });
    const gone = await refused(client.workspace.write.mutate({ teamId, path: "notes/a.md", content: "mine", expectedVersion: 2 }));
    expect(staleOf(gone)).toEqual({ currentVersion: 0, path: "notes/a.md" });
    // Overwriting deliberately with the current version (0: no file) is accepted.
    expect(await client.workspace.write.mutate({ teamId, path: "notes/a.md", content: "mine", expectedVersion: 0 })).toMatchObject({ version: 4 });
  });

  it("a bad path says why, in the path rules' words or the clash's", async () => {
    const traversal = await refused(client.workspace.write.mutate({ teamId, path: "../x.md", content: "", expectedVersion: 0 }));
    expect(staleOf(traversal)).toBeNull();
    expect(fileErrorText(traversal)).toBe("That path cannot be used: it contains '..' (path traversal).");

    const clash = await refused(client.workspace.write.mutate({ teamId, path: "notes/a.md/child.md", content: "", expectedVersion: 0 }));
    expect(fileErrorText(clash)).toBe("That path cannot be used: notes/a.md/child.md cannot be created: notes/a.md is a file, not a directory.");
  });

  it("a file over the size limit says how large it is and what is allowed", async () => {
    const big = await refused(client.workspace.write.mutate({ teamId, path: "big.txt", content: "x".repeat(3000), expectedVersion: 0 }));
    expect(fileErrorText(big)).toBe("The file is too large: 2.9 KiB, and a file may hold at most 2 KiB. Nothing was saved.");
  });

  it("a full workspace says so", async () => {
    await client.workspace.write.mutate({ teamId, path: "b.txt", content: "b", expectedVersion: 0 });
    await client.workspace.write.mutate({ teamId, path: "c.txt", content: "c", expectedVersion: 0 });
    const full = await refused(client.workspace.write.mutate({ teamId, path: "d.txt", content: "d", expectedVersion: 0 }));
    expect(fileErrorText(full)).toBe("The workspace is full: nothing was saved. The workspace holds its maximum of 3 files; delete some first.");
  });

  it("no answer at all is a network failure, not a refusal", () => {
    const e = TRPCClientError.from<AppRouter>(new Error("fetch failed"));
    expect(staleOf(e)).toBeNull();
    expect(fileErrorText(e)).toBe("The server could not be reached. Nothing was saved; try again.");
  });
});
