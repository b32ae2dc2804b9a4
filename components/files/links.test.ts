import { describe, expect, it } from "vitest";
import { fileDownloadHref, filesHref, filesTarget, workspaceZipHref } from "./links";

describe("Files view addresses", () => {
  it("puts the view, the path (URI-encoded) and the version in the query", () => {
    expect(filesHref("ses_1")).toBe("/teams/ses_1?view=files");
    expect(filesHref("ses_1", { path: "notes/plan é&x.md", version: 3 })).toBe("/teams/ses_1?view=files&path=notes%2Fplan%20%C3%A9%26x.md&version=3");
    expect(filesHref("ses_1", { path: "a.md", version: null })).toBe("/teams/ses_1?view=files&path=a.md");
    // A version without a path means nothing.
    expect(filesHref("ses_1", { version: 2 })).toBe("/teams/ses_1?view=files");
  });

  it("reads back what it wrote, and takes anything but a positive version as the latest", () => {
    const read = (href: string) => filesTarget(new URL(href, "http://x").searchParams);
    expect(read(filesHref("t", { path: "notes/plan é&x.md", version: 3 }))).toEqual({ path: "notes/plan é&x.md", version: 3 });
    expect(read("/teams/t?view=files&path=a.md")).toEqual({ path: "a.md", version: null });
    for (const v of ["0", "-1", "1.5", "abc", "", "99999999999"]) expect(read(`/teams/t?view=files&path=a.md&version=${v}`)).toEqual({ path: "a.md", version: null });
    expect(read("/teams/t?view=files&version=2")).toEqual({ path: null, version: null });
  });

  it("encodes each path segment of a download, keeping the slashes", () => {
    expect(fileDownloadHref("ses_1", "src/a b/#x?.ts", 2)).toBe("/api/teams/ses_1/files/src/a%20b/%23x%3F.ts?version=2");
    expect(fileDownloadHref("ses_1", "a.md")).toBe("/api/teams/ses_1/files/a.md");
    expect(workspaceZipHref("ses_1")).toBe("/api/teams/ses_1/workspace.zip");
  });
});
