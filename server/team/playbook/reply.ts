import type { ScriptedReply } from "../../models/scripted";
import { parseTeamMessage } from "../../../shared/message-format";
import { isTeamMessage, type Result, type Seen } from "./seen";

// What every member's script uses: a reply, the results it looks up, and an acknowledgement
// of the mail it got.

type Call = { toolName: string; input: unknown };

/** A wait for the team to change (wait_agent's longest useful timeout here). */
export const WAIT: Call = { toolName: "wait_agent", input: { timeout_ms: 60_000 } };
export const say = (text: string, ...toolCalls: Call[]): ScriptedReply => ({ text, toolCalls });
export const lastOf = (seen: Seen, tool: string) => [...seen.results].reverse().find((r) => r.toolName === tool && !r.isError);
export const justGot = (seen: Seen, tool: string) => seen.last.find((r) => r.toolName === tool);
/** A call the runtime reports as never run: the turn was cut off before it (a restart). */
export const isInterrupted = (r: Result) => r.isError && errorCode(r) === "INTERRUPTED";
export const errorCode = (r: Result) => (r.output as { error?: { code?: string } } | null)?.error?.code;
/** The last round's send was refused (one cut off by a restart never ran: it is sent again). */
export const refusedSend = (seen: Seen) => seen.last.some((r) => r.toolName === "send_message" && r.isError && !isInterrupted(r));
export const short = (text: string, max = 80) => (text.length > max ? `${text.slice(0, max - 1)}…` : text);

interface TaskOut {
  id: string;
  revision: number;
  subject: string;
  status: string;
  ready?: boolean;
  blockedBy?: string[];
}
export const tasksIn = (r: Result | undefined): TaskOut[] => ((r?.output as { tasks?: TaskOut[] } | undefined)?.tasks ?? []);
export const taskIn = (r: Result | undefined): TaskOut | undefined => (r && !r.isError ? (r.output as TaskOut) : undefined);

const received = (seen: Seen) => seen.inputs.filter(isTeamMessage);

export function ack(seen: Seen): string {
  // Said as a person would: who wrote and what, not the message's id.
  const mail = received(seen).flatMap((m) => {
    const parsed = parseTeamMessage(m);
    return parsed ? [`${parsed.senderName}: ${short(parsed.content, 100)}`] : [];
  });
  // A message that ends its own sentence gets no second full stop.
  const said = mail.join(" / ");
  return mail.length === 0 ? "" : `Noted ${mail.length === 1 ? "a message" : `${mail.length} messages`} from ${said}${/[.!?…]$/.test(said) ? "" : "."} `;
}
