import NextLink from "next/link";
import type { ComponentProps } from "react";

/**
 * The app's link: Next's, not prefetched. Next prefetches each link as it scrolls into view; in
 * a room that is a server render per timeline entry, file and view tab (a timeline screen made
 * dozens), each holding one of the six connections a browser keeps per server beside the room's
 * live feeds. Every page is dynamic, so a prefetch saves little: a click fetches what it needs.
 */
export function Link(props: ComponentProps<typeof NextLink>) {
  return <NextLink prefetch={false} {...props} />;
}
