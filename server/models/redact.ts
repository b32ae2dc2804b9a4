// Secrets never leave the provider adapter: providers echo keys in their errors ("Incorrect API
// key provided: sk-…", "invalid x-api-key …"), and those messages reach transcripts, API
// responses, feeds and logs. Every error message that leaves ai-sdk.ts goes through here.

export const REDACTED = "[redacted]";

/** Shapes of provider keys and bearer tokens, whole or partly masked (sk-ab***yz). */
const KEY_SHAPES: RegExp[] = [
  /\bsk-[A-Za-z0-9_*.\-]{3,}/g, // OpenAI, Anthropic (sk-ant-…), DeepSeek and most compatible servers
  /\b(?:xai|gsk|pplx|AIza)[-_]?[A-Za-z0-9_\-]{16,}/g, // other common providers
  /\b(Bearer|x-api-key[:=]?)\s+[A-Za-z0-9._~+/*\-]{8,}=*/gi, // auth headers quoted back
  /(?<=\b[a-z][a-z0-9+.-]*:\/\/)[^\s/@:]+(?::[^\s/@]*)?@/gi, // credentials in a URL (https://user:pass@host)
];

/** Replaces the configured secrets (verbatim) and anything shaped like a provider key. */
export function redactSecrets(text: string, secrets: readonly (string | undefined)[] = []): string {
  let out = text;
  for (const secret of secrets) {
    if (secret && secret.length >= 4) out = out.split(secret).join(REDACTED);
  }
  for (const shape of KEY_SHAPES) {
    out = out.replace(shape, (match: string, header: unknown) => {
      if (typeof header === "string") return `${header} ${REDACTED}`;
      return match.endsWith("@") ? `${REDACTED}@` : REDACTED;
    });
  }
  return out;
}
