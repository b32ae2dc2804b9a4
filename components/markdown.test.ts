import { createElement } from "react";
import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import { Markdown } from "./markdown";
import { MARKDOWN_MAX_CHARS, MAX_DEPTH } from "./markdown-limits";
import { safeUrl, urlKind } from "./markdown-url";

// The reply renderer as the browser gets it: static markup of <Markdown>. Safety cases assert
// on the markup itself: no element, handler or URL that could run script reaches it.

const render = (text: string) => renderToStaticMarkup(createElement(Markdown, { text }));

/** The markup without its outer <div class="md"> and the newlines around tags (between blocks, after <br/>). */
function inner(text: string): string {
  const html = render(text);
  expect(html.startsWith('<div class="md">') && html.endsWith("</div>")).toBe(true);
  return html.slice('<div class="md">'.length, -"</div>".length).replace(/\n(?=<)|(?<=>)\n/g, "");
}

/** What a reader sees: the text with tags removed and entities decoded. */
function plain(html: string): string {
  return html
    .replace(/<br\/>/g, "\n")
    .replace(/<[^>]*>/g, "")
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&quot;/g, '"')
    .replace(/&#x27;/g, "'")
    .replace(/&amp;/g, "&");
}

const count = (html: string, tag: string) => (html.match(new RegExp(`<${tag}[\\s>/]`, "g")) ?? []).length;

/** Every tag React emitted, with its attributes (text never contains a raw `<`: React escapes it). */
function tagsOf(html: string): string[] {
  return html.match(/<[a-z][^>]*>/gi) ?? [];
}

/** Nothing in the markup can run script: no script-capable element, no handler, no unsafe URL. */
function expectInert(html: string) {
  const tags = tagsOf(html);
  for (const tag of tags) {
    expect(tag).not.toMatch(/^<(script|iframe|style|object|embed|svg|math|form|link|meta|base)\b/i);
    expect(tag).not.toMatch(/\son[a-z]+=/i);
    expect(tag).not.toMatch(/\s(style|srcdoc|formaction)=/i);
    for (const [, value] of tag.matchAll(/\s(?:href|src|action|cite|poster)="([^"]*)"/gi)) {
      const url = value!.replace(/&amp;/g, "&");
      expect(urlKind(url), `${url} in ${tag}`).not.toBeNull();
    }
  }
  expect(html).not.toMatch(/<[^>]*(javascript|vbscript|data):/i);
}

describe("blocks", () => {
  it("splits paragraphs on blank lines and turns single newlines into breaks", () => {
    expect(inner("one\ntwo\n\n\nthree")).toBe("<p>one<br/>two</p><p>three</p>");
    expect(inner("a\r\nb\r\n\r\nc")).toBe("<p>a<br/>b</p><p>c</p>");
    expect(inner("")).toBe("");
    expect(inner("  \n\t\n")).toBe("");
  });

  it("trims paragraph lines", () => {
    expect(plain(inner("  indented  \n    more"))).toBe("indented\nmore");
  });

  it("parses headings # to ###, with inline formatting and optional closing hashes, below the page's h2", () => {
    expect(inner("# One\n## Two *x* ##\n### Three")).toBe("<h3>One</h3><h4>Two <em>x</em></h4><h5>Three</h5>");
    expect(inner("# C#")).toBe("<h3>C#</h3>");
  });

  it("shows #### and deeper as the smallest heading, and keeps #hashtags as text", () => {
    expect(inner("#### Four\n###### Six")).toBe("<h6>Four</h6><h6>Six</h6>");
    expect(inner("#hashtag")).toBe("<p>#hashtag</p>");
  });

  it("lets a heading interrupt a paragraph", () => {
    expect(inner("text\n# Title\nmore")).toBe("<p>text</p><h3>Title</h3><p>more</p>");
  });

  it("parses bullet lists with - and *", () => {
    const html = inner("- a\n- b\n* c");
    expect(count(html, "li")).toBe(3);
    expect(plain(html)).toBe("abc");
    expect(count(html, "ol")).toBe(0);
  });

  it("parses ordered lists and keeps their start number", () => {
    expect(inner("1. one\n2. two\n3. three")).toBe("<ol><li>one</li><li>two</li><li>three</li></ol>");
    expect(inner("7. seven\n8. eight")).toBe('<ol start="7"><li>seven</li><li>eight</li></ol>');
  });

  it("lets a list interrupt a paragraph (but not a number in running text)", () => {
    expect(inner("Steps:\n- a\n- b")).toBe("<p>Steps:</p><ul><li>a</li><li>b</li></ul>");
    expect(inner("Steps:\n1. a")).toBe("<p>Steps:</p><ol><li>a</li></ol>");
    expect(inner("In the year\n2024. it rained")).toBe("<p>In the year<br/>2024. it rained</p>");
  });

  it("starts a new list when bullets switch to numbers", () => {
    expect(inner("- a\n1. b")).toBe("<ul><li>a</li></ul><ol><li>b</li></ol>");
  });

  it("nests lists by indentation, with inline formatting in nested items", () => {
    expect(inner("- top **bold**\n  - nested *em* and `code`\n  - [link](https://example.com)\n- next")).toBe(
      "<ul><li>top <strong>bold</strong><ul><li>nested <em>em</em> and <code>code</code></li>" +
        '<li><a href="https://example.com" rel="noopener noreferrer nofollow" target="_blank">link</a></li></ul></li>' +
        "<li>next</li></ul>",
    );
  });

  it("nests bullets under numbered items indented to the item's text", () => {
    expect(inner("1. one\n   - sub\n2. two")).toBe("<ol><li>one<ul><li>sub</li></ul></li><li>two</li></ol>");
  });

  it("keeps blank-line separated items in one list and indented paragraphs in their item", () => {
    expect(inner("- a\n\n- b\n\n  more about b\n\nafter")).toBe("<ul><li><p>a</p></li><li><p>b</p><p>more about b</p></li></ul><p>after</p>");
  });

  it("continues an item lazily with an unindented line", () => {
    expect(inner("- a\ncontinued")).toBe("<ul><li>a<br/>continued</li></ul>");
  });

  it("puts fenced code inside list items", () => {
    expect(inner("1. run\n   ```sh\n   npm test\n   ```\n2. done")).toBe(
      '<ol><li>run<pre><code class="language-sh">npm test</code></pre></li><li>done</li></ol>',
    );
  });

  it("does not read **bold** or *em* at the start of a line as a list", () => {
    expect(inner("**Note:** x")).toBe("<p><strong>Note:</strong> x</p>");
    expect(inner("*em*")).toBe("<p><em>em</em></p>");
    expect(inner("---")).toBe("<hr/>");
  });

  it("parses fenced code blocks verbatim, with a language", () => {
    expect(inner("```ts\nconst a = **b** + `c`;\n\n<script>alert(1)</script>\n```\nafter")).toBe(
      '<pre><code class="language-ts">const a = **b** + `c`;\n\n&lt;script&gt;alert(1)&lt;/script&gt;</code></pre><p>after</p>',
    );
  });

  it("supports ~~~ fences, longer fences and fences that interrupt a paragraph", () => {
    expect(inner("~~~\nx\n~~~")).toBe("<pre><code>x</code></pre>");
    expect(inner("````md\n```\ninner\n```\n````")).toBe('<pre><code class="language-md">```\ninner\n```</code></pre>');
    expect(inner("text\n```\ncode\n```")).toBe("<p>text</p><pre><code>code</code></pre>");
  });

  it("treats an unclosed fence (a reply still streaming) as code to the end", () => {
    expect(inner("Here:\n\n```python\ndef f():\n    return **x**\n")).toBe(
      '<p>Here:</p><pre><code class="language-python">def f():\n    return **x**</code></pre>',
    );
    expect(inner("```")).toBe("<pre><code></code></pre>");
  });

  it("parses block quotes, nested quotes and lazy continuation", () => {
    expect(inner("> quoted *em*\n> > inner\n\nafter")).toBe(
      "<blockquote><p>quoted <em>em</em></p><blockquote><p>inner</p></blockquote></blockquote><p>after</p>",
    );
    expect(inner("> a\nb")).toBe("<blockquote><p>a<br/>b</p></blockquote>");
    expect(inner("> - item\n> - item 2")).toBe("<blockquote><ul><li>item</li><li>item 2</li></ul></blockquote>");
  });

  it("caps nesting: deeper content is plain text", () => {
    const html = inner(">".repeat(MAX_DEPTH + 5) + " deep");
    expect(count(html, "blockquote")).toBeLessThan(MAX_DEPTH);
    expect(plain(html)).toBe("deep");
    const list = inner(Array.from({ length: 60 }, (_, i) => `${"  ".repeat(i)}- level ${i}`).join("\n"));
    expect(count(list, "ul")).toBeLessThan(MAX_DEPTH);
    expect(plain(list)).toContain("level 59");
  });
});

describe("GFM", () => {
  it("renders tables, with inline formatting in cells", () => {
    expect(inner("| a | *b* |\n| - | -: |\n| 1 | `2` |")).toBe(
      '<div class="md-table"><table><thead><tr><th>a</th><th style="text-align:right"><em>b</em></th></tr></thead>' +
        '<tbody><tr><td>1</td><td style="text-align:right"><code>2</code></td></tr></tbody></table></div>',
    );
  });

  it("shows half a table (still streaming) as text", () => {
    expect(inner("| a | b |")).toBe("<p>| a | b |</p>");
    expect(inner("| a | b |\n| -")).toBe("<p>| a | b |<br/>| -</p>");
  });

  it("renders strikethrough, task lists and autolinked URLs", () => {
    expect(inner("~~gone~~")).toBe("<p><del>gone</del></p>");
    expect(inner("- [x] done\n- [ ] todo")).toBe(
      '<ul class="contains-task-list"><li class="task-list-item"><input type="checkbox" disabled="" checked=""/> done</li>' +
        '<li class="task-list-item"><input type="checkbox" disabled=""/> todo</li></ul>',
    );
    expect(inner("see https://example.com/x.")).toBe(
      '<p>see <a href="https://example.com/x" rel="noopener noreferrer nofollow" target="_blank">https://example.com/x</a>.</p>',
    );
  });
});

describe("inlines", () => {
  it("parses inline code, taking its content literally", () => {
    expect(inner("run `npm *test*` now")).toBe("<p>run <code>npm *test*</code> now</p>");
    expect(inner("``a ` b``")).toBe("<p><code>a ` b</code></p>");
    expect(inner("` `` `")).toBe("<p><code>``</code></p>");
  });

  it("parses **bold**, __bold__, *italic* and _italic_", () => {
    expect(inner("**b** __b__ *i* _i_")).toBe("<p><strong>b</strong> <strong>b</strong> <em>i</em> <em>i</em></p>");
  });

  it("nests emphasis", () => {
    expect(inner("***both***")).toBe("<p><em><strong>both</strong></em></p>");
    expect(inner("**bold *and em* here**")).toBe("<p><strong>bold <em>and em</em> here</strong></p>");
  });

  it("keeps intraword underscores and spaced asterisks literal", () => {
    expect(inner("snake_case_name and a * b * c")).toBe("<p>snake_case_name and a * b * c</p>");
    expect(inner("2*3*4")).toBe("<p>2<em>3</em>4</p>");
  });

  it("renders unbalanced markers (a reply still streaming) literally", () => {
    expect(inner("**unclosed bold")).toBe("<p>**unclosed bold</p>");
    expect(inner("*open and **mixed")).toBe("<p>*open and **mixed</p>");
    expect(inner("**a*")).toBe("<p>*<em>a</em></p>");
    expect(inner("`unclosed code")).toBe("<p>`unclosed code</p>");
    expect(inner("[no link")).toBe("<p>[no link</p>");
    // GFM still links the bare URL: the bracket part stays text.
    expect(plain(inner("[text](https://unclosed"))).toBe("[text](https://unclosed");
    expect(inner("[text](https://unclosed")).toMatch(/^<p>\[text\]\(<a href="https:\/\/unclosed"/);
    expect(inner("streaming **bold so far")).toBe("<p>streaming **bold so far</p>");
  });

  it("honours backslash escapes", () => {
    expect(inner("\\*not em\\* \\`x\\` \\[y]")).toBe("<p>*not em* `x` [y]</p>");
    expect(inner("C:\\path")).toBe("<p>C:\\path</p>");
  });

  it("lets emphasis span lines within a paragraph", () => {
    expect(inner("**a\nb**")).toBe("<p><strong>a<br/>b</strong></p>");
  });
});

describe("links", () => {
  it("turns http, https and mailto links into links that open in a new tab, with parsed text", () => {
    expect(inner("see [the **docs**](https://example.com/a?b=1#c) or [mail](mailto:a@b.c) or [x](HTTP://EXAMPLE.COM)")).toBe(
      '<p>see <a href="https://example.com/a?b=1#c" rel="noopener noreferrer nofollow" target="_blank">the <strong>docs</strong></a>' +
        ' or <a href="mailto:a@b.c" rel="noopener noreferrer nofollow" target="_blank">mail</a>' +
        ' or <a href="HTTP://EXAMPLE.COM" rel="noopener noreferrer nofollow" target="_blank">x</a></p>',
    );
  });

  it("keeps relative and anchor links in the app, in the same tab", () => {
    expect(inner("[a](/teams) [b](./x) [c](relative.html) [d](#fragment) [e](?q=1)")).toBe(
      '<p><a href="/teams">a</a> <a href="./x">b</a> <a href="relative.html">c</a> <a href="#fragment">d</a> <a href="?q=1">e</a></p>',
    );
  });

  it("accepts balanced parentheses and a title", () => {
    expect(inner('[w](https://en.wikipedia.org/wiki/Foo_(bar) "Title")')).toBe(
      '<p><a title="Title" href="https://en.wikipedia.org/wiki/Foo_(bar)" rel="noopener noreferrer nofollow" target="_blank">w</a></p>',
    );
  });

  it("shows the URL when the link text is empty", () => {
    expect(inner("[](https://a.b)")).toBe('<p><a href="https://a.b" rel="noopener noreferrer nofollow" target="_blank">https://a.b</a></p>');
  });

  it.each([
    "javascript:alert(1)",
    "JavaScript:alert(1)",
    "data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==",
    "vbscript:msgbox(1)",
    "file:///etc/passwd",
    "//evil.example.com",
    "",
    "java\\tscript:alert(1)",
    "<java script:alert(1)>",
    "&#x6A;avascript:alert(1)",
    "java&#x09;script:alert(1)",
    "&#106;&#97;&#118;&#97;&#115;&#99;&#114;&#105;&#112;&#116;:alert(1)",
    " javascript:alert(1)",
  ])("does not link %j: the link text stays, inert", (url) => {
    const html = inner(`[click](${url})`);
    expectInert(html);
    expect(count(html, "a")).toBe(0);
    expect(plain(html)).toContain("click");
  });

  it("refuses unsafe URLs in reference links, autolinks and images too", () => {
    for (const src of [
      "[x][ref]\n\n[ref]: javascript:alert(1)",
      "<javascript:alert(1)>",
      "![img](javascript:alert(1))",
      "![img](data:image/svg+xml;base64,PHN2Zz48L3N2Zz4=)",
      "[![img](https://ok.example/i.png)](javascript:alert(1))",
      "[a](javascript:alert(1) 'title')",
    ]) {
      const html = inner(src);
      expectInert(html);
      expect(count(html, "a"), src).toBe(0);
    }
    expect(inner("![alt](javascript:alert(1))")).toBe('<p><span class="md-inert-link">alt</span></p>');
    expect(inner("![alt](https://ok.example/i.png)")).toBe(
      '<p><img src="https://ok.example/i.png" alt="alt" loading="lazy" referrerPolicy="no-referrer"/></p>',
    );
  });

  it("never allows a URL with whitespace or control characters, a foreign scheme or another host without scheme", () => {
    expect(safeUrl("https://ok.example/x")).toBe("https://ok.example/x");
    expect(safeUrl("mailto:a@b.c")).toBe("mailto:a@b.c");
    expect(urlKind("https://ok.example/x")).toBe("external");
    expect(urlKind("/x")).toBe("local");
    expect(urlKind("x")).toBe("local");
    expect(urlKind("#x")).toBe("local");
    for (const bad of ["javascript:alert(1)", " https://x", "https://x\ny", "https://x\u0000", "\u0001javascript:x", "data:,x", "vbscript:x", "file:x", "//x", "/\\x", "\\\\x", ""]) {
      expect(safeUrl(bad), JSON.stringify(bad)).toBeNull();
    }
    // The parser percent-encodes backslashes, so `\\host` can only ever be a path in the app.
    expect(inner("[c](\\\\\\\\evil.example.com)")).toBe('<p><a href="%5C%5Cevil.example.com">c</a></p>');
  });

  it("keeps links atomic so emphasis inside and around them works", () => {
    expect(inner("**[a](https://x.y)**")).toBe('<p><strong><a href="https://x.y" rel="noopener noreferrer nofollow" target="_blank">a</a></strong></p>');
  });
});

describe("safety: HTML is text", () => {
  it("keeps <script> and other tags as literal text", () => {
    const html = inner("<script>alert(1)</script>\n\n<img src=x onerror=alert(1)> **<b>x</b>**");
    expectInert(html);
    expect(html).toBe("&lt;script&gt;alert(1)&lt;/script&gt;<p>&lt;img src=x onerror=alert(1)&gt; <strong>&lt;b&gt;x&lt;/b&gt;</strong></p>");
  });

  it("keeps HTML inside headings, lists, quotes, tables and code as text", () => {
    const src =
      '# <h1>x</h1>\n- <iframe src=javascript:alert(1)>\n> <style>*{}</style>\n\n`<script>`\n\n| <svg onload=alert(1)> |\n| - |\n| <a href="javascript:alert(1)">t</a> |';
    const html = inner(src);
    expectInert(html);
    const text = plain(html);
    expect(text).toContain("<h1>x</h1>");
    expect(text).toContain("<iframe src=javascript:alert(1)>");
    expect(text).toContain("<style>*{}</style>");
    expect(text).toContain('<a href="javascript:alert(1)">t</a>');
    expect(html).toContain("<code>&lt;script&gt;</code>");
    expect(count(html, "a")).toBe(0);
  });

  it("renders a reply with a line of many stacked list or quote markers as plain text", () => {
    for (const src of ["1. ".repeat(5000) + "x", "intro\n\n" + "- > ".repeat(20) + "<b>x</b>"]) {
      const html = render(src);
      expect(html.startsWith('<div class="md md-plain">')).toBe(true);
      expectInert(html);
      expect(plain(html)).toBe(src);
    }
    // A few levels are ordinary Markdown.
    expect(inner("- > 1. x")).toBe("<ul><li><blockquote><ol><li>x</li></ol></blockquote></li></ul>");
  });

  it("renders a reply over the size limit as plain text", () => {
    const src = "**bold** <script>x</script> [a](https://x.y)\n".repeat(Math.ceil((MARKDOWN_MAX_CHARS + 1) / 44));
    const html = render(src);
    expect(html.startsWith('<div class="md md-plain">')).toBe(true);
    expectInert(html);
    expect(count(html, "strong")).toBe(0);
    expect(plain(html)).toBe(src);
  });
});

describe("robustness", () => {
  it("renders a long reply of ordinary Markdown", () => {
    const chunk =
      "Some **bold** and *italic* text with `code`, a [link](https://example.com/x) and snake_case.\n" +
      "A second line with an unmatched * star and a [bracket.\n\n";
    const n = Math.floor(MARKDOWN_MAX_CHARS / chunk.length);
    const html = inner(chunk.repeat(n));
    expect(count(html, "p")).toBe(n);
    expect(count(html, "a")).toBe(n);
  });

  it("survives pathological inputs up to the size limit", () => {
    const n = MARKDOWN_MAX_CHARS;
    const rep = (s: string) => s.repeat(Math.ceil(n / s.length)).slice(0, n);
    for (const src of [rep("*"), rep("**a "), rep("_a "), rep("["), rep("[a]("), rep("[a]((((("), rep("`"), rep("> "), rep("- "), rep("1. "), rep("a\n"), rep("\\"), rep("| a |\n| - |\n")]) {
      const html = render(src);
      expect(html.length, JSON.stringify(src.slice(0, 8))).toBeGreaterThan(0);
      expectInert(html);
    }
    // Backtick runs of every length: all of them stay visible.
    const ticks = Array.from({ length: 150 }, (_, i) => "`".repeat(i + 1)).join(" ");
    expect(plain(inner(ticks)).replace(/\s+/g, "")).toBe(ticks.replace(/\s+/g, ""));
  }, 120_000);
});
