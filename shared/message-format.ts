// How a team message reads to its target: a header line naming the message and its sender, then
// the content. No imports: delivery writes it (SQL, mailbox.ts), the playbook and the browser
// read it back with parseTeamMessage.

export const TEAM_MESSAGE_FORMAT = "Team message %s from %s:\n%s";
const TEAM_MESSAGE_HEADER = /^Team message (\S+) from (\S+):\n/;

/** TEAM_MESSAGE_FORMAT written here (delivery writes it in SQL: deliverBatch). */
export function teamMessageText(messageId: string, senderName: string, content: string): string {
  const [head, from, colon, tail] = TEAM_MESSAGE_FORMAT.split("%s") as [string, string, string, string];
  return `${head}${messageId}${from}${senderName}${colon}${content}${tail}`;
}

/** The parts of a text teamMessageText wrote, or null for any other text. */
export function parseTeamMessage(text: string): { messageId: string; senderName: string; content: string } | null {
  const m = TEAM_MESSAGE_HEADER.exec(text);
  return m ? { messageId: m[1]!, senderName: m[2]!, content: text.slice(m[0].length) } : null;
}
