import type { MemberRef } from "../../members/membership";
import { TimelineKindSchema, type TimelineEntry, type TimelineFilter, type TimelineKind } from "./schema";

/** A read entry with its source and its position there. */
export interface Sourced {
  source: string;
  pos: number;
  entry: TimelineEntry;
}

/** Source keys sort people's actions, then mail, then sessions' events, then files within one millisecond. */
export const ACTIONS = "a";
export const MAIL = "m";
export const FILES = "w";
export const sessionSource = (id: string) => `s${id}`;

export function orderKey(at: Date, source: string, pos: number): string {
  return `${String(at.getTime()).padStart(15, "0")}.${source}.${String(pos).padStart(16, "0")}`;
}

/** What one read found in a source. */
export interface Listed {
  source: string;
  /** Newest first. */
  rows: Sourced[];
  /** Nothing older than `rows` is left in the source. */
  exhausted: boolean;
  /** Where to go on from when no row of it is taken (a scan that found too few). */
  floor?: number;
}

/** Which sources, and which kinds of session events, a read with a filter goes to. */
export interface Plan {
  sessions: MemberRef[];
  mail: boolean;
  actions: boolean;
  files: boolean;
  /** Member names whose file changes count (null: everyone's, people's too). */
  filesOf: ReadonlySet<string> | null;
  kinds: readonly TimelineKind[];
  /** Session ids whose messages count (null: everyone's). */
  mailOf: string[] | null;
}

export function plan(refs: readonly MemberRef[], filter: TimelineFilter): Plan {
  const kinds = filter.kinds ?? TimelineKindSchema.options;
  const names = filter.members ? new Set(filter.members) : null;
  const sessions = names ? refs.filter((r) => names.has(r.name)) : [...refs];
  const sessionKinds = kinds.filter((k) => k !== "message" && k !== "file");
  return {
    sessions: sessionKinds.length > 0 ? sessions : [],
    mail: kinds.includes("message") && sessions.length > 0,
    // People's board changes belong to no member: a member filter leaves them out.
    actions: kinds.includes("task") && !names,
    files: kinds.includes("file"),
    filesOf: names,
    kinds: sessionKinds,
    mailOf: names ? sessions.map((s) => s.sessionId) : null,
  };
}
