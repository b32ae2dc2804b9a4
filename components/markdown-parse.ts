// A small, safe Markdown parser for agent replies: Markdown text in, a typed AST out. Pure (no
// React, no DOM); components/markdown.tsx turns the AST into React elements.
//
// Supported: paragraphs (blank-line separated; a single newline is a line break), ATX headings
// `#`..`###`, bullet (`-`, `*`) and ordered (`1.`) lists with nesting by indentation, fenced code
// blocks (``` or ~~~, optional language), block quotes (`>`), inline code, **strong** / __strong__,
// *em* / _em_, backslash escapes and links `[text](url "title")`. Everything else (HTML tags
// included) is plain text.
//
// Safety: a link only becomes a link when its URL is http:, https: or mailto: (see safeHref).
// Anything else - javascript:, data:, vbscript:, relative or protocol-relative URLs - stays
// literal text, exactly as written.
//
// Robustness: no regular expression here can backtrack catastrophically, and every scan is
// bounded so that the whole parse is linear-ish in the input size (unmatched `[`, `` ` ``, `*`
// runs included). Container nesting (quotes, lists) is capped at MAX_DEPTH; deeper markers are
// text. Unbalanced markers render literally, and an unclosed code fence (a reply still
// streaming) runs to the end of its container.

export type MdInline =
  | { type: "text"; text: string }
  | { type: "break" }
  | { type: "code"; text: string }
  | { type: "strong"; children: MdInline[] }
  | { type: "em"; children: MdInline[] }
  | { type: "link"; href: string; children: MdInline[] };

export interface MdListItem {
  /** The item's first paragraph, rendered inline (no <p>), possibly empty. */
  content: MdInline[];
  /** Anything after it: nested lists, code blocks, further paragraphs. */
  children: MdBlock[];
}

export type MdBlock =
  | { type: "paragraph"; children: MdInline[] }
  | { type: "heading"; level: 1 | 2 | 3; children: MdInline[] }
  | { type: "list"; ordered: boolean; start: number; items: MdListItem[] }
  | { type: "code_block"; lang: string; text: string; closed: boolean }
  | { type: "blockquote"; children: MdBlock[] };

/** Quotes and lists nested deeper than this are plain text. */
export const MAX_DEPTH = 12;

export function parseMarkdown(src: string): MdBlock[] {
  const text = src.includes("\r") ? src.replace(/\r\n?/g, "\n") : src;
  return parseBlocks(text.split("\n"), 0);
}

const SAFE_SCHEME = /^(?:https?|mailto):/i;
// C0 controls, space, DEL: never valid in a URL, and browsers strip some of them before
// looking at the scheme (`java\tscript:`), so refuse them outright.
const URL_FORBIDDEN = /[\u0000-\u0020\u007f]/;

/** The URL when it may become a link (http:, https:, mailto:), otherwise null. */
export function safeHref(url: string): string | null {
  return SAFE_SCHEME.test(url) && !URL_FORBIDDEN.test(url) ? url : null;
}

// ---------------------------------------------------------------------------------------------
// Blocks

/** Column of the first non-blank character (tabs advance to the next multiple of 4). */
function indentOf(line: string): { cols: number; idx: number } {
  let cols = 0;
  let idx = 0;
  while (idx < line.length) {
    const c = line[idx];
    if (c === " ") cols++;
    else if (c === "\t") cols += 4 - (cols % 4);
    else break;
    idx++;
  }
  return { cols, idx };
}

/** Removes up to `n` columns of leading whitespace (a tab straddling column n leaves spaces). */
function stripCols(line: string, n: number): string {
  let cols = 0;
  let idx = 0;
  while (idx < line.length && cols < n) {
    const c = line[idx];
    if (c === " ") cols++;
    else if (c === "\t") cols += 4 - (cols % 4);
    else break;
    idx++;
  }
  return (cols > n ? " ".repeat(cols - n) : "") + line.slice(idx);
}

function isBlank(line: string): boolean {
  for (let i = 0; i < line.length; i++) {
    const c = line.charCodeAt(i);
    if (c !== 32 && c !== 9) return false;
  }
  return true;
}

interface Fence {
  indent: number;
  ch: string;
  len: number;
  lang: string;
}

function matchFence(line: string): Fence | null {
  const { cols, idx } = indentOf(line);
  const ch = line[idx];
  if (ch !== "`" && ch !== "~") return null;
  let end = idx;
  while (line[end] === ch) end++;
  const len = end - idx;
  if (len < 3) return null;
  const info = line.slice(end).trim();
  if (ch === "`" && info.includes("`")) return null;
  const space = info.search(/\s/);
  return { indent: cols, ch, len, lang: space === -1 ? info : info.slice(0, space) };
}

function closesFence(line: string, fence: Fence): boolean {
  const { idx } = indentOf(line);
  let end = idx;
  while (line[end] === fence.ch) end++;
  return end - idx >= fence.len && isBlank(line.slice(end));
}

function matchHeading(line: string): { level: 1 | 2 | 3; text: string } | null {
  const { idx } = indentOf(line);
  let end = idx;
  while (line[end] === "#") end++;
  const level = end - idx;
  if (level < 1 || level > 3) return null;
  if (end < line.length && line[end] !== " " && line[end] !== "\t") return null;
  let text = line.slice(end).trim();
  // Optional closing sequence: `## Title ##`.
  let close = text.length;
  while (close > 0 && text[close - 1] === "#") close--;
  if (close === 0) text = "";
  else if (close < text.length && (text[close - 1] === " " || text[close - 1] === "\t")) text = text.slice(0, close).trimEnd();
  return { level: level as 1 | 2 | 3, text };
}

/** The line's content after `>` (and one optional space), or null when it isn't a quote line. */
function matchQuote(line: string): string | null {
  const { idx } = indentOf(line);
  if (line[idx] !== ">") return null;
  return line[idx + 1] === " " ? line.slice(idx + 2) : line.slice(idx + 1);
}

interface ListMarker {
  ordered: boolean;
  start: number;
  indent: number;
  /** Column where the item's content starts: continuation lines indented this far belong to it. */
  contentIndent: number;
  /** Lines indented at least this far belong to the item (lenient: 2 columns past the marker). */
  nestIndent: number;
  content: string;
}

function matchListItem(line: string): ListMarker | null {
  const { cols, idx } = indentOf(line);
  let end = idx;
  let ordered = false;
  let start = 1;
  const c = line[idx];
  if (c === "-" || c === "*") {
    end = idx + 1;
  } else {
    while (end < line.length && end - idx < 10 && line[end]! >= "0" && line[end]! <= "9") end++;
    if (end === idx || end - idx > 9 || line[end] !== ".") return null;
    start = Number(line.slice(idx, end));
    ordered = true;
    end++;
  }
  if (end < line.length && line[end] !== " " && line[end] !== "\t") return null;
  const markerCols = cols + (end - idx);
  const rest = line.slice(end);
  const after = indentOf(rest);
  const content = rest.slice(after.idx);
  const gap = content === "" || after.cols > 4 ? 1 : after.cols;
  const contentIndent = markerCols + gap;
  return { ordered, start, indent: cols, contentIndent, nestIndent: Math.min(contentIndent, cols + 2), content };
}

/** Whether the line starts a block that may interrupt a paragraph (or end a lazy continuation). */
function startsBlock(line: string, depth: number): boolean {
  // Fast path: most lines start with a letter.
  const first = line[indentOf(line).idx];
  if (first === undefined || !"`~#>-*0123456789".includes(first)) return false;
  if (matchFence(line) || matchHeading(line)) return true;
  if (depth >= MAX_DEPTH) return false;
  if (matchQuote(line) !== null) return true;
  const item = matchListItem(line);
  return item !== null && item.content !== "" && (!item.ordered || item.start === 1);
}

function parseBlocks(lines: string[], depth: number): MdBlock[] {
  const out: MdBlock[] = [];
  let i = 0;
  while (i < lines.length) {
    const line = lines[i]!;
    if (isBlank(line)) {
      i++;
      continue;
    }

    const fence = matchFence(line);
    if (fence) {
      const body: string[] = [];
      let closed = false;
      i++;
      while (i < lines.length) {
        const l = lines[i++]!;
        if (closesFence(l, fence)) {
          closed = true;
          break;
        }
        body.push(stripCols(l, fence.indent));
      }
      out.push({ type: "code_block", lang: fence.lang, text: body.join("\n"), closed });
      continue;
    }

    const heading = matchHeading(line);
    if (heading) {
      out.push({ type: "heading", level: heading.level, children: parseInline(heading.text) });
      i++;
      continue;
    }

    if (depth < MAX_DEPTH) {
      if (matchQuote(line) !== null) {
        const inner: string[] = [];
        while (i < lines.length) {
          const l = lines[i]!;
          const q = matchQuote(l);
          if (q !== null) inner.push(q);
          // Lazy continuation: an unmarked line continues the quote's paragraph.
          else if (!isBlank(l) && !isBlank(inner[inner.length - 1] ?? "") && !startsBlock(l, depth)) inner.push(l);
          else break;
          i++;
        }
        out.push({ type: "blockquote", children: parseBlocks(inner, depth + 1) });
        continue;
      }

      const marker = matchListItem(line);
      if (marker) {
        i = parseList(lines, i, marker, depth, out);
        continue;
      }
    }

    const para = [line.trim()];
    i++;
    while (i < lines.length && !isBlank(lines[i]!) && !startsBlock(lines[i]!, depth)) para.push(lines[i++]!.trim());
    out.push({ type: "paragraph", children: parseInline(para.join("\n")) });
  }
  return out;
}

/** Parses the list starting at lines[start] into `out`; returns the index of the first line after it. */
function parseList(lines: string[], start: number, first: ListMarker, depth: number, out: MdBlock[]): number {
  const items: MdListItem[] = [];
  let cur = first;
  let body: string[] = [first.content];
  const finish = () => {
    const blocks = parseBlocks(body, depth + 1);
    const lead = blocks[0];
    if (lead?.type === "paragraph") items.push({ content: lead.children, children: blocks.slice(1) });
    else items.push({ content: [], children: blocks });
  };

  let i = start + 1;
  while (i < lines.length) {
    const line = lines[i]!;
    if (isBlank(line)) {
      let j = i + 1;
      while (j < lines.length && isBlank(lines[j]!)) j++;
      if (j >= lines.length) break;
      const next = lines[j]!;
      const { cols } = indentOf(next);
      if (cols >= cur.nestIndent) {
        // Indented content after a blank line still belongs to the item (a second paragraph,
        // a nested list, a code block with blank lines in it).
        for (let k = i; k < j; k++) body.push("");
        i = j;
        continue;
      }
      const m = matchListItem(next);
      if (m && m.ordered === first.ordered) {
        i = j;
        continue;
      }
      break;
    }

    const { cols } = indentOf(line);
    if (cols >= cur.nestIndent) {
      body.push(stripCols(line, Math.min(cols, cur.contentIndent)));
      i++;
      continue;
    }
    const m = matchListItem(line);
    if (m) {
      if (m.ordered !== first.ordered) break;
      finish();
      cur = m;
      body = [m.content];
      i++;
      continue;
    }
    if (startsBlock(line, depth)) break;
    // Lazy continuation of the item's last paragraph.
    body.push(line);
    i++;
  }
  finish();
  out.push({ type: "list", ordered: first.ordered, start: first.start, items });
  return i;
}

// ---------------------------------------------------------------------------------------------
// Inlines

interface Delim {
  type: "delim";
  ch: "*" | "_";
  /** Characters not yet used by a match. */
  count: number;
  /** Length of the original run (for the "rule of 3"). */
  orig: number;
  canOpen: boolean;
  canClose: boolean;
  /** Index in the token list (for the openers-bottom bound). */
  pos: number;
  /** Emphasis opened here, innermost first (uses the run's rightmost characters). */
  opens: ("strong" | "em")[] | null;
  /** Emphasis closed here, innermost first (uses the run's leftmost characters). */
  closes: ("strong" | "em")[] | null;
  prev: Delim | null;
  next: Delim | null;
}

type Token = MdInline | Delim;

const ASCII_PUNCT = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~";
const UNICODE_WS = /\s/u;
const UNICODE_PUNCT = /[\p{P}\p{S}]/u;

const WS = 0;
const PUNCT = 1;
const OTHER = 2;
type CharClass = typeof WS | typeof PUNCT | typeof OTHER;

function classifyCode(cp: number): CharClass {
  if (cp < 128) {
    if (cp === 32 || (cp >= 9 && cp <= 13)) return WS;
    return ASCII_PUNCT.includes(String.fromCharCode(cp)) ? PUNCT : OTHER;
  }
  const ch = String.fromCodePoint(cp);
  return UNICODE_WS.test(ch) ? WS : UNICODE_PUNCT.test(ch) ? PUNCT : OTHER;
}

/** Class of the code point before index i (surrogate pairs included); the start counts as space. */
function classBefore(s: string, i: number): CharClass {
  if (i <= 0) return WS;
  const low = s.charCodeAt(i - 1);
  if (low >= 0xdc00 && low <= 0xdfff && i >= 2) {
    const high = s.charCodeAt(i - 2);
    if (high >= 0xd800 && high <= 0xdbff) return classifyCode(s.codePointAt(i - 2)!);
  }
  return classifyCode(low);
}

/** Class of the code point at index i; the end counts as space. */
function classAt(s: string, i: number): CharClass {
  return i >= s.length ? WS : classifyCode(s.codePointAt(i)!);
}

function isSpecial(c: string): boolean {
  return c === "\\" || c === "\n" || c === "`" || c === "[" || c === "*" || c === "_";
}

/** One shared (frozen) node for every line break: long replies have many. */
const BREAK: MdInline = Object.freeze({ type: "break" });

export function parseInline(src: string): MdInline[] {
  const tokens = tokenize(src);
  processEmphasis(tokens);
  return buildTree(tokens);
}

function tokenize(s: string): Token[] {
  const tokens: Token[] = [];
  let text = "";
  const flush = () => {
    if (text) tokens.push({ type: "text", text });
    text = "";
  };

  // Backtick runs by length, in order, so each code span finds its closer without rescanning.
  const runs = new Map<number, { starts: number[]; next: number }>();
  for (let i = 0; i < s.length; ) {
    if (s[i] !== "`") {
      i++;
      continue;
    }
    let j = i;
    while (s[j] === "`") j++;
    const len = j - i;
    let entry = runs.get(len);
    if (!entry) runs.set(len, (entry = { starts: [], next: 0 }));
    entry.starts.push(i);
    i = j;
  }

  let lastDelim: Delim | null = null;
  let i = 0;
  while (i < s.length) {
    const c = s[i]!;

    if (c === "\\") {
      const n = s[i + 1];
      if (n === "\n") {
        // Backslash at the end of a line: a hard break, which a newline already is.
        i++;
      } else if (n !== undefined && ASCII_PUNCT.includes(n)) {
        text += n;
        i += 2;
      } else {
        text += c;
        i++;
      }
      continue;
    }

    if (c === "\n") {
      flush();
      tokens.push(BREAK);
      i++;
      continue;
    }

    if (c === "`") {
      let j = i;
      while (s[j] === "`") j++;
      const len = j - i;
      const entry = runs.get(len);
      let close = -1;
      if (entry) {
        while (entry.next < entry.starts.length && entry.starts[entry.next]! < j) entry.next++;
        if (entry.next < entry.starts.length) close = entry.starts[entry.next]!;
      }
      if (close === -1) {
        text += s.slice(i, j);
        i = j;
        continue;
      }
      let code = s.slice(j, close).replace(/\n/g, " ");
      if (code.length >= 2 && code[0] === " " && code[code.length - 1] === " " && code.trim() !== "") code = code.slice(1, -1);
      flush();
      tokens.push({ type: "code", text: code });
      i = close + len;
      continue;
    }

    if (c === "[") {
      const link = matchLink(s, i);
      if (link) {
        flush();
        tokens.push(link.node);
        i = link.end;
      } else {
        text += c;
        i++;
      }
      continue;
    }

    if (c === "*" || c === "_") {
      let j = i;
      while (s[j] === c) j++;
      const before = classBefore(s, i);
      const after = classAt(s, j);
      // CommonMark's left- and right-flanking delimiter runs.
      const left = after !== WS && (after !== PUNCT || before !== OTHER);
      const right = before !== WS && (before !== PUNCT || after !== OTHER);
      // `_` may not open or close inside a word (snake_case_names stay text).
      const canOpen = c === "*" ? left : left && (!right || before === PUNCT);
      const canClose = c === "*" ? right : right && (!left || after === PUNCT);
      flush();
      const delim: Delim = {
        type: "delim", ch: c, count: j - i, orig: j - i, canOpen, canClose, pos: tokens.length,
        opens: null, closes: null, prev: lastDelim, next: null,
      };
      if (lastDelim) lastDelim.next = delim;
      lastDelim = delim;
      tokens.push(delim);
      i = j;
      continue;
    }

    let j = i + 1;
    while (j < s.length && !isSpecial(s[j]!)) j++;
    text += s.slice(i, j);
    i = j;
  }
  flush();
  return tokens;
}

/**
 * `[text](url)` or `[text](url "title")` at s[start], when url is allowed (safeHref). Scans stop
 * at the next `[` so that failed attempts never rescan the same characters (linear time); link
 * text therefore cannot contain unescaped brackets.
 */
function matchLink(s: string, start: number): { node: MdInline; end: number } | null {
  let i = start + 1;
  while (i < s.length) {
    const c = s[i];
    if (c === "\\") i += 2;
    else if (c === "[") return null;
    else if (c === "]") break;
    else i++;
  }
  if (i >= s.length || s[i + 1] !== "(") return null;
  const textEnd = i;

  i += 2;
  while (s[i] === " " || s[i] === "\t") i++;
  let dest = "";
  let depth = 0;
  while (i < s.length) {
    const c = s[i]!;
    if (c === "\\" && i + 1 < s.length && ASCII_PUNCT.includes(s[i + 1]!)) {
      dest += s[i + 1];
      i += 2;
      continue;
    }
    if (c === " " || c === "\t" || c === "\n" || c === "[" || c === "]") break;
    if (c === "(") depth++;
    else if (c === ")") {
      if (depth === 0) break;
      depth--;
    }
    dest += c;
    i++;
  }
  while (s[i] === " " || s[i] === "\t" || s[i] === "\n") i++;
  const q = s[i];
  if (q === '"' || q === "'") {
    i++;
    while (i < s.length && s[i] !== q) {
      if (s[i] === "[" || s[i] === "]") return null;
      i += s[i] === "\\" ? 2 : 1;
    }
    if (i >= s.length) return null;
    i++;
    while (s[i] === " " || s[i] === "\t" || s[i] === "\n") i++;
  }
  if (s[i] !== ")") return null;

  const href = safeHref(dest);
  if (href === null) return null;
  const label = s.slice(start + 1, textEnd);
  const children = label.trim() === "" ? [{ type: "text", text: href } as const] : parseInline(label);
  return { node: { type: "link", href, children }, end: i + 1 };
}

/** CommonMark's "process emphasis" over the delimiter list: records matches on the delimiters. */
function processEmphasis(tokens: Token[]): void {
  let closer: Delim | null = null;
  for (const t of tokens) {
    if (t.type === "delim") {
      closer = t;
      break;
    }
  }
  const remove = (d: Delim) => {
    if (d.prev) d.prev.next = d.next;
    if (d.next) d.next.prev = d.prev;
  };
  // Per closer kind, the token position below which no opener can match (already searched).
  const bottoms: number[] = new Array<number>(12).fill(-1);

  while (closer) {
    if (!closer.canClose) {
      closer = closer.next;
      continue;
    }
    const key = (closer.ch === "*" ? 0 : 6) + (closer.canOpen ? 3 : 0) + (closer.orig % 3);
    const bottom = bottoms[key]!;
    let opener = closer.prev;
    while (opener && opener.pos > bottom) {
      if (opener.ch === closer.ch && opener.canOpen) {
        const odd = (opener.canClose || closer.canOpen) && (opener.orig + closer.orig) % 3 === 0 && !(opener.orig % 3 === 0 && closer.orig % 3 === 0);
        if (!odd) break;
      }
      opener = opener.prev;
    }

    if (opener && opener.pos > bottom) {
      const use = opener.count >= 2 && closer.count >= 2 ? 2 : 1;
      const kind = use === 2 ? "strong" : "em";
      opener.count -= use;
      closer.count -= use;
      (opener.opens ??= []).push(kind);
      (closer.closes ??= []).push(kind);
      // Delimiters between the two can no longer match anything: they become text.
      opener.next = closer;
      closer.prev = opener;
      if (opener.count === 0) remove(opener);
      if (closer.count === 0) {
        const next: Delim | null = closer.next;
        remove(closer);
        closer = next;
      }
    } else {
      bottoms[key] = closer.prev?.pos ?? -1;
      const next: Delim | null = closer.next;
      if (!closer.canOpen) remove(closer);
      closer = next;
    }
  }
}

function buildTree(tokens: Token[]): MdInline[] {
  const root: MdInline[] = [];
  const frames: { kind: "strong" | "em"; children: MdInline[] }[] = [];
  const top = () => (frames.length ? frames[frames.length - 1]!.children : root);
  const append = (node: MdInline) => {
    const list = top();
    const last = list[list.length - 1];
    if (node.type === "text" && last?.type === "text") list[list.length - 1] = { type: "text", text: last.text + node.text };
    else list.push(node);
  };

  for (const t of tokens) {
    if (t.type !== "delim") {
      append(t);
      continue;
    }
    if (t.closes) {
      for (const kind of t.closes) {
        const frame = frames.pop();
        if (!frame) break; // unreachable: matches are well nested
        append({ type: kind, children: frame.children });
      }
    }
    if (t.count > 0) append({ type: "text", text: t.ch.repeat(t.count) });
    if (t.opens) for (let k = t.opens.length - 1; k >= 0; k--) frames.push({ kind: t.opens[k]!, children: [] });
  }
  // Unreachable for well-formed matches, but never lose content.
  while (frames.length) {
    const frame = frames.pop()!;
    append({ type: frame.kind, children: frame.children });
  }
  return root;
}
