import type { IncomingMessage, ServerResponse } from "node:http";
import { pipeline } from "node:stream/promises";
import { z } from "zod";
import type { Db } from "../db/client";
import { AppError } from "../errors";
import { asSessionId } from "../ids";
import { findUnstorableText } from "../../shared/input-guard";
import type { Person } from "../people/person";
import { answerFailure } from "./failure";
import { teamAccess } from "../trpc/access";
import { readFile, workspaceZip } from "../workspace";

// Downloads of the team workspace over plain HTTP (SPEC.md §14), so the browser saves them
// natively: one file (any version) and the whole workspace as a zip, streamed. Both need a
// role in the team (the same access check as every procedure); refusals are JSON with the
// stable code, like tRPC's.
//
//   GET /api/teams/<teamId>/files/<path, each segment URI-encoded>[?version=<n>]
//   GET /api/teams/<teamId>/workspace.zip

const PREFIX = "/api/teams/";

export function isDownload(url: string | undefined): boolean {
  return url?.startsWith(PREFIX) ?? false;
}

const Version = z.coerce.number().int().min(1).max(2_147_483_647);

function parse(url: URL): { teamId: string; kind: "zip" } | { teamId: string; kind: "file"; path: string; version?: number } {
  // `new URL` resolved dot segments: what is left must still be a download address.
  if (!url.pathname.startsWith(PREFIX)) throw new AppError("PROCEDURE_NOT_FOUND", "No such download");
  const rest = url.pathname.slice(PREFIX.length);
  const slash = rest.indexOf("/");
  const teamId = decodeURIComponent(rest.slice(0, slash));
  const what = rest.slice(slash + 1);
  if (slash <= 0 || teamId.length > 64 || findUnstorableText(teamId)) throw new AppError("INVALID_INPUT", "Not a download address");
  if (what === "workspace.zip") return { teamId, kind: "zip" };
  if (!what.startsWith("files/")) throw new AppError("PROCEDURE_NOT_FOUND", "No such download");
  const path = what.slice("files/".length).split("/").map(decodeURIComponent).join("/");
  const unstorable = findUnstorableText(path, "path");
  if (unstorable) throw new AppError("WORKSPACE_PATH_INVALID", `Invalid path: ${unstorable}`);
  const v = url.searchParams.get("version");
  const version = v === null ? undefined : Version.safeParse(v);
  if (version && !version.success) throw new AppError("INVALID_INPUT", "version must be a positive integer");
  return { teamId, kind: "file", path, version: version?.data };
}

/** `attachment` with the file's own name (RFC 6266 / 5987). */
function attachment(name: string): string {
  const ascii = name.replace(/[^\x20-\x7e]|["\\]/g, "_");
  const encoded = encodeURIComponent(name).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encoded}`;
}

export async function serveDownload(req: IncomingMessage, res: ServerResponse, ctx: { db: Db; person: () => Promise<Person | null> }, log: (line: string) => void) {
  try {
    if (req.method !== "GET" && req.method !== "HEAD") throw new AppError("INVALID_INPUT", "Downloads are GET requests");
    const person = await ctx.person();
    if (!person) throw new AppError("UNAUTHORIZED", "Sign in to download");
    let target;
    try {
      target = parse(new URL(req.url ?? "/", "http://local"));
    } catch (e) {
      if (e instanceof URIError) throw new AppError("INVALID_INPUT", "The address is not valid URI encoding");
      throw e;
    }
    const { teamId } = await teamAccess({ db: ctx.db, person }, asSessionId(target.teamId), "view");
    res.setHeader("Cache-Control", "private, no-store");
    if (target.kind === "file") {
      const file = await readFile(ctx.db, teamId, { path: target.path, version: target.version });
      res.setHeader("Content-Type", "text/plain; charset=utf-8");
      res.setHeader("Content-Disposition", attachment(file.path.split("/").at(-1)!));
      res.setHeader("Content-Length", Buffer.byteLength(file.content, "utf8"));
      res.end(req.method === "HEAD" ? undefined : file.content);
      return;
    }
    res.setHeader("Content-Type", "application/zip");
    res.setHeader("Content-Disposition", attachment(`workspace-${teamId}.zip`));
    if (req.method === "HEAD") return void res.end();
    const { stream } = await workspaceZip(ctx.db, teamId);
    await pipeline(stream, res);
  } catch (e) {
    // Mid-stream the client sees a cut download, never a corrupt "complete" one.
    answerFailure(res, e, `downloads ${req.url ?? ""}`, log, "The download failed");
  }
}
