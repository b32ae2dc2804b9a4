import { memo } from "react";
import ReactMarkdown, { type Components } from "react-markdown";
import remarkBreaks from "remark-breaks";
import remarkGfm from "remark-gfm";
import { remarkCapDepth, tooCostlyForMarkdown } from "./markdown-limits";
import { safeUrl, urlKind } from "./markdown-url";
import { PlainText } from "./plain-text";

// Renders Markdown (agent replies) with react-markdown: CommonMark + GFM (tables, task lists,
// strikethrough, autolinks), a single newline is a line break (remark-breaks). It builds React
// elements, never HTML strings: raw HTML in the source is shown as text (no rehype-raw), and
// every link and image URL passes the policy of markdown-url.ts. Text still streaming renders
// as CommonMark says: an unclosed fence runs to the end, half a table or a dangling `[link` is
// text. markdown-limits.ts bounds the cost of hostile replies.

// remarkCapDepth first: it must see the tree before remark-gfm walks it.
const PLUGINS = [remarkCapDepth, remarkGfm, remarkBreaks];

/** Replies sit under the page's h1/h2: their headings start at h3. */
const COMPONENTS: Components = {
  h1: ({ node: _node, ...props }) => <h3 {...props} />,
  h2: ({ node: _node, ...props }) => <h4 {...props} />,
  h3: ({ node: _node, ...props }) => <h5 {...props} />,
  h4: ({ node: _node, ...props }) => <h6 {...props} />,
  h5: ({ node: _node, ...props }) => <h6 {...props} />,
  h6: ({ node: _node, ...props }) => <h6 {...props} />,
  a: ({ node: _node, href, children, ...props }) => {
    // safeUrl already dropped a refused href: what is left shows as plain text. An empty
    // link text shows the URL.
    const kind = href === undefined ? null : urlKind(href);
    if (kind === null) return <span className="md-inert-link">{children}</span>;
    return kind === "external" ? (
      <a {...props} href={href} rel="noopener noreferrer nofollow" target="_blank">
        {children ?? href}
      </a>
    ) : (
      <a {...props} href={href}>
        {children ?? href}
      </a>
    );
  },
  img: ({ node: _node, src, alt }) => {
    if (typeof src !== "string" || urlKind(src) === null) return alt ? <span className="md-inert-link">{alt}</span> : null;
    // eslint-disable-next-line @next/next/no-img-element -- arbitrary images in a reply, not app assets
    return <img src={src} alt={alt ?? ""} loading="lazy" referrerPolicy="no-referrer" />;
  },
  table: ({ node: _node, ...props }) => (
    <div className="md-table">
      <table {...props} />
    </div>
  ),
};

// memo: a transcript re-renders on every event; a reply is parsed again only when its text changes.
export const Markdown = memo(function Markdown({ text, plain = false }: { text: string; /** Shown as plain text (a reply still streaming). */ plain?: boolean }) {
  if (plain || tooCostlyForMarkdown(text))
    return (
      <div className="md md-plain">
        <PlainText text={text} />
      </div>
    );
  return (
    <div className="md">
      <ReactMarkdown remarkPlugins={PLUGINS} components={COMPONENTS} urlTransform={safeUrl}>
        {text}
      </ReactMarkdown>
    </div>
  );
});
