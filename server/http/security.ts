import { randomBytes } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { bearerToken } from "../people/tokens";

// The web layer's locks (docs/SPEC.md §13 Web security), applied by the app server to every
// request before anything else runs: a host allow-list (DNS rebinding), same-origin for every
// state-changing request, and the security headers on every response.

export interface WebPolicy {
  /** `Host` values served: APP_URL's host, and the loopback names when APP_URL is unset. */
  hosts: ReadonlySet<string>;
  /** The origins of those hosts: the only ones state-changing requests may come from. */
  origins: ReadonlySet<string>;
  /** Next dev mode evaluates code at run time; the CSP then allows it. */
  dev: boolean;
}

/** The policy for an app served at `appUrl`; `local` adds the loopback names of its port. */
export function webPolicy(appUrl: string, opts: { local: boolean; dev?: boolean }): WebPolicy {
  const url = new URL(appUrl);
  const hosts = new Set([url.host]);
  if (opts.local) {
    const port = url.port ? `:${url.port}` : "";
    for (const name of ["localhost", "127.0.0.1", "[::1]"]) hosts.add(`${name}${port}`);
  }
  const origins = new Set([...hosts].map((h) => `${url.protocol}//${h}`));
  return { hosts, origins, dev: opts.dev ?? false };
}

export type Refusal = { status: number; code: "UNKNOWN_HOST" | "CROSS_SITE_REQUEST" | "BODY_TOO_LARGE"; message: string };

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

/**
 * Null when the request may proceed. A state-changing request must show it comes from the
 * app's own pages: `Sec-Fetch-Site: same-origin`, or an `Origin` equal to the app's. A request
 * with neither (a script, not a browser) must carry an API token: it then holds no ambient
 * credential a foreign page could borrow.
 */
export function checkRequest(req: IncomingMessage, policy: WebPolicy): Refusal | null {
  const host = req.headers.host?.toLowerCase();
  // A request line in absolute form (`GET http://other.example/`) names its host there, and a
  // router would redirect to it: only the origin form (a path) is served.
  if (!host || !policy.hosts.has(host) || !req.url?.startsWith("/")) {
    return { status: 421, code: "UNKNOWN_HOST", message: "This server does not serve that host name (set APP_URL)" };
  }
  if (SAFE_METHODS.has(req.method ?? "GET")) return null;
  const site = req.headers["sec-fetch-site"];
  const origin = req.headers.origin;
  if (site !== undefined && site !== "same-origin") return crossSite();
  if (origin !== undefined && !policy.origins.has(origin)) return crossSite();
  if (site === undefined && origin === undefined && bearerToken(req.headers.authorization) === null) return crossSite();
  return null;
}

const crossSite = (): Refusal => ({
  status: 403,
  code: "CROSS_SITE_REQUEST",
  message: "State-changing requests are accepted only from this app's own pages (or with an API token)",
});

/**
 * A body the handler would read whole (the auth library's): refused unless its declared length
 * is within `maxBytes`. A chunked body declares none: it is refused too (browsers and scripts
 * send the length of a JSON body). Node stops a body longer than its declared length.
 */
export function bodyRefusal(req: IncomingMessage, maxBytes: number): Refusal | null {
  if (SAFE_METHODS.has(req.method ?? "GET")) return null;
  const declared = req.headers["content-length"];
  const chunked = req.headers["transfer-encoding"] !== undefined;
  if (!chunked && (declared === undefined || Number(declared) <= maxBytes)) return null;
  return { status: 413, code: "BODY_TOO_LARGE", message: `A request body here is at most ${maxBytes} bytes, with its length declared` };
}

/**
 * The client's address, which sign-in rate limits key on: the socket's, never a header a client
 * could set, unless the app runs behind one reverse proxy it trusts (TRUST_PROXY): then the
 * address that proxy appended last to `X-Forwarded-For` (earlier entries are the client's word).
 */
export function clientAddress(req: IncomingMessage, trustProxy: boolean): string {
  const socket = req.socket.remoteAddress ?? "unknown";
  if (!trustProxy) return socket;
  const header = req.headers["x-forwarded-for"];
  const hops = (Array.isArray(header) ? header.join(",") : (header ?? "")).split(",").map((h) => h.trim()).filter(Boolean);
  return hops.at(-1) ?? socket;
}

/** A fresh CSP nonce per page request. */
export const newNonce = () => randomBytes(16).toString("base64");

/**
 * The Content-Security-Policy of a page. Scripts: only those carrying the page's nonce (Next
 * puts it on its own) and what they load ('strict-dynamic'). Styles allow inline attributes,
 * which React's `style` props need; no third-party origin appears anywhere.
 */
export function contentSecurityPolicy(nonce: string, policy: WebPolicy): string {
  return [
    "default-src 'self'",
    `script-src 'self' 'nonce-${nonce}' 'strict-dynamic'${policy.dev ? " 'unsafe-eval'" : ""}`,
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data: blob:",
    "font-src 'self'",
    `connect-src 'self'${policy.dev ? " ws: wss:" : ""}`,
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join("; ");
}

/** Headers every response carries, pages and API alike. */
export function setSecurityHeaders(res: ServerResponse, csp: string): void {
  res.setHeader("Content-Security-Policy", csp);
  res.setHeader("X-Frame-Options", "DENY");
  res.setHeader("X-Content-Type-Options", "nosniff");
  res.setHeader("Referrer-Policy", "same-origin");
  res.setHeader("Cross-Origin-Opener-Policy", "same-origin");
  res.setHeader("Permissions-Policy", "camera=(), microphone=(), geolocation=()");
}

/** A page for a person who opened the app under a name it does not serve (the host is not echoed). */
const UNKNOWN_HOST_PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Address not served</title></head>
<body><main><h1>This address is not served here</h1>
<p>This Agent Teams server answers only at the address it was configured with.</p>
<p>If you run it: set <code>APP_URL</code> to the address you open it at (for example <code>https://agents.example.com</code>) and start it again.</p>
</main></body></html>
`;

/** A refusal as JSON for API paths; a person's browser asking for a page under an unknown host gets a short HTML page. */
export function refuse(req: IncomingMessage, res: ServerResponse, refusal: Refusal): void {
  res.statusCode = refusal.status;
  res.setHeader("Cache-Control", "no-store");
  if (refusal.code === "UNKNOWN_HOST" && !req.url?.startsWith("/api/")) {
    res.setHeader("Content-Type", "text/html; charset=utf-8");
    return void res.end(req.method === "HEAD" ? undefined : UNKNOWN_HOST_PAGE);
  }
  res.setHeader("Content-Type", "application/json");
  res.end(JSON.stringify({ error: { code: refusal.code, message: refusal.message } }));
}
