import type { z } from "zod";
import { AppError } from "../../errors";
import { utf8Bytes } from "../../../shared/input-guard";
import { LIMITS } from "../../../shared/limits";
import { normaliseWriteScopes } from "../write-scopes";
import { type TaskAction, type UpdateTaskInput } from "./schema";
import { parseTaskId } from "../../task-ids";

// Input checks that need no database: they refuse with TEAM_INVALID_ARGUMENT (or
// TEAM_TASK_NOT_FOUND for an id that names no task) before any transaction starts, so a
// refusal persists nothing.
//
// Subjects are trimmed and counted in code points; descriptions are stored as given, counted
// in UTF-8 bytes, and may be empty. Write scopes are normalised and de-duplicated.

export function taskNotFound(id: string): AppError {
  const hint = parseTaskId(id) === null ? " (task ids look like task-<n>)" : "";
  return new AppError("TEAM_TASK_NOT_FOUND", `No task ${JSON.stringify(id)} on this team's board${hint}`, {
    taskId: id,
  });
}

export function requireTaskNumber(id: string): number {
  const n = parseTaskId(id);
  if (n === null) throw taskNotFound(id);
  return n;
}

export function invalidArgument(message: string, details?: Record<string, unknown>): AppError {
  return new AppError("TEAM_INVALID_ARGUMENT", message, details);
}

export function parseInput<S extends z.ZodType>(schema: S, input: unknown): z.infer<S> {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const issues = result.error.issues.map((i) => `${i.path.join(".") || "input"}: ${i.message}`);
  throw invalidArgument(`Invalid input: ${issues.join("; ")}`, { issues });
}

function checkNoNul(field: string, value: string): void {
  if (value.includes("\u0000")) throw invalidArgument(`${field} must not contain NUL characters`, { field });
}

export function checkSubject(raw: string): string {
  const subject = raw.trim();
  checkNoNul("subject", subject);
  const chars = [...subject].length;
  if (chars === 0) throw invalidArgument("subject must not be empty", { field: "subject" });
  if (chars > LIMITS.taskSubjectChars) {
    throw invalidArgument(`subject is ${chars} characters; at most ${LIMITS.taskSubjectChars} are allowed`, {
      field: "subject",
      length: chars,
      max: LIMITS.taskSubjectChars,
    });
  }
  return subject;
}

export function checkDescription(description: string): string {
  checkNoNul("description", description);
  const bytes = utf8Bytes(description);
  if (bytes > LIMITS.taskDescriptionBytes) {
    throw invalidArgument(`description is ${bytes} bytes; at most ${LIMITS.taskDescriptionBytes} (${LIMITS.taskDescriptionBytes / 1024} KiB) are allowed`, {
      field: "description",
      bytes,
      max: LIMITS.taskDescriptionBytes,
    });
  }
  return description;
}

export function checkWriteScopes(raw: readonly string[]): string[] {
  if (raw.length > LIMITS.writeScopesPerTask) {
    throw invalidArgument(`At most ${LIMITS.writeScopesPerTask} write scopes per task`, { field: "writeScopes" });
  }
  return normaliseWriteScopes(raw);
}

/** Task numbers of a dependency list: canonical ids, no duplicates. Existence is checked in the transaction. */
export function checkDependencyList(ids: readonly string[]): number[] {
  if (ids.length > LIMITS.dependenciesPerTask) {
    throw invalidArgument(`At most ${LIMITS.dependenciesPerTask} dependencies per task`, { field: "blockedBy" });
  }
  const seen = new Set<string>();
  for (const id of ids) {
    if (seen.has(id)) throw invalidArgument(`blockedBy lists ${id} twice`, { field: "blockedBy", taskId: id });
    seen.add(id);
  }
  return ids.map(requireTaskNumber);
}

const FIELDS_OF: Record<TaskAction, readonly (keyof UpdateTaskInput)[]> = {
  claim: [],
  release: [],
  edit: ["subject", "description", "writeScopes"],
  set_dependencies: ["blockedBy"],
  complete: [],
  reopen: [],
  reassign: ["owner"],
  delete: [],
};
const ACTION_FIELDS = ["subject", "description", "writeScopes", "blockedBy", "owner"] as const;

export type Change =
  | { action: "claim" | "release" | "complete" | "reopen" | "delete" }
  | { action: "edit"; subject?: string; description?: string; writeScopes?: string[] }
  | { action: "set_dependencies"; blockedBy: number[] }
  | { action: "reassign"; owner: string | null };

export function prepareChange(input: UpdateTaskInput): Change {
  const allowed = FIELDS_OF[input.action];
  for (const field of ACTION_FIELDS) {
    if (input[field] !== undefined && input[field] !== null && !allowed.includes(field)) {
      throw invalidArgument(
        `Action ${input.action} takes ${allowed.length ? allowed.join(", ") : "no fields"}, not ${field}`,
        { action: input.action, field },
      );
    }
  }
  switch (input.action) {
    case "edit": {
      if (input.subject === undefined && input.description === undefined && input.writeScopes === undefined) {
        throw invalidArgument("edit needs at least one of subject, description, writeScopes", { action: "edit" });
      }
      return {
        action: "edit",
        subject: input.subject === undefined ? undefined : checkSubject(input.subject),
        description: input.description === undefined ? undefined : checkDescription(input.description),
        writeScopes: input.writeScopes === undefined ? undefined : checkWriteScopes(input.writeScopes),
      };
    }
    case "set_dependencies":
      if (input.blockedBy === undefined) {
        throw invalidArgument("set_dependencies needs blockedBy (the new list; [] clears it)", {
          action: "set_dependencies",
        });
      }
      return { action: "set_dependencies", blockedBy: checkDependencyList(input.blockedBy) };
    case "reassign": {
      const owner = input.owner?.trim() ?? "";
      return { action: "reassign", owner: owner === "" ? null : owner };
    }
    default:
      return { action: input.action };
  }
}
