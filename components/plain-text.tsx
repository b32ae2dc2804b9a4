import { memo } from "react";
import { textSegments } from "./text-segments";

/** Plain text as blocks (text-segments.ts): a growing text re-renders and re-lays out only its last block. */
export function PlainText({ text }: { text: string }) {
  return textSegments(text).map((segment, i) => <Segment key={i} text={segment} />);
}

const Segment = memo(function Segment({ text }: { text: string }) {
  return <span className="text-segment">{text}</span>;
});
