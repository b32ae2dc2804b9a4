// Long plain text (a reply while it streams, or one too long for Markdown) is shown as blocks
// of a few thousand characters: a browser lays out one text node of 400 KB in tens of ms, and
// again each time it grows, while appending to the last of many blocks lays out that block
// alone. Pure, so the cuts are tested.

/** Characters a block holds at least (the last one may hold up to twice as many). */
export const SEGMENT_CHARS = 2_000;

/**
 * The text cut into blocks. A cut falls right after a newline where there is one (so the
 * blocks look like the text in one piece), else after a space, else anywhere; and only once
 * the text is long enough that the cut can never move, so a growing text keeps every block
 * but its last as it was.
 */
export function textSegments(text: string, size = SEGMENT_CHARS): string[] {
  const out: string[] = [];
  let start = 0;
  while (text.length - start > 2 * size) {
    const window = start + 2 * size;
    const newline = text.indexOf("\n", start + size - 1);
    let cut: number;
    if (newline >= 0 && newline < window) cut = newline + 1;
    else {
      const space = text.indexOf(" ", start + size - 1);
      cut = space >= 0 && space < window ? space + 1 : window;
    }
    out.push(text.slice(start, cut));
    start = cut;
  }
  out.push(text.slice(start));
  return out;
}
