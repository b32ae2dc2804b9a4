import { z } from "zod";
import { AppError } from "../errors";
import { defineTool, type ToolDefinition } from "./tools";

// Tools every plain session has before teams exist: small, deterministic, and enough to
// exercise tool calls, results and argument errors end to end.

export const currentTimeTool = defineTool({
  name: "current_time",
  description: "Returns the current date and time, optionally in an IANA time zone such as Europe/Paris.",
  input: z.object({ timeZone: z.string().min(1).max(64).optional() }).strict(),
  output: z.object({ iso: z.string(), timeZone: z.string(), local: z.string() }),
  async execute({ timeZone = "UTC" }) {
    const now = new Date();
    let local: string;
    try {
      local = now.toLocaleString("en-GB", { timeZone, dateStyle: "full", timeStyle: "long" });
    } catch {
      throw new AppError("TOOL_INVALID_INPUT", `Unknown time zone "${timeZone}"; use an IANA name like Europe/Paris`);
    }
    return { iso: now.toISOString(), timeZone, local };
  },
});

export const builtinTools: ToolDefinition[] = [currentTimeTool];
