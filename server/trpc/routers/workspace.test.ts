import { describe, expect } from "vitest";
import { applyFilesMessage } from "../../../shared/files-delta";
import type { FileEntry, FilesMessage } from "../../workspace";
import { callerTest } from "../../testing/app-tests";
import { createTestPerson } from "../../testing/people";
import { waitFor } from "../../testing/runtime-harness";
import type { TrpcContext } from "../init";
import { createCaller } from "../root";

// The Files view's live listing in-process: a fresh feed gets every live file, then each change
// costs its viewers a message of what it changed (not the listing again), and a reconnect with
// the last id gets only the changes since.

const it = callerTest({}, "Fay Files");

/** A files feed read in the background: every message with its id, and the listing they make. */
function follow(ctx: TrpcContext, input: { teamId: string; lastEventId: string | null }) {
  const abort = new AbortController();
  const received: { id: string; data: FilesMessage }[] = [];
  let listing: { files: FileEntry[]; lastChange: number } | null = null;
  const done = (async () => {
    try {
      for await (const raw of (await createCaller(ctx, { signal: abort.signal }).workspace.live(input)) as AsyncIterable<unknown>) {
        const [id, data] = raw as [string, FilesMessage];
        received.push({ id, data });
        listing = applyFilesMessage(listing, data);
      }
    } catch {
      // aborted
    }
  })();
  return {
    received,
    paths: () => listing?.files.map((f) => `${f.path}@${f.version}`) ?? null,
    async stop() {
      abort.abort();
      await done;
    },
  };
}

describe("workspace.live", () => {
  it("sends the listing once, then only what each change changed; a reconnect resumes after its last id", async ({ ctx, trpc }) => {
    const teamId = (await trpc.session.create({ title: "Files feed" })).id;
    await trpc.workspace.write({ teamId, path: "b.md", content: "b", expectedVersion: 0 });
    await trpc.workspace.write({ teamId, path: "a.md", content: "a", expectedVersion: 0 });

    const viewer = follow(ctx, { teamId, lastEventId: null });
    await waitFor(() => viewer.received.length === 1, 10_000, "the listing");
    expect(viewer.received[0]!.data).toMatchObject({ type: "files", lastChange: 2 });
    expect(viewer.paths()).toEqual(["a.md@1", "b.md@1"]);

    await trpc.workspace.write({ teamId, path: "c.md", content: "c", expectedVersion: 0 });
    await trpc.workspace.write({ teamId, path: "a.md", content: "a2", expectedVersion: 1 });
    await trpc.workspace.delete({ teamId, path: "b.md", expectedVersion: 1 });
    await waitFor(() => viewer.paths()?.join() === "a.md@2,c.md@1", 10_000, "the changes");
    // Each message after the first carries changes only: never the whole listing again.
    expect(viewer.received.slice(1).map((m) => m.data.type)).not.toContain("files");
    const sent = viewer.received.slice(1).flatMap((m) => (m.data.type === "changes" ? [...m.data.upsert.map((f) => f.path), ...m.data.removed] : []));
    expect(sent.sort()).toEqual(["a.md", "b.md", "c.md"]);
    expect(viewer.received.at(-1)!.id).toBe("5");
    await viewer.stop();

    // Offline, two more changes; the reconnect names the last id it had.
    await trpc.workspace.write({ teamId, path: "d.md", content: "d", expectedVersion: 0 });
    await trpc.workspace.delete({ teamId, path: "c.md", expectedVersion: 1 });
    const back = follow(ctx, { teamId, lastEventId: "5" });
    await waitFor(() => back.received.length === 1, 10_000, "the changes since");
    expect(back.received[0]).toMatchObject({ id: "7", data: { type: "changes", removed: ["c.md"], lastChange: 7 } });
    expect((back.received[0]!.data as Extract<FilesMessage, { type: "changes" }>).upsert.map((f) => f.path)).toEqual(["d.md"]);
    await back.stop();
  });

  it("is refused to a stranger before it starts", async ({ ctx, trpc }) => {
    const teamId = (await trpc.session.create({ title: "Private files" })).id;
    const stranger = createCaller({ ...ctx, person: await createTestPerson(ctx.db, "Sam Stranger") });
    await expect(stranger.workspace.live({ teamId, lastEventId: null })).rejects.toMatchObject({ code: "NOT_FOUND" });
  });
});
