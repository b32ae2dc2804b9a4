import { createHash, randomBytes } from "node:crypto";

// Secrets handed out once (API tokens, invite links): 32 random bytes, of which only the
// sha256 is stored. A high-entropy secret needs no slow KDF: the hash only hides it at rest.

export function newSecret(prefix: string): string {
  return `${prefix}${randomBytes(32).toString("base64url")}`;
}

/** The token of an `Authorization: Bearer <token>` header, or null for any other value. */
export function bearerToken(authorization: string | undefined | null): string | null {
  return /^Bearer\s+(\S+)$/i.exec(authorization ?? "")?.[1] ?? null;
}

export function secretHash(secret: string): string {
  return createHash("sha256").update(secret).digest("hex");
}
