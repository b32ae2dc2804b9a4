import { z } from "zod";

// A session's model choice: provider and model names only (keys stay in the server's
// environment). No other imports, so domain code and the UI can use it without loading the
// provider SDKs.

export const ModelChoiceSchema = z.object({
  provider: z.enum(["scripted", "openai-compatible", "anthropic"]),
  model: z.string().min(1).max(200),
});
export type ModelChoice = z.infer<typeof ModelChoiceSchema>;

/** The keyless scripted model: the default choice, always available. */
export const SCRIPTED_CHOICE: ModelChoice = { provider: "scripted", model: "keyless" };
