import type { ListDelta } from "../../shared/team-delta";

// A team tail's sections: each remembers the tail seq of its last change, so a feed that sent
// up to seq n gets only what changed after it (team-feed.ts).

/** One section's value, its JSON (to see changes) and the tail seq it last changed at. */
export class Value<T> {
  value!: T;
  private key: string | null = null;
  at = 0;

  set(value: T, seq: number): boolean {
    const key = JSON.stringify(value);
    if (key === this.key) return false;
    this.value = value;
    this.key = key;
    this.at = seq;
    return true;
  }
}

/** A list of `{ id }` rows whose changes are tracked per item and for the order of ids. */
export class TrackedRows<T extends { id: string }> {
  private items = new Map<string, { value: T; key: string; at: number }>();
  private order: string[] = [];
  private orderKey: string | null = null;
  private orderAt = 0;

  set(values: T[], seq: number): boolean {
    let changed = false;
    const items = new Map<string, { value: T; key: string; at: number }>();
    for (const value of values) {
      const key = JSON.stringify(value);
      const before = this.items.get(value.id);
      const same = before?.key === key;
      changed ||= !same;
      items.set(value.id, same ? before : { value, key, at: seq });
    }
    this.items = items;
    const order = values.map((v) => v.id);
    const orderKey = order.join("\n");
    if (orderKey !== this.orderKey) {
      this.order = order;
      this.orderKey = orderKey;
      this.orderAt = seq;
      changed = true;
    }
    return changed;
  }

  values(): T[] {
    return this.order.map((id) => this.items.get(id)!.value);
  }

  since(seq: number): ListDelta<T> | null {
    const upsert = this.order.flatMap((id) => {
      const item = this.items.get(id)!;
      return item.at > seq ? [item.value] : [];
    });
    const order = this.orderAt > seq ? this.order : undefined;
    if (upsert.length === 0 && !order) return null;
    return order ? { upsert, order } : { upsert };
  }
}
