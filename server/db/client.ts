import { PrismaPg } from "@prisma/adapter-pg";
import { PrismaClient, type Prisma } from "./generated/client";

export type Db = PrismaClient;
/** The client handed to `$transaction(async (tx) => …)` callbacks. */
export type Tx = Omit<Db, "$connect" | "$disconnect" | "$on" | "$transaction" | "$extends">;
export type DbOrTx = Db | Tx;

/** One Prisma client per process (the driver adapter owns a pg pool). */
export function createDb(databaseUrl: string, poolSize = 10): Db {
  return new PrismaClient({ adapter: new PrismaPg({ connectionString: databaseUrl, max: poolSize }) });
}

/**
 * Run `fn` in a transaction; given a transaction already, `fn` joins it (so a domain function
 * can be part of a caller's bigger transaction, e.g. a tool effect committed with its result).
 * Never hold one across a model call (Prisma's 5 s timeout).
 */
export function inTx<T>(db: DbOrTx, fn: (tx: Tx) => Promise<T>): Promise<T> {
  if (!("$transaction" in db)) return fn(db);
  return db.$transaction(fn, { maxWait: 10_000, timeout: 15_000 });
}

/** Values that went through zod are plain JSON; Prisma's Json input type cannot see that. */
export function asJson(value: unknown): Prisma.InputJsonValue {
  return value as Prisma.InputJsonValue;
}
