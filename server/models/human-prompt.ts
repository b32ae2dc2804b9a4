// The first line the model sees on a person's prompt (docs/SPEC.md §13 Attribution), so a Lead
// serving several people can tell them apart. Written when the history is built, not stored:
// the log keeps the text as typed and the person in the message's source.

const HEADER = /^From ([^\n]+):\n/;

export function formatHumanPrompt(name: string, text: string): string {
  return `From ${name}:\n${text}`;
}

/** The author and the text as typed; a text without the header is returned whole. */
export function parseHumanPrompt(text: string): { from: string | null; body: string } {
  const m = HEADER.exec(text);
  return m ? { from: m[1]!, body: text.slice(m[0].length) } : { from: null, body: text };
}
