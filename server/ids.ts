import { randomFillSync } from "node:crypto";

// Branded ids: a SessionId cannot be passed where a MessageId is expected.
declare const brand: unique symbol;
export type Brand<T, B extends string> = T & { readonly [brand]: B };

export type SessionId = Brand<string, "SessionId">;
export type MessageId = Brand<string, "MessageId">;
export type TurnId = Brand<string, "TurnId">;
/** A person's account id (Better Auth makes them). */
export type UserId = Brand<string, "UserId">;

/** Time-ordered, URL-safe id: 12 hex chars of milliseconds + 10 random hex chars. */
function newId(prefix: string): string {
  return `${prefix}_${Date.now().toString(16).padStart(12, "0")}${randomHex(5)}`;
}

// Random bytes drawn from a pool refilled a few kilobytes at a time: a call to the system's
// generator per id cost more than the rest of making it (several ids are made per model step).
const pool = Buffer.alloc(4096);
let used = pool.length;
function randomHex(bytes: number): string {
  if (used + bytes > pool.length) {
    randomFillSync(pool);
    used = 0;
  }
  used += bytes;
  return pool.toString("hex", used - bytes, used);
}

export const newSessionId = () => newId("ses") as SessionId;
export const newMessageId = () => newId("msg") as MessageId;
export const newTurnId = () => newId("turn") as TurnId;
export const asSessionId = (s: string) => s as SessionId;
export const asMessageId = (s: string) => s as MessageId;
export const asTurnId = (s: string) => s as TurnId;
export const asUserId = (s: string) => s as UserId;
export const newInviteId = () => newId("inv");
export const newApiTokenId = () => newId("tok");
export const newApprovalId = () => newId("apr");
/** A batch of notifications: one id stem, each row adds its position. */
export const newNotificationStem = () => newId("ntf");
export const newWebhookId = () => newId("whk");
export const newPlanId = () => newId("pln");
export const newMemoryId = () => newId("mem");
export const newRoutineId = () => newId("rtn");
export const newMcpServerId = () => newId("mcp");
/** A batch of webhook deliveries (the webhook-id header): one stem, each row adds its position. */
export const newWebhookMessageId = () => newId("msg");
