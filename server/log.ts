import { createRequire } from "node:module";
import { pino, type Logger } from "pino";

// The process's log: one JSON object per line (pino), with level, time and the fields that say
// where it came from (requestId, teamId, sessionId, turnId, component); pretty for people in
// `npm run dev`. Never logged: prompt or message text (no call site passes it), and secrets —
// authorization and cookie headers are redacted by path, and every line is scrubbed of the
// configured secret values (provider keys, AUTH_SECRET, MCP_SECRETS_KEY, METRICS_TOKEN) before
// it is written, whatever field they ended up in.

export type { Logger };

/** Where a line comes from, as structured fields. */
export interface LogFields {
  requestId?: string;
  teamId?: string;
  sessionId?: string;
  turnId?: string;
  component?: string;
}

export interface LoggerOptions {
  /** Pretty, coloured lines for a person at a terminal (npm run dev). */
  pretty?: boolean;
  level?: string;
  /** Values that must never appear in a line (at least 8 characters each to count). */
  secrets?: readonly (string | undefined)[];
  /** Receives each JSON line (tests, embedding); unset, stdout. */
  write?: (line: string) => void;
}

export function createLogger(opts: LoggerOptions = {}): Logger {
  const secrets = (opts.secrets ?? []).filter((s): s is string => typeof s === "string" && s.length >= 8).sort((a, b) => b.length - a.length);
  const scrub = (line: string) => secrets.reduce((out, s) => (out.includes(s) ? out.split(s).join("[secret]") : out), line);
  const base = {
    level: opts.level ?? "info",
    base: { pid: process.pid },
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: { paths: ["authorization", "cookie", "*.authorization", "*.cookie", "headers.authorization", "headers.cookie", "*.apiKey", "*.token", "*.password"], censor: "[secret]" },
  };
  const write = opts.write ?? ((line: string) => process.stdout.write(`${line}\n`));
  const format = opts.pretty ? prettyLines() : (line: string) => line;
  // Scrubbed before formatting, so pretty lines hold no secret either.
  return pino(base, { write: (chunk: string) => write(format(scrub(chunk.trimEnd())).trimEnd()) });
}

/** pino-pretty's formatter, in this process (a transport's worker would write unscrubbed lines). A dev dependency: loaded only when asked for. */
function prettyLines(): (line: string) => string {
  const { prettyFactory } = createRequire(import.meta.url)("pino-pretty") as typeof import("pino-pretty");
  return prettyFactory({ colorize: true, translateTime: "SYS:HH:MM:ss.l", ignore: "pid" });
}
