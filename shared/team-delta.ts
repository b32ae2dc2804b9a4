// The team feed's wire format and how a receiver applies it (no imports: the browser applies
// what server/live/team-feed.ts sends). The first message of a feed is the whole state; after
// it, a patch carries only the sections that changed, and the two long lists (board, mailbox)
// only their changed items plus, when items came, went or moved, the new order of ids.

/** Changed items of a list of `{ id }` rows, and its id order when that changed. */
export interface ListDelta<T> {
  upsert: T[];
  order?: string[];
}

/** The lists a patch sends item by item. */
export type DeltaLists = "tasks" | "messages";

type Row = { id: string };

export type TeamPatch<S extends Record<DeltaLists, Row[]>> = Partial<Omit<S, DeltaLists>> & {
  [K in DeltaLists]?: ListDelta<S[K][number]>;
};

export type TeamFeedMessage<S extends Record<DeltaLists, Row[]>> =
  | { type: "state"; state: S }
  | { type: "patch"; patch: TeamPatch<S> };

export function applyListDelta<T extends Row>(prev: readonly T[], delta: ListDelta<T>): T[] {
  const byId = new Map(prev.map((item) => [item.id, item]));
  for (const item of delta.upsert) byId.set(item.id, item);
  const order = delta.order ?? prev.map((item) => item.id);
  return order.flatMap((id) => {
    const item = byId.get(id);
    return item ? [item] : [];
  });
}

/** The state after `message`; a patch before any state has nothing to apply to (null). */
export function applyTeamMessage<S extends Record<DeltaLists, Row[]>>(prev: S | null, message: TeamFeedMessage<S>): S | null {
  if (message.type === "state") return message.state;
  if (!prev) return null;
  const { tasks, messages, ...sections } = message.patch;
  return {
    ...prev,
    ...sections,
    tasks: tasks ? applyListDelta(prev.tasks, tasks) : prev.tasks,
    messages: messages ? applyListDelta(prev.messages, messages) : prev.messages,
  };
}
