import { z } from "zod";
import { INT4_MAX } from "../shared/input-guard";

// Task ids: `task-<n>`, n ≥ 1 in canonical form (no leading zeros) and within int4.

const TASK_ID = /^task-([1-9][0-9]{0,9})$/;

export function formatTaskId(n: number): string {
  return `task-${n}`;
}

/** The task number of a canonical `task-<n>` id, or null. */
export function parseTaskId(id: string): number | null {
  const m = TASK_ID.exec(id);
  if (!m) return null;
  const n = Number(m[1]);
  return n <= INT4_MAX ? n : null;
}

/** The numbers of the ids that name a task (stored dependency lists hold only such ids). */
export function taskNumbers(ids: readonly string[]): number[] {
  return ids.map(parseTaskId).filter((n): n is number => n !== null);
}

/**
 * A task id as the router and the tools take it: the `task-<digits>` shape, so a malformed
 * one is an argument error. The domain functions take any string: an id that names no task
 * (`banana`, `task-0`, `task-007`, beyond int4) is TEAM_TASK_NOT_FOUND there.
 */
export const TaskIdSchema = z.string().regex(/^task-\d+$/, "a task id like task-1");
