import { randomBytes } from "node:crypto";

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
  return `${prefix}_${Date.now().toString(16).padStart(12, "0")}${randomBytes(5).toString("hex")}`;
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
