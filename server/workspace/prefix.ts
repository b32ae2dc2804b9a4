import { Prisma } from "../db/generated/client";

/**
 * Rows whose path is `prefix` itself or lies under it (null: every row). Paths use the "C"
 * collation, so everything under `p/` sorts in [`p/`, `p0`): `0` is the byte after `/`.
 */
export function underPrefix(prefix: string | null, column = Prisma.raw("f.path")): Prisma.Sql {
  if (prefix === null) return Prisma.sql`TRUE`;
  return Prisma.sql`(${column} = ${prefix} OR (${column} >= ${`${prefix}/`} AND ${column} < ${`${prefix}0`}))`;
}
