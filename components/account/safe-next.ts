// Where to go after signing in: the `next` a page was sent with, only when it is a path on
// this site. Anything else (another origin, a protocol-relative `//host`, a backslash trick,
// a `javascript:` URL) goes home, so a link cannot bounce a person to a foreign page.

/** A same-site relative path (path, query and hash) for `raw`, or "/" . */
export function safeNext(raw: string | null | undefined): string {
  if (!raw || !raw.startsWith("/") || raw.startsWith("//") || raw.includes("\\")) return "/";
  // Control characters (tabs and newlines are dropped by URL parsers) never belong in a path.
  if (/\p{Cc}/u.test(raw)) return "/";
  const base = "http://this.invalid";
  let url: URL;
  try {
    url = new URL(raw, base);
  } catch {
    return "/";
  }
  if (url.origin !== base) return "/";
  return `${url.pathname}${url.search}${url.hash}`;
}

/** The sign-in page for a person who wanted `path`. */
export function signInHref(path: string): string {
  const next = safeNext(path);
  return next === "/" ? "/sign-in" : `/sign-in?next=${encodeURIComponent(next)}`;
}
