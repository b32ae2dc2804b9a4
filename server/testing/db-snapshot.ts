import { z } from "zod";
import type { DbOrTx } from "../db/client";

// "Nothing persisted on refusal", checked over every table of the schema: the list comes from
// the database itself, so a table added by a later migration is covered without editing a
// test. A digest of each table's rows catches updates as well as inserts and deletes.

const Names = z.array(z.object({ table_name: z.string() }));

/** Every table of the app's schema (the migration runner's own table aside). */
export async function tableNames(db: DbOrTx): Promise<string[]> {
  const rows = Names.parse(
    await db.$queryRaw`SELECT table_name::text FROM information_schema.tables
      WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' AND table_name <> '_prisma_migrations'
      ORDER BY table_name`,
  );
  return rows.map((r) => r.table_name);
}

/** Row counts of every table. */
export async function rowCounts(db: DbOrTx): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const t of await tableNames(db)) {
    const [row] = z.array(z.object({ n: z.number() })).parse(await db.$queryRawUnsafe(`SELECT count(*)::int AS n FROM "${t}"`));
    out[t] = row!.n;
  }
  return out;
}

/**
 * For every table, its row count and an md5 of its rows' text in a stable order, read in one
 * statement (one snapshot). `except` leaves out tables a request may legitimately touch without
 * acting (an API token's `last_used_at`, say): they are counted, not digested.
 */
export async function tableDigests(db: DbOrTx, opts: { except?: readonly string[] } = {}): Promise<Record<string, string>> {
  const tables = await tableNames(db);
  const parts = tables.map((t) =>
    opts.except?.includes(t)
      ? `SELECT '${t}' AS t, count(*)::int AS n, NULL::text AS digest FROM "${t}"`
      : `SELECT '${t}' AS t, count(*)::int AS n, md5(string_agg(r::text, ',' ORDER BY r::text)) AS digest FROM "${t}" r`,
  );
  const rows = z
    .array(z.object({ t: z.string(), n: z.number(), digest: z.string().nullable() }))
    .parse(await db.$queryRawUnsafe(parts.join(" UNION ALL ")));
  return Object.fromEntries(rows.map((r) => [r.t, `${r.n}:${r.digest ?? "-"}`]));
}
