import { describe, expect, it } from "vitest";
import { MAX_DEPTH, parseInline, parseMarkdown, safeHref, type MdBlock, type MdInline } from "./markdown-parse";

const t = (text: string): MdInline => ({ type: "text", text });
const br: MdInline = { type: "break" };
const para = (...children: MdInline[]): MdBlock => ({ type: "paragraph", children });

/** All text in the AST, in order (what a reader would see). */
function plain(nodes: (MdBlock | MdInline)[]): string {
  return nodes
    .map((n): string => {
      switch (n.type) {
        case "text":
        case "code":
          return n.text;
        case "code_block":
          return n.text;
        case "break":
          return "\n";
        case "list":
          return n.items.map((item) => plain(item.content) + plain(item.children)).join("|");
        default:
          return plain(n.children);
      }
    })
    .join("");
}

/** Every node of the given type anywhere in the AST. */
function findAll<T extends MdBlock["type"] | MdInline["type"]>(
  nodes: (MdBlock | MdInline)[],
  type: T,
): Extract<MdBlock | MdInline, { type: T }>[] {
  const found: (MdBlock | MdInline)[] = [];
  const walk = (list: (MdBlock | MdInline)[]) => {
    for (const n of list) {
      if (n.type === type) found.push(n);
      if ("children" in n) walk(n.children);
      if (n.type === "list") for (const item of n.items) walk([...item.content, ...item.children]);
    }
  };
  walk(nodes);
  return found as Extract<MdBlock | MdInline, { type: T }>[];
}

describe("blocks", () => {
  it("splits paragraphs on blank lines and turns single newlines into breaks", () => {
    expect(parseMarkdown("one\ntwo\n\n\nthree")).toEqual([para(t("one"), br, t("two")), para(t("three"))]);
    expect(parseMarkdown("a\r\nb\r\n\r\nc")).toEqual([para(t("a"), br, t("b")), para(t("c"))]);
    expect(parseMarkdown("")).toEqual([]);
    expect(parseMarkdown("  \n\t\n")).toEqual([]);
  });

  it("trims paragraph lines", () => {
    expect(parseMarkdown("  indented  \n    more")).toEqual([para(t("indented"), br, t("more"))]);
  });

  it("parses headings # to ###, with inline formatting and optional closing hashes", () => {
    expect(parseMarkdown("# One\n## Two *x* ##\n### Three")).toEqual([
      { type: "heading", level: 1, children: [t("One")] },
      { type: "heading", level: 2, children: [t("Two "), { type: "em", children: [t("x")] }] },
      { type: "heading", level: 3, children: [t("Three")] },
    ]);
    expect(parseMarkdown("# C#")).toEqual([{ type: "heading", level: 1, children: [t("C#")] }]);
  });

  it("keeps #### and #hashtags as text", () => {
    expect(parseMarkdown("#### Four")).toEqual([para(t("#### Four"))]);
    expect(parseMarkdown("#hashtag")).toEqual([para(t("#hashtag"))]);
  });

  it("lets a heading interrupt a paragraph", () => {
    expect(parseMarkdown("text\n# Title\nmore")).toEqual([
      para(t("text")),
      { type: "heading", level: 1, children: [t("Title")] },
      para(t("more")),
    ]);
  });

  it("parses bullet lists with - and *", () => {
    expect(parseMarkdown("- a\n- b\n* c")).toEqual([
      {
        type: "list",
        ordered: false,
        start: 1,
        items: [
          { content: [t("a")], children: [] },
          { content: [t("b")], children: [] },
          { content: [t("c")], children: [] },
        ],
      },
    ]);
  });

  it("parses ordered lists and keeps their start number", () => {
    const [list] = parseMarkdown("1. one\n2. two\n3. three");
    expect(list).toMatchObject({ type: "list", ordered: true, start: 1 });
    expect(list?.type === "list" && list.items.map((i) => plain(i.content))).toEqual(["one", "two", "three"]);
    expect(parseMarkdown("7. seven\n8. eight")[0]).toMatchObject({ type: "list", ordered: true, start: 7 });
  });

  it("lets a list interrupt a paragraph (but not a number in running text)", () => {
    expect(parseMarkdown("Steps:\n- a\n- b").map((b) => b.type)).toEqual(["paragraph", "list"]);
    expect(parseMarkdown("Steps:\n1. a").map((b) => b.type)).toEqual(["paragraph", "list"]);
    expect(parseMarkdown("In the year\n2024. it rained")).toEqual([para(t("In the year"), br, t("2024. it rained"))]);
  });

  it("starts a new list when bullets switch to numbers", () => {
    const blocks = parseMarkdown("- a\n1. b");
    expect(blocks.map((b) => b.type === "list" && b.ordered)).toEqual([false, true]);
  });

  it("nests lists by indentation, with inline formatting in nested items", () => {
    const blocks = parseMarkdown("- top **bold**\n  - nested *em* and `code`\n  - [link](https://example.com)\n- next");
    expect(blocks).toHaveLength(1);
    const list = blocks[0]!;
    if (list.type !== "list") throw new Error("expected a list");
    expect(list.items).toHaveLength(2);
    expect(list.items[0]!.content).toEqual([t("top "), { type: "strong", children: [t("bold")] }]);
    expect(list.items[0]!.children).toEqual([
      {
        type: "list",
        ordered: false,
        start: 1,
        items: [
          { content: [t("nested "), { type: "em", children: [t("em")] }, t(" and "), { type: "code", text: "code" }], children: [] },
          { content: [{ type: "link", href: "https://example.com", children: [t("link")] }], children: [] },
        ],
      },
    ]);
    expect(list.items[1]!.content).toEqual([t("next")]);
  });

  it("nests bullets under numbered items with 2 or 3 spaces", () => {
    for (const pad of ["  ", "   "]) {
      const [list] = parseMarkdown(`1. one\n${pad}- sub\n2. two`);
      if (list?.type !== "list") throw new Error("expected a list");
      expect(list.items).toHaveLength(2);
      expect(list.items[0]!.children[0]).toMatchObject({ type: "list", ordered: false });
    }
  });

  it("keeps blank-line separated items in one list and indented paragraphs in their item", () => {
    const [list, ...rest] = parseMarkdown("- a\n\n- b\n\n  more about b\n\nafter");
    if (list?.type !== "list") throw new Error("expected a list");
    expect(list.items.map((i) => plain(i.content))).toEqual(["a", "b"]);
    expect(list.items[1]!.children).toEqual([para(t("more about b"))]);
    expect(rest).toEqual([para(t("after"))]);
  });

  it("continues an item lazily with an unindented line", () => {
    const [list] = parseMarkdown("- a\ncontinued");
    if (list?.type !== "list") throw new Error("expected a list");
    expect(list.items[0]!.content).toEqual([t("a"), br, t("continued")]);
  });

  it("puts fenced code inside list items", () => {
    const [list] = parseMarkdown("1. run\n   ```sh\n   npm test\n   ```\n2. done");
    if (list?.type !== "list") throw new Error("expected a list");
    expect(list.items[0]!.children).toEqual([{ type: "code_block", lang: "sh", text: "npm test", closed: true }]);
    expect(plain(list.items[1]!.content)).toBe("done");
  });

  it("does not read **bold** or *em* at the start of a line as a list", () => {
    expect(parseMarkdown("**Note:** x")).toEqual([para({ type: "strong", children: [t("Note:")] }, t(" x"))]);
    expect(parseMarkdown("*em*")).toEqual([para({ type: "em", children: [t("em")] })]);
    expect(parseMarkdown("---")).toEqual([para(t("---"))]);
  });

  it("parses fenced code blocks verbatim, with a language", () => {
    const src = "```ts\nconst a = **b** + `c`;\n\n<script>alert(1)</script>\n```\nafter";
    expect(parseMarkdown(src)).toEqual([
      { type: "code_block", lang: "ts", text: "const a = **b** + `c`;\n\n<script>alert(1)</script>", closed: true },
      para(t("after")),
    ]);
  });

  it("supports ~~~ fences, longer fences and fences that interrupt a paragraph", () => {
    expect(parseMarkdown("~~~\nx\n~~~")).toEqual([{ type: "code_block", lang: "", text: "x", closed: true }]);
    expect(parseMarkdown("````md\n```\ninner\n```\n````")).toEqual([
      { type: "code_block", lang: "md", text: "```\ninner\n```", closed: true },
    ]);
    expect(parseMarkdown("text\n```\ncode\n```").map((b) => b.type)).toEqual(["paragraph", "code_block"]);
  });

  it("treats an unclosed fence (a reply still streaming) as code to the end", () => {
    expect(parseMarkdown("Here:\n\n```python\ndef f():\n    return **x**\n")).toEqual([
      para(t("Here:")),
      { type: "code_block", lang: "python", text: "def f():\n    return **x**\n", closed: false },
    ]);
    expect(parseMarkdown("```")).toEqual([{ type: "code_block", lang: "", text: "", closed: false }]);
  });

  it("parses block quotes, nested quotes and lazy continuation", () => {
    expect(parseMarkdown("> quoted *em*\n> > inner\n\nafter")).toEqual([
      {
        type: "blockquote",
        children: [para(t("quoted "), { type: "em", children: [t("em")] }), { type: "blockquote", children: [para(t("inner"))] }],
      },
      para(t("after")),
    ]);
    expect(parseMarkdown("> a\nb")).toEqual([{ type: "blockquote", children: [para(t("a"), br, t("b"))] }]);
    expect(parseMarkdown("> - item\n> - item 2")[0]).toMatchObject({ type: "blockquote", children: [{ type: "list" }] });
  });

  it("caps container nesting: deeper markers are text", () => {
    const blocks = parseMarkdown(">".repeat(MAX_DEPTH + 5) + " deep");
    expect(findAll(blocks, "blockquote")).toHaveLength(MAX_DEPTH);
    expect(plain(blocks)).toBe(">".repeat(5) + " deep");
  });
});

describe("inlines", () => {
  it("parses inline code, taking its content literally", () => {
    expect(parseInline("run `npm *test*` now")).toEqual([t("run "), { type: "code", text: "npm *test*" }, t(" now")]);
    expect(parseInline("``a ` b``")).toEqual([{ type: "code", text: "a ` b" }]);
    expect(parseInline("` `` `")).toEqual([{ type: "code", text: "``" }]);
  });

  it("parses **bold**, __bold__, *italic* and _italic_", () => {
    expect(parseInline("**b** __b__ *i* _i_")).toEqual([
      { type: "strong", children: [t("b")] },
      t(" "),
      { type: "strong", children: [t("b")] },
      t(" "),
      { type: "em", children: [t("i")] },
      t(" "),
      { type: "em", children: [t("i")] },
    ]);
  });

  it("nests emphasis", () => {
    expect(parseInline("***both***")).toEqual([{ type: "em", children: [{ type: "strong", children: [t("both")] }] }]);
    expect(parseInline("**bold *and em* here**")).toEqual([
      { type: "strong", children: [t("bold "), { type: "em", children: [t("and em")] }, t(" here")] },
    ]);
  });

  it("keeps intraword underscores and spaced asterisks literal", () => {
    expect(parseInline("snake_case_name and a * b * c")).toEqual([t("snake_case_name and a * b * c")]);
    expect(parseInline("2*3*4")).toEqual([t("2"), { type: "em", children: [t("3")] }, t("4")]);
  });

  it("renders unbalanced markers literally", () => {
    expect(parseInline("**unclosed bold")).toEqual([t("**unclosed bold")]);
    expect(parseInline("*open and **mixed")).toEqual([t("*open and **mixed")]);
    expect(parseInline("**a*")).toEqual([t("*"), { type: "em", children: [t("a")] }]);
    expect(parseInline("`unclosed code")).toEqual([t("`unclosed code")]);
    expect(parseInline("[no link")).toEqual([t("[no link")]);
    expect(parseInline("[text](https://unclosed")).toEqual([t("[text](https://unclosed")]);
    expect(parseMarkdown("streaming **bold so far")).toEqual([para(t("streaming **bold so far"))]);
  });

  it("honours backslash escapes", () => {
    expect(parseInline("\\*not em\\* \\`x\\` \\[y](https://z)")).toEqual([t("*not em* `x` [y](https://z)")]);
    expect(parseInline("C:\\path")).toEqual([t("C:\\path")]);
  });

  it("lets emphasis span lines within a paragraph", () => {
    expect(parseMarkdown("**a\nb**")).toEqual([para({ type: "strong", children: [t("a"), br, t("b")] })]);
  });
});

describe("links", () => {
  it("turns http, https and mailto links into link nodes with parsed text", () => {
    expect(parseInline("see [the **docs**](https://example.com/a?b=1#c) or [mail](mailto:a@b.c) or [x](HTTP://EXAMPLE.COM)")).toEqual([
      t("see "),
      { type: "link", href: "https://example.com/a?b=1#c", children: [t("the "), { type: "strong", children: [t("docs")] }] },
      t(" or "),
      { type: "link", href: "mailto:a@b.c", children: [t("mail")] },
      t(" or "),
      { type: "link", href: "HTTP://EXAMPLE.COM", children: [t("x")] },
    ]);
  });

  it("accepts balanced parentheses and a title", () => {
    expect(parseInline('[w](https://en.wikipedia.org/wiki/Foo_(bar) "Title")')).toEqual([
      { type: "link", href: "https://en.wikipedia.org/wiki/Foo_(bar)", children: [t("w")] },
    ]);
  });

  it("shows the URL when the link text is empty", () => {
    expect(parseInline("[](https://a.b)")).toEqual([{ type: "link", href: "https://a.b", children: [t("https://a.b")] }]);
  });

  it.each([
    "javascript:alert(1)",
    "JavaScript:alert(1)",
    "data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==",
    "vbscript:msgbox(1)",
    "file:///etc/passwd",
    "/relative/path",
    "relative.html",
    "./x",
    "//evil.example.com",
    "#fragment",
    "",
    "java\\tscript:alert(1)",
  ])("does not link %j: the source stays literal text", (url) => {
    const src = `[click](${url})`;
    const nodes = parseInline(src);
    expect(findAll(nodes, "link")).toEqual([]);
    expect(plain(nodes)).toBe(src);
  });

  it("never links a URL with whitespace or control characters", () => {
    expect(parseInline("[a](java\tscript:alert(1))").some((n) => n.type === "link")).toBe(false);
    expect(safeHref("https://ok.example/x")).toBe("https://ok.example/x");
    expect(safeHref("mailto:a@b.c")).toBe("mailto:a@b.c");
    for (const bad of ["javascript:alert(1)", " https://x", "https://x\ny", "https://x\u0000", "\u0001javascript:x", "data:,x", "vbscript:x", "//x", "/x", "x"]) {
      expect(safeHref(bad)).toBeNull();
    }
  });

  it("keeps links atomic so emphasis inside and around them works", () => {
    expect(parseInline("**[a](https://x.y)**")).toEqual([
      { type: "strong", children: [{ type: "link", href: "https://x.y", children: [t("a")] }] },
    ]);
  });
});

describe("safety: HTML is text", () => {
  it("keeps <script> and other tags as literal text nodes", () => {
    const blocks = parseMarkdown("<script>alert(1)</script>\n\n<img src=x onerror=alert(1)> **<b>x</b>**");
    expect(blocks).toEqual([
      para(t("<script>alert(1)</script>")),
      para(t("<img src=x onerror=alert(1)> "), { type: "strong", children: [t("<b>x</b>")] }),
    ]);
  });

  it("keeps HTML inside headings, lists, quotes and code as text", () => {
    const src = "# <h1>x</h1>\n- <iframe src=javascript:alert(1)>\n> <style>*{}</style>\n\n`<script>`";
    const blocks = parseMarkdown(src);
    expect(plain(blocks)).toContain("<h1>x</h1>");
    expect(plain(blocks)).toContain("<iframe src=javascript:alert(1)>");
    expect(plain(blocks)).toContain("<style>*{}</style>");
    expect(findAll(blocks, "code")).toEqual([{ type: "code", text: "<script>" }]);
    expect(findAll(blocks, "link")).toEqual([]);
  });
});

describe("robustness", () => {
  it("parses a 200 KB reply (linear time, sanity check only)", () => {
    const chunk =
      "Some **bold** and *italic* text with `code`, a [link](https://example.com/x) and snake_case.\n" +
      "A second line with an unmatched * star and a [bracket.\n\n";
    const count = Math.ceil(200_000 / chunk.length);
    const src = chunk.repeat(count);
    expect(src.length).toBeGreaterThanOrEqual(200_000);
    const blocks = parseMarkdown(src);
    expect(blocks).toHaveLength(count);
    expect(blocks.every((b) => b.type === "paragraph")).toBe(true);
  });

  it("survives pathological 200 KB inputs", () => {
    const n = 200_000;
    const rep = (s: string) => s.repeat(Math.ceil(n / s.length)).slice(0, n);
    for (const src of [rep("*"), rep("**a "), rep("_a "), rep("*a**"), rep("["), rep("[a]("), rep("[a]((((("), rep("`"), rep("> "), rep("- "), rep("a\n"), rep("\\")]) {
      const blocks = parseMarkdown(src);
      expect(blocks.length).toBeGreaterThan(0);
    }
    // Backtick runs of every length: each opener finds (or misses) its closer without rescanning.
    const ticks = Array.from({ length: 600 }, (_, i) => "`".repeat(i + 1)).join(" ");
    expect(plain(parseMarkdown(ticks))).toBe(ticks);
  });
});
