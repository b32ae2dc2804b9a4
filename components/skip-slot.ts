// Where a page's skip links go (components/skip-links.tsx): the first element of the body,
// before the top bar, so a skip link is the first Tab stop of a fresh load.
export const SKIP_SLOT_ID = "skip-links";
