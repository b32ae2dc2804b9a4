import { describe, expect } from "vitest";
import type { AppServer } from "../main";
import { appServerTest } from "../testing/app-tests";
import { httpClient } from "../testing/http-client";
import { signUpOverHttp } from "../testing/people";
import { unzip } from "../testing/zip";

// Workspace downloads over real HTTP (server/http/downloads.ts): one file at any version and
// the whole workspace as a zip, for people of the team only, refusals as typed JSON.

const it = appServerTest({ SCRIPTED_MODEL_DELAY_MS: "5" });

let server: AppServer;
let cookie: string;
let team: string;

it.beforeAll(async ({ server: s }) => {
  server = s;
  cookie = (await signUpOverHttp(server.url, { name: "Dora Downloader" })).cookie;
  const owner = httpClient(server.url, { cookie });
  team = (await owner.session.create.mutate({ title: "Downloads" })).id;
  await owner.account.setOpenSignUp.mutate({ open: true });
  await owner.workspace.write.mutate({ teamId: team, path: "docs/ünï code.md", content: "v1 é", expectedVersion: 0 });
  await owner.workspace.write.mutate({ teamId: team, path: "docs/ünï code.md", content: "v2 é", expectedVersion: 1 });
  await owner.workspace.write.mutate({ teamId: team, path: "src/main.ts", content: "export {};\n", expectedVersion: 0 });
});

const get = (path: string, headers: Record<string, string> = { cookie }) => fetch(`${server.url}${path}`, { headers });
const fileUrl = (p: string) => `/api/teams/${team}/files/${p.split("/").map(encodeURIComponent).join("/")}`;

describe("downloads", () => {
  it("serve one file as an attachment, at its head or at a version", async () => {
    const head = await get(fileUrl("docs/ünï code.md"));
    expect(head.status).toBe(200);
    expect(head.headers.get("content-type")).toBe("text/plain; charset=utf-8");
    expect(head.headers.get("content-disposition")).toBe(`attachment; filename="_n_ code.md"; filename*=UTF-8''${encodeURIComponent("ünï code.md")}`);
    expect(head.headers.get("x-content-type-options")).toBe("nosniff");
    expect(await head.text()).toBe("v2 é");
    expect(await (await get(`${fileUrl("docs/ünï code.md")}?version=1`)).text()).toBe("v1 é");
  });

  it("stream the whole workspace as a zip of its live files", async () => {
    const res = await get(`/api/teams/${team}/workspace.zip`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/zip");
    expect(await unzip(Buffer.from(await res.arrayBuffer()))).toEqual([
      ["docs/ünï code.md", "v2 é"],
      ["src/main.ts", "export {};\n"],
    ]);
  });

  it("refuse the anonymous, strangers and bad addresses with typed JSON", async () => {
    const status = async (r: Response) => [r.status, ((await r.json()) as { error: { code: string } }).error.code];
    expect(await status(await get(`/api/teams/${team}/workspace.zip`, {}))).toEqual([401, "UNAUTHORIZED"]);
    const stranger = (await signUpOverHttp(server.url, { name: "Stan Stranger" })).cookie;
    expect(await status(await get(`/api/teams/${team}/workspace.zip`, { cookie: stranger }))).toEqual([404, "TEAM_NOT_FOUND"]);
    expect(await status(await get(fileUrl("src/main.ts"), { cookie: stranger }))).toEqual([404, "TEAM_NOT_FOUND"]);
    expect(await status(await get(fileUrl("nope.md")))).toEqual([404, "WORKSPACE_NOT_FOUND"]);
    expect(await status(await get(`${fileUrl("src/main.ts")}?version=x`))).toEqual([400, "INVALID_INPUT"]);
    expect(await status(await get(`${fileUrl("src/main.ts")}?version=9`))).toEqual([404, "WORKSPACE_NOT_FOUND"]);
    expect(await status(await get(`/api/teams/${team}/files/%2e%2e%2fx`))).toEqual([400, "WORKSPACE_PATH_INVALID"]);
    expect(await status(await get(`/api/teams/${team}/files/%E0%A4%A`))).toEqual([400, "INVALID_INPUT"]);
    expect(await status(await get(`/api/teams/${team}/other`))).toEqual([404, "PROCEDURE_NOT_FOUND"]);
    expect(await status(await get(`/api/teams/%00/workspace.zip`))).toEqual([400, "INVALID_INPUT"]);
    expect(await status(await get(`/api/teams/${team}%00/workspace.zip`))).toEqual([400, "INVALID_INPUT"]);
    expect(await status(await get(`/api/teams/${team}/files/a%00b`))).toEqual([400, "WORKSPACE_PATH_INVALID"]);
  });
});
