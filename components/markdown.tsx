import { useMemo, type ReactNode } from "react";
import { parseMarkdown, type MdBlock, type MdInline } from "./markdown-parse";

// Renders Markdown (agent replies) as React elements built from the parsed AST: every piece of
// user or model text reaches the DOM as a React text node or an attribute React escapes, never
// as HTML. Links are limited to http:, https: and mailto: by the parser (safeHref).

export function Markdown({ text }: { text: string }) {
  const blocks = useMemo(() => parseMarkdown(text), [text]);
  return <div className="md">{renderBlocks(blocks)}</div>;
}

const HEADINGS = { 1: "h3", 2: "h4", 3: "h5" } as const;

function renderBlocks(blocks: MdBlock[]): ReactNode[] {
  return blocks.map((block, i) => renderBlock(block, i));
}

function renderBlock(block: MdBlock, key: number): ReactNode {
  switch (block.type) {
    case "paragraph":
      return <p key={key}>{renderInlines(block.children)}</p>;
    case "heading": {
      const Tag = HEADINGS[block.level];
      return <Tag key={key}>{renderInlines(block.children)}</Tag>;
    }
    case "list": {
      const items = block.items.map((item, i) => (
        <li key={i}>
          {renderInlines(item.content)}
          {renderBlocks(item.children)}
        </li>
      ));
      return block.ordered ? (
        <ol key={key} start={block.start === 1 ? undefined : block.start}>
          {items}
        </ol>
      ) : (
        <ul key={key}>{items}</ul>
      );
    }
    case "code_block": {
      const lang = block.lang.replace(/[^\w+#.-]/g, "");
      return (
        <pre key={key} data-unclosed={block.closed ? undefined : true}>
          <code className={lang ? `language-${lang}` : undefined}>{block.text}</code>
        </pre>
      );
    }
    case "blockquote":
      return <blockquote key={key}>{renderBlocks(block.children)}</blockquote>;
  }
}

function renderInlines(nodes: MdInline[]): ReactNode[] {
  return nodes.map((node, i) => renderInline(node, i));
}

function renderInline(node: MdInline, key: number): ReactNode {
  switch (node.type) {
    case "text":
      return node.text;
    case "break":
      return <br key={key} />;
    case "code":
      return <code key={key}>{node.text}</code>;
    case "strong":
      return <strong key={key}>{renderInlines(node.children)}</strong>;
    case "em":
      return <em key={key}>{renderInlines(node.children)}</em>;
    case "link":
      return (
        <a key={key} href={node.href} rel="noopener noreferrer nofollow" target="_blank">
          {renderInlines(node.children)}
        </a>
      );
  }
}
