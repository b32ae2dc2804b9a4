// Addresses of the Files view and the workspace downloads (docs/SPEC.md §14). One place, so the
// room's view switcher, timeline entries and tool cards link to a file version the same way:
//
//   /teams/<teamId>?view=files&path=<encodeURIComponent(path)>&version=<n>
//   /api/teams/<teamId>/files/<path, each segment URI-encoded>[?version=<n>]   (server/http/downloads.ts)
//   /api/teams/<teamId>/workspace.zip

/** The Files view of a team room, optionally open at a file (and one of its versions). */
export function filesHref(teamId: string, at: { path?: string | null; version?: number | null } = {}): string {
  let q = "view=files";
  if (at.path) {
    q += `&path=${encodeURIComponent(at.path)}`;
    if (at.version) q += `&version=${at.version}`;
  }
  return `/teams/${encodeURIComponent(teamId)}?${q}`;
}

/** What the Files view's address asks for: a path (or none) and a version (or the latest). */
export function filesTarget(params: { get(name: string): string | null }): { path: string | null; version: number | null } {
  const path = params.get("path") || null;
  const v = params.get("version");
  // Anything but a positive integer means "the latest version".
  const version = v !== null && /^[1-9]\d{0,9}$/.test(v) && Number(v) <= 2_147_483_647 ? Number(v) : null;
  return { path, version: path ? version : null };
}

/** One file as an attachment: the given version, or the latest. */
export function fileDownloadHref(teamId: string, path: string, version?: number | null): string {
  const segments = path.split("/").map(encodeURIComponent).join("/");
  return `/api/teams/${encodeURIComponent(teamId)}/files/${segments}${version ? `?version=${version}` : ""}`;
}

/** Every live file of the workspace as a zip. */
export function workspaceZipHref(teamId: string): string {
  return `/api/teams/${encodeURIComponent(teamId)}/workspace.zip`;
}
