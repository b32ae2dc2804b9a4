// Drift guard: migrations are hand-written (no schema engine here), so check that a database
// migrated from prisma/migrations has exactly what prisma/schema.prisma describes. A column added
// to one side only fails this test.
import { readFile } from "node:fs/promises";
import path from "node:path";
import { get_dmmf } from "@prisma/prisma-schema-wasm";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../testing/db";
import { directUrlOf } from "./client";
import { applyMigrations } from "./migrate";

// ---- Partial indexes: schema.prisma cannot express them, so they are declared here ----

/**
 * Every partial index the migrations create, exactly as pg_indexes.indexdef spells it. The
 * database must have each one so, and no partial index that is not listed; they are left out
 * of the comparison with schema.prisma.
 */
const PARTIAL_INDEXES: ReadonlyArray<{ name: string; definition: string }> = [
  {
    name: "approvals_team_pending_idx",
    definition: "CREATE INDEX approvals_team_pending_idx ON public.approvals USING btree (team_id, created_at) WHERE (status = 'pending'::text)",
  },
  {
    name: "team_events_undispatched_idx",
    definition: "CREATE INDEX team_events_undispatched_idx ON public.team_events USING btree (id) WHERE (dispatched_at IS NULL)",
  },
  {
    name: "webhook_deliveries_due_idx",
    definition: "CREATE INDEX webhook_deliveries_due_idx ON public.webhook_deliveries USING btree (next_attempt_at) WHERE (status = 'pending'::text)",
  },
  {
    name: "team_messages_target_queued_idx",
    definition:
      "CREATE INDEX team_messages_target_queued_idx ON public.team_messages USING btree (target_session_id, seq) WHERE (state = 'queued'::text)",
  },
  {
    name: "team_messages_target_unconsumed_idx",
    definition:
      "CREATE INDEX team_messages_target_unconsumed_idx ON public.team_messages USING btree (target_session_id) WHERE (consumed_at IS NULL)",
  },
  {
    name: "routines_due_idx",
    definition: "CREATE INDEX routines_due_idx ON public.routines USING btree (next_run_at) WHERE (next_run_at IS NOT NULL)",
  },
  {
    name: "memories_team_search_idx",
    definition: "CREATE INDEX memories_team_search_idx ON public.memories USING gin (team_id, search) WHERE (team_id IS NOT NULL)",
  },
  {
    name: "memories_shared_search_idx",
    definition: "CREATE INDEX memories_shared_search_idx ON public.memories USING gin (search) WHERE ((team_id IS NULL) AND (status = 'approved'::text))",
  },
];

// ---- The part of Prisma's DMMF this test reads ----

type DefaultValue = string | number | boolean | { name: string; args: unknown[] } | unknown[];

interface DmmfField {
  name: string;
  dbName?: string | null;
  kind: "scalar" | "object" | "enum" | "unsupported";
  type: string;
  isList: boolean;
  isRequired: boolean;
  isId: boolean;
  isUnique: boolean;
  isUpdatedAt: boolean;
  hasDefaultValue: boolean;
  default?: DefaultValue;
  nativeType?: [string, string[]] | null;
  relationFromFields?: string[];
  relationToFields?: string[];
  relationOnDelete?: string;
  relationOnUpdate?: string;
}

interface DmmfModel {
  name: string;
  dbName: string | null;
  fields: DmmfField[];
  primaryKey: { fields: string[] } | null;
  uniqueIndexes: { fields: string[] }[];
}

interface DmmfDatamodel {
  models: DmmfModel[];
  enums: { name: string; dbName?: string | null; values: { name: string; dbName?: string | null }[] }[];
  indexes: { model: string; type: "id" | "unique" | "normal" | "fulltext"; fields: { name: string }[] }[];
}

// ---- A comparable shape, built from both sides ----

interface Column {
  type: string;
  nullable: boolean;
  /** A normalised default, "(any)" when only its presence is comparable, null for none. */
  default: string | null;
}

interface ForeignKey {
  columns: string[];
  table: string;
  refColumns: string[];
  onDelete: string;
  onUpdate: string;
}

interface Table {
  columns: Map<string, Column>;
  primaryKey: string[];
  /** Column lists, "a,b", sorted. */
  uniques: string[];
  indexes: string[];
  foreignKeys: string[];
}

type Shape = { tables: Map<string, Table>; enums: Map<string, string[]> };

/** The database's partial indexes, name → definition. */
async function partialIndexes(client: pg.Client): Promise<Map<string, string>> {
  const { rows } = await client.query<{ name: string; definition: string }>(`
    SELECT c.relname AS name, pg_get_indexdef(i.indexrelid) AS definition
      FROM pg_index i
      JOIN pg_class c ON c.oid = i.indexrelid
     WHERE c.relnamespace = current_schema()::regnamespace AND i.indpred IS NOT NULL`);
  return new Map(rows.map((r) => [r.name, r.definition]));
}

/** Differences between PARTIAL_INDEXES and the database's partial indexes; empty when they agree. */
function diffPartialIndexes(declared: ReadonlyArray<{ name: string; definition: string }>, db: Map<string, string>): string[] {
  const out: string[] = [];
  for (const { name, definition } of declared) {
    const actual = db.get(name);
    if (actual === undefined) out.push(`partial index ${name}: declared but not in the migrated database`);
    else if (actual !== definition) out.push(`partial index ${name}: declared as ${definition}, in the database ${actual}`);
  }
  for (const name of db.keys()) {
    if (!declared.some((d) => d.name === name)) out.push(`partial index ${name}: in the migrated database but not declared in PARTIAL_INDEXES`);
  }
  return out;
}

const SCHEMA_FILE = path.join(process.cwd(), "prisma", "schema.prisma");

function readDatamodel(schema: string): DmmfDatamodel {
  const dmmf = JSON.parse(get_dmmf(JSON.stringify({ prismaSchema: [["schema.prisma", schema]], noColor: true }))) as {
    datamodel: DmmfDatamodel;
  };
  return withUnsupportedFields(dmmf.datamodel, schema);
}

/**
 * Prisma's DMMF leaves out `Unsupported("…")` fields (a tsvector, say), though indexes name
 * them: read them from the schema's text into their models, their type as written.
 */
function withUnsupportedFields(dm: DmmfDatamodel, schema: string): DmmfDatamodel {
  for (const block of schema.matchAll(/^model (\w+) \{([\s\S]*?)^\}/gm)) {
    const model = dm.models.find((m) => m.name === block[1]);
    for (const f of block[2]!.matchAll(/^\s*(\w+)\s+Unsupported\("([^"]+)"\)(\?)?(?:.*@map\("([^"]+)"\))?/gm)) {
      model?.fields.push({
        name: f[1]!,
        dbName: f[4] ?? null,
        kind: "unsupported",
        type: f[2]!,
        isList: false,
        isRequired: f[3] !== "?",
        isId: false,
        isUnique: false,
        isUpdatedAt: false,
        hasDefaultValue: false,
      });
    }
  }
  return dm;
}

/** format_type() spelling of Prisma's column types (its defaults and the @db.* natives). */
function expectedType(field: DmmfField, enumDbNames: Map<string, string>): string {
  let base: string;
  if (field.kind === "enum") {
    base = quoteIdentIfNeeded(enumDbNames.get(field.type) ?? field.type);
  } else if (field.kind === "unsupported") {
    base = field.type;
  } else if (field.nativeType) {
    base = nativeType(field.nativeType[0], field.nativeType[1]);
  } else {
    const byScalar: Record<string, string> = {
      String: "text",
      Int: "integer",
      BigInt: "bigint",
      Float: "double precision",
      Decimal: "numeric(65,30)",
      Boolean: "boolean",
      // Prisma's default for DateTime is without time zone; this project uses @db.Timestamptz(3).
      DateTime: "timestamp(3) without time zone",
      Json: "jsonb",
      Bytes: "bytea",
    };
    const mapped = byScalar[field.type];
    if (!mapped) throw new Error(`drift test: no type mapping for Prisma type ${field.type}; extend byScalar`);
    base = mapped;
  }
  return field.isList ? `${base}[]` : base;
}

function nativeType(name: string, args: string[]): string {
  const a = args.length ? `(${args.join(",")})` : "";
  const byName: Record<string, string> = {
    Text: "text",
    VarChar: `character varying${a}`,
    Char: `character${a}`,
    Uuid: "uuid",
    Integer: "integer",
    SmallInt: "smallint",
    BigInt: "bigint",
    Real: "real",
    DoublePrecision: "double precision",
    Decimal: `numeric${a}`,
    Money: "money",
    Boolean: "boolean",
    Date: "date",
    Time: `time${a} without time zone`,
    Timetz: `time${a} with time zone`,
    Timestamp: `timestamp${a} without time zone`,
    Timestamptz: `timestamp${a} with time zone`,
    Json: "json",
    JsonB: "jsonb",
    ByteA: "bytea",
    Xml: "xml",
    Inet: "inet",
    Citext: "citext",
    Oid: "oid",
    Bit: `bit${a}`,
    VarBit: `bit varying${a}`,
  };
  const mapped = byName[name];
  if (!mapped) throw new Error(`drift test: no type mapping for @db.${name}; extend nativeType()`);
  return mapped;
}

function quoteIdentIfNeeded(name: string): string {
  return /^[a-z_][a-z0-9_]*$/.test(name) ? name : `"${name.replace(/"/g, '""')}"`;
}

/** What PostgreSQL reports as column_default for a Prisma @default, where that is predictable. */
function expectedDefault(field: DmmfField, type: string): string | null {
  const d = field.default;
  if (!field.hasDefaultValue || d === undefined) return null;
  if (typeof d === "object" && !Array.isArray(d)) {
    // Generated by Prisma Client, not by the database.
    if (["uuid", "cuid", "nanoid", "ulid"].includes(d.name)) return null;
    if (d.name === "now") return "CURRENT_TIMESTAMP";
    if (d.name === "autoincrement") return "nextval(…)";
    return "(any)";
  }
  if (typeof d === "boolean") return String(d);
  if (typeof d === "number" && Number.isInteger(d) && d >= 0) return String(d);
  if (typeof d === "string" && type === "text") return `'${d.replace(/'/g, "''")}'::text`;
  return "(any)";
}

function normaliseActualDefault(value: string | null): string | null {
  if (value === null) return null;
  return value.startsWith("nextval(") ? "nextval(…)" : value;
}

const referentialAction: Record<string, string> = {
  Cascade: "CASCADE",
  Restrict: "RESTRICT",
  NoAction: "NO ACTION",
  SetNull: "SET NULL",
  SetDefault: "SET DEFAULT",
};

const fkText = (fk: ForeignKey) =>
  `(${fk.columns.join(",")}) -> ${fk.table}(${fk.refColumns.join(",")}) ON DELETE ${fk.onDelete} ON UPDATE ${fk.onUpdate}`;

function shapeFromSchema(dm: DmmfDatamodel): Shape {
  const enumDbNames = new Map(dm.enums.map((e) => [e.name, e.dbName ?? e.name]));
  const models = new Map(dm.models.map((m) => [m.name, m]));
  const tableName = (m: DmmfModel) => m.dbName ?? m.name;
  const columnName = (m: DmmfModel, fieldName: string) => {
    const f = m.fields.find((x) => x.name === fieldName);
    if (!f) throw new Error(`drift test: ${m.name}.${fieldName} not found`);
    return f.dbName ?? f.name;
  };

  const tables = new Map<string, Table>();
  for (const model of dm.models) {
    const columns = new Map<string, Column>();
    for (const f of model.fields) {
      if (f.kind === "object") continue;
      const type = expectedType(f, enumDbNames);
      // Prisma creates scalar-list columns without NOT NULL (as `prisma migrate` does).
      columns.set(f.dbName ?? f.name, { type, nullable: !f.isRequired || f.isList, default: expectedDefault(f, type) });
    }
    const pkFields = model.primaryKey?.fields ?? model.fields.filter((f) => f.isId).map((f) => f.name);
    const uniques = [
      ...model.uniqueIndexes.map((u) => u.fields),
      ...model.fields.filter((f) => f.isUnique).map((f) => [f.name]),
    ].map((fields) => fields.map((n) => columnName(model, n)).join(","));
    const indexes = dm.indexes
      .filter((i) => i.model === model.name && i.type === "normal")
      .map((i) => i.fields.map((f) => columnName(model, f.name)).join(","));
    const foreignKeys = model.fields
      .filter((f) => f.kind === "object" && f.relationFromFields?.length)
      .map((f) => {
        const target = models.get(f.type);
        if (!target) throw new Error(`drift test: relation ${model.name}.${f.name} to unknown model ${f.type}`);
        const from = f.relationFromFields ?? [];
        // Prisma's defaults: Restrict for required relations, SetNull for optional, Cascade on update.
        const optional = from.some((n) => model.fields.find((x) => x.name === n)?.isRequired === false);
        return fkText({
          columns: from.map((n) => columnName(model, n)),
          table: tableName(target),
          refColumns: (f.relationToFields ?? []).map((n) => columnName(target, n)),
          onDelete: referentialAction[f.relationOnDelete ?? (optional ? "SetNull" : "Restrict")] ?? "?",
          onUpdate: referentialAction[f.relationOnUpdate ?? "Cascade"] ?? "?",
        });
      });
    tables.set(tableName(model), {
      columns,
      primaryKey: pkFields.map((n) => columnName(model, n)),
      uniques: uniques.sort(),
      indexes: indexes.sort(),
      foreignKeys: foreignKeys.sort(),
    });
  }
  const enums = new Map(dm.enums.map((e) => [e.dbName ?? e.name, e.values.map((v) => v.dbName ?? v.name)]));
  return { tables, enums };
}

async function shapeFromDatabase(client: pg.Client): Promise<Shape> {
  const tables = new Map<string, Table>();
  const table = (name: string): Table => {
    let t = tables.get(name);
    if (!t) {
      t = { columns: new Map(), primaryKey: [], uniques: [], indexes: [], foreignKeys: [] };
      tables.set(name, t);
    }
    return t;
  };

  const { rows: columns } = await client.query<{
    table_name: string;
    column_name: string;
    is_nullable: "YES" | "NO";
    column_default: string | null;
    type: string;
  }>(`
    SELECT c.table_name, c.column_name, c.is_nullable, c.column_default,
           format_type(a.atttypid, a.atttypmod) AS type
      FROM information_schema.columns c
      JOIN information_schema.tables t USING (table_schema, table_name)
      JOIN pg_attribute a
        ON a.attrelid = format('%I.%I', c.table_schema, c.table_name)::regclass
       AND a.attname = c.column_name
     WHERE c.table_schema = current_schema()
       AND t.table_type = 'BASE TABLE'
       AND c.table_name <> '_prisma_migrations'
     ORDER BY c.table_name, c.ordinal_position`);
  for (const c of columns) {
    table(c.table_name).columns.set(c.column_name, {
      type: c.type,
      nullable: c.is_nullable === "YES",
      default: normaliseActualDefault(c.column_default),
    });
  }

  // Partial indexes are compared with PARTIAL_INDEXES instead.
  const { rows: indexes } = await client.query<{
    table_name: string;
    is_primary: boolean;
    is_unique: boolean;
    columns: string[];
  }>(`
    SELECT t.relname AS table_name, i.indisprimary AS is_primary, i.indisunique AS is_unique,
           array(SELECT a.attname FROM unnest(i.indkey) WITH ORDINALITY k(attnum, ord)
                   JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = k.attnum
                  ORDER BY k.ord)::text[] AS columns
      FROM pg_index i
      JOIN pg_class t ON t.oid = i.indrelid
     WHERE t.relnamespace = current_schema()::regnamespace AND t.relname <> '_prisma_migrations'
       AND i.indpred IS NULL`);
  for (const i of indexes) {
    const t = table(i.table_name);
    if (i.is_primary) t.primaryKey = i.columns;
    else if (i.is_unique) t.uniques.push(i.columns.join(","));
    else t.indexes.push(i.columns.join(","));
  }

  const { rows: fks } = await client.query<{
    table_name: string;
    ref_table: string;
    columns: string[];
    ref_columns: string[];
    on_delete: string;
    on_update: string;
  }>(`
    SELECT t.relname AS table_name, r.relname AS ref_table,
           array(SELECT attname FROM unnest(c.conkey) WITH ORDINALITY k(n, o)
                   JOIN pg_attribute ON attrelid = c.conrelid AND attnum = k.n ORDER BY k.o)::text[] AS columns,
           array(SELECT attname FROM unnest(c.confkey) WITH ORDINALITY k(n, o)
                   JOIN pg_attribute ON attrelid = c.confrelid AND attnum = k.n ORDER BY k.o)::text[] AS ref_columns,
           c.confdeltype AS on_delete, c.confupdtype AS on_update
      FROM pg_constraint c
      JOIN pg_class t ON t.oid = c.conrelid
      JOIN pg_class r ON r.oid = c.confrelid
     WHERE c.contype = 'f' AND t.relnamespace = current_schema()::regnamespace`);
  const action: Record<string, string> = { a: "NO ACTION", r: "RESTRICT", c: "CASCADE", n: "SET NULL", d: "SET DEFAULT" };
  for (const fk of fks) {
    table(fk.table_name).foreignKeys.push(
      fkText({
        columns: fk.columns,
        table: fk.ref_table,
        refColumns: fk.ref_columns,
        onDelete: action[fk.on_delete] ?? fk.on_delete,
        onUpdate: action[fk.on_update] ?? fk.on_update,
      }),
    );
  }
  for (const t of tables.values()) {
    t.uniques.sort();
    t.indexes.sort();
    t.foreignKeys.sort();
  }

  const { rows: enumRows } = await client.query<{ name: string; labels: string[] }>(`
    SELECT t.typname AS name, array_agg(e.enumlabel ORDER BY e.enumsortorder)::text[] AS labels
      FROM pg_type t JOIN pg_enum e ON e.enumtypid = t.oid
     WHERE t.typnamespace = current_schema()::regnamespace
     GROUP BY t.typname`);
  return { tables, enums: new Map(enumRows.map((r) => [r.name, r.labels])) };
}

/** Human-readable differences; empty when schema and database agree. */
function diffShapes(schema: Shape, db: Shape): string[] {
  const out: string[] = [];
  const where = "in schema.prisma but not in the migrated database";
  const notWhere = "in the migrated database but not in schema.prisma";
  for (const name of new Set([...schema.tables.keys(), ...db.tables.keys()])) {
    const s = schema.tables.get(name);
    const d = db.tables.get(name);
    if (!s || !d) {
      out.push(`table ${name}: ${s ? where : notWhere}`);
      continue;
    }
    for (const col of new Set([...s.columns.keys(), ...d.columns.keys()])) {
      const sc = s.columns.get(col);
      const dc = d.columns.get(col);
      if (!sc || !dc) {
        out.push(`column ${name}.${col}: ${sc ? where : notWhere}`);
        continue;
      }
      if (sc.type !== dc.type) out.push(`column ${name}.${col}: type ${sc.type} in schema, ${dc.type} in database`);
      if (sc.nullable !== dc.nullable) {
        out.push(`column ${name}.${col}: ${sc.nullable ? "optional" : "required"} in schema, ${dc.nullable ? "NULL" : "NOT NULL"} in database`);
      }
      const defaultsAgree = sc.default === "(any)" ? dc.default !== null : sc.default === dc.default;
      if (!defaultsAgree) out.push(`column ${name}.${col}: default ${sc.default ?? "none"} in schema, ${dc.default ?? "none"} in database`);
    }
    const same = (a: string[], b: string[]) => a.join("|") === b.join("|");
    if (!same(s.primaryKey, d.primaryKey)) {
      out.push(`table ${name}: primary key (${s.primaryKey.join(",")}) in schema, (${d.primaryKey.join(",")}) in database`);
    }
    for (const [kind, sl, dl] of [
      ["unique indexes", s.uniques, d.uniques],
      ["indexes", s.indexes, d.indexes],
      ["foreign keys", s.foreignKeys, d.foreignKeys],
    ] as const) {
      if (!same(sl, dl)) out.push(`table ${name}: ${kind} [${sl.join("; ")}] in schema, [${dl.join("; ")}] in database`);
    }
  }
  for (const name of new Set([...schema.enums.keys(), ...db.enums.keys()])) {
    const s = schema.enums.get(name);
    const d = db.enums.get(name);
    if (s?.join(",") !== d?.join(",")) out.push(`enum ${name}: [${s?.join(",") ?? "missing"}] in schema, [${d?.join(",") ?? "missing"}] in database`);
  }
  return out;
}

// ---- The tests ----

describe("schema.prisma vs prisma/migrations", () => {
  let db: TestDatabase;
  let client: pg.Client;
  let schemaText: string;

  beforeAll(async () => {
    schemaText = await readFile(SCHEMA_FILE, "utf8");
    // Migrated here rather than cloned from the run's template, so this test alone says what
    // prisma/migrations produces.
    db = await createTestDatabase({ migrated: false });
    await applyMigrations(directUrlOf(db));
    client = new pg.Client({ connectionString: directUrlOf(db) });
    await client.connect();
  });

  afterAll(async () => {
    await client?.end();
    await db?.drop();
  });

  it("the migrated database has exactly the tables, columns, keys and indexes of schema.prisma", async () => {
    const expected = shapeFromSchema(readDatamodel(schemaText));
    expect([...expected.tables.keys()].length).toBeGreaterThan(0);
    expect(diffShapes(expected, await shapeFromDatabase(client))).toEqual([]);
  });

  it("the migrated database has exactly the partial indexes PARTIAL_INDEXES declares", async () => {
    expect(PARTIAL_INDEXES.length).toBeGreaterThan(0);
    expect(diffPartialIndexes(PARTIAL_INDEXES, await partialIndexes(client))).toEqual([]);
  });

  it("reports a partial index that is missing, defined otherwise, or not declared", async () => {
    await client.query("BEGIN");
    try {
      const [first, second] = PARTIAL_INDEXES;
      await client.query(`DROP INDEX ${first!.name}`);
      await client.query(`DROP INDEX ${second!.name}`);
      await client.query(`CREATE INDEX ${second!.name} ON team_messages (target_session_id) WHERE state = 'delivered'`);
      await client.query(`CREATE INDEX drift_probe_partial ON sessions (title) WHERE parked`);
      const diffs = diffPartialIndexes(PARTIAL_INDEXES, await partialIndexes(client));
      expect(diffs).toEqual([
        `partial index ${first!.name}: declared but not in the migrated database`,
        `partial index ${second!.name}: declared as ${second!.definition}, in the database CREATE INDEX ${second!.name} ON public.team_messages USING btree (target_session_id) WHERE (state = 'delivered'::text)`,
        "partial index drift_probe_partial: in the migrated database but not declared in PARTIAL_INDEXES",
      ]);
      // Left out of the comparison with schema.prisma either way.
      expect(diffShapes(shapeFromSchema(readDatamodel(schemaText)), await shapeFromDatabase(client))).toEqual([]);
    } finally {
      await client.query("ROLLBACK");
    }
  });

  // The guard itself: drift in either direction must show up. (arrayContaining, so real drift
  // fails only the test above.)
  it("reports a field added to schema.prisma without a migration", async () => {
    const edited = schemaText.replace(/model Session \{\n/, "model Session {\n  driftProbe String? @map(\"drift_probe\")\n");
    expect(edited).not.toBe(schemaText);
    expect(diffShapes(shapeFromSchema(readDatamodel(edited)), await shapeFromDatabase(client))).toEqual(
      expect.arrayContaining(["column sessions.drift_probe: in schema.prisma but not in the migrated database"]),
    );
  });

  it("reports a column, index or type a migration has but schema.prisma does not", async () => {
    await client.query("BEGIN");
    try {
      await client.query(`ALTER TABLE sessions ADD COLUMN drift_probe integer`);
      await client.query(`CREATE UNIQUE INDEX drift_probe_key ON sessions (title)`);
      await client.query(`ALTER TABLE session_events ALTER COLUMN kind TYPE varchar(20)`);
      const diffs = diffShapes(shapeFromSchema(readDatamodel(schemaText)), await shapeFromDatabase(client));
      expect(diffs).toEqual(
        expect.arrayContaining([
          "column sessions.drift_probe: in the migrated database but not in schema.prisma",
          "table sessions: unique indexes [] in schema, [title] in database",
          "column session_events.kind: type text in schema, character varying(20) in database",
        ]),
      );
    } finally {
      await client.query("ROLLBACK");
    }
  });
});
