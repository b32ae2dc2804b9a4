// Which URLs a rendered reply may point at. Pure, so the renderer and its tests share it.
//
// Allowed: http:, https: and mailto: (external), and relative paths, queries and #anchors
// within the app (local). Everything else - javascript:, data:, vbscript:, file:, any other
// scheme, protocol-relative `//host` - is refused, and the renderer shows the link inert.

export type UrlKind = "external" | "local";

const EXTERNAL_SCHEME = /^(?:https?|mailto):/i;
/** A scheme, as a browser reads one: letters etc. then a colon before any path, query or hash. */
const HAS_SCHEME = /^[^/?#]*:/;
// C0 controls, space, DEL: never valid in a URL, and browsers strip some of them before
// looking at the scheme (`java\tscript:`), so refuse them outright.
const URL_FORBIDDEN = /[\u0000-\u0020\u007f]/;
// `//host`, and `\\host` or `/\host`, which browsers read the same way: another site.
const PROTOCOL_RELATIVE = /^[/\\]{2}/;

/** What kind of link the URL may become, or null when it must stay inert. */
export function urlKind(url: string): UrlKind | null {
  if (url === "" || URL_FORBIDDEN.test(url)) return null;
  if (EXTERNAL_SCHEME.test(url)) return "external";
  if (HAS_SCHEME.test(url) || PROTOCOL_RELATIVE.test(url)) return null;
  return "local";
}

/** The URL when it may be used (see urlKind), otherwise null (react-markdown's urlTransform). */
export function safeUrl(url: string): string | null {
  return urlKind(url) === null ? null : url;
}
