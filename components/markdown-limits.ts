import type { Nodes, Parents, RootContent, Root } from "mdast";
import type { Processor } from "unified";

// Bounds that keep rendering a reply cheap whatever the model wrote. The Markdown parser
// (micromark) is superlinear on some inputs (long runs of unmatched `*`, `]`, nested list
// markers) and the tree walkers after it recurse, so a hostile reply could freeze the page or
// overflow the stack. Replies over MARKDOWN_MAX_CHARS, or with a line that stacks many list or
// quote markers (`1. 1. 1. ...`, quadratic in the parser), are therefore shown as plain text
// (as while streaming), and nodes nested deeper than MAX_DEPTH become their plain text.

/** Longer replies are shown as plain text, so that parsing one stays around a second at worst. */
export const MARKDOWN_MAX_CHARS = 20_000;

/**
 * A line that opens 16 or more containers at once. Unambiguous (each marker is followed by its
 * own run of blanks), so it cannot backtrack.
 */
const STACKED_MARKERS = /^[ \t]*(?:(?:[>*+-]|\d{1,9}[.)])[ \t]+){16}/m;

/** Whether the reply is shown as plain text instead of being parsed as Markdown. */
export function tooCostlyForMarkdown(text: string): boolean {
  return text.length > MARKDOWN_MAX_CHARS || STACKED_MARKERS.test(text);
}

/** Tree depth (root = 0) below which nodes are flattened to text; real replies stay far above it. */
export const MAX_DEPTH = 32;

/** Parents whose children are inline content: a flattened child becomes a text node there. */
const PHRASING_PARENTS = new Set<string>(["paragraph", "heading", "tableCell", "emphasis", "strong", "delete", "link", "linkReference"]);

/** All literal text under the node, in order, without recursion (the subtree may be very deep). */
function plainText(node: Nodes): string {
  const parts: string[] = [];
  const stack: Nodes[] = [node];
  while (stack.length > 0) {
    const n = stack.pop()!;
    if ("value" in n) parts.push(n.value);
    else if (n.type === "break") parts.push("\n");
    if ("children" in n) for (let i = n.children.length - 1; i >= 0; i--) stack.push(n.children[i]!);
  }
  return parts.join("");
}

/** The node as plain text, in a node its parent may hold. */
function flattened(node: Nodes, parent: Parents): RootContent {
  const text = { type: "text", value: plainText(node) } as const;
  if (PHRASING_PARENTS.has(parent.type)) return text;
  if (parent.type === "list") return { type: "listItem", spread: false, children: [{ type: "paragraph", children: [text] }] };
  if (parent.type === "table") return { type: "tableRow", children: [{ type: "tableCell", children: [text] }] };
  if (parent.type === "tableRow") return { type: "tableCell", children: [text] };
  return { type: "paragraph", children: [text] };
}

/** Replaces every parent node at depth MAX_DEPTH with its plain text. Iterative. */
export function capDepth(tree: Root): Root {
  const stack: { node: Parents; depth: number }[] = [{ node: tree, depth: 0 }];
  while (stack.length > 0) {
    const { node, depth } = stack.pop()!;
    const children = node.children as RootContent[];
    for (let i = 0; i < children.length; i++) {
      const child = children[i]!;
      if (!("children" in child)) continue;
      if (depth + 1 >= MAX_DEPTH) children[i] = flattened(child, node);
      else stack.push({ node: child, depth: depth + 1 });
    }
  }
  return tree;
}

/**
 * remark plugin: caps the depth right after parsing, before any other plugin's tree walk (GFM's
 * run inside the parser, so this one must be listed before remark-gfm).
 */
export function remarkCapDepth(this: Processor): undefined {
  // The field remark-parse reads its mdast extensions from (typed by remark-parse, which the
  // app does not import itself).
  const data = this.data() as { fromMarkdownExtensions?: { transforms: ((tree: Root) => Root)[] }[] };
  (data.fromMarkdownExtensions ??= []).push({ transforms: [capDepth] });
  return undefined;
}
