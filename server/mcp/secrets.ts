import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import { AppError } from "../errors";

// MCP servers' secrets at rest (SPEC.md §18): AES-256-GCM with a key from the environment
// (MCP_SECRETS_KEY), a fresh 12-byte IV per value; stored as "v1.<iv>.<tag>.<ciphertext>" in
// base64url. A value changed in the database does not decrypt (the tag), it is not misread.

const VERSION = "v1";

function keyOf(keyBase64: string | undefined): Buffer {
  if (!keyBase64) {
    throw new AppError("MCP_SECRETS_KEY_MISSING", "This server cannot store secrets: set MCP_SECRETS_KEY (32 random bytes in base64, openssl rand -base64 32) and restart it");
  }
  return Buffer.from(keyBase64, "base64");
}

export function encryptSecret(plaintext: string, keyBase64: string | undefined): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", keyOf(keyBase64), iv);
  const ciphertext = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
  return [VERSION, iv, cipher.getAuthTag(), ciphertext].map((p) => (typeof p === "string" ? p : p.toString("base64url"))).join(".");
}

export function decryptSecret(stored: string, keyBase64: string | undefined): string {
  const [version, iv, tag, ciphertext] = stored.split(".");
  if (version !== VERSION || !iv || !tag || ciphertext === undefined) throw new AppError("MCP_SECRET_UNREADABLE", "A stored MCP secret is not in a known format");
  try {
    const decipher = createDecipheriv("aes-256-gcm", keyOf(keyBase64), Buffer.from(iv, "base64url"));
    decipher.setAuthTag(Buffer.from(tag, "base64url"));
    return Buffer.concat([decipher.update(Buffer.from(ciphertext, "base64url")), decipher.final()]).toString("utf8");
  } catch (e) {
    if (e instanceof AppError) throw e;
    throw new AppError("MCP_SECRET_UNREADABLE", "A stored MCP secret does not decrypt with MCP_SECRETS_KEY (was the key changed?)");
  }
}
