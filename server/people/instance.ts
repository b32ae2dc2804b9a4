import { randomBytes } from "node:crypto";
import { z } from "zod";
import type { Db, DbOrTx } from "../db/client";

// Instance-wide settings: whether sign-up is open, and the cookie-signing secret when the
// environment sets none. One row (id 1), created at first start.

export const InstanceStatusSchema = z.object({
  /** An owner account exists (a fresh instance asks the first visitor to create it). */
  hasOwner: z.boolean(),
  openSignUp: z.boolean(),
});
export type InstanceStatus = z.infer<typeof InstanceStatusSchema>;

/** The settings row, made on first use; concurrent first starts agree on one secret. */
async function settingsRow(db: DbOrTx) {
  await db.$executeRaw`INSERT INTO instance_settings (id, auth_secret) VALUES (1, ${randomBytes(32).toString("base64url")}) ON CONFLICT (id) DO NOTHING`;
  return db.instanceSettings.findUniqueOrThrow({ where: { id: 1 } });
}

export async function authSecretOf(db: Db): Promise<string> {
  return (await settingsRow(db)).authSecret;
}

export async function instanceStatus(db: DbOrTx): Promise<InstanceStatus> {
  const [row, owner] = await Promise.all([settingsRow(db), db.user.findFirst({ where: { instanceOwner: true }, select: { id: true } })]);
  return { hasOwner: owner !== null, openSignUp: row.openSignUp };
}

export async function setOpenSignUp(db: DbOrTx, open: boolean): Promise<InstanceStatus> {
  await settingsRow(db);
  await db.instanceSettings.update({ where: { id: 1 }, data: { openSignUp: open, updatedAt: new Date() } });
  return instanceStatus(db);
}

/** Whether the instance owner lets webhooks reach private addresses (loopback, the local network). */
export async function privateWebhooksAllowed(db: DbOrTx): Promise<boolean> {
  return (await settingsRow(db)).webhooksPrivateOk;
}

export async function setPrivateWebhooksAllowed(db: DbOrTx, allowed: boolean): Promise<boolean> {
  await settingsRow(db);
  await db.instanceSettings.update({ where: { id: 1 }, data: { webhooksPrivateOk: allowed, updatedAt: new Date() } });
  return allowed;
}
