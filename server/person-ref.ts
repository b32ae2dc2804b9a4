import { z } from "zod";

/**
 * A person as recorded on what they did (who created a team, edited a queued prompt, decided
 * an approval): the id, and the display name at that time. On the lowest floor, because the
 * runtime's rows carry it too and the runtime knows nothing else of people.
 */
export const PersonRefSchema = z.object({ id: z.string(), name: z.string() });
export type PersonRef = z.infer<typeof PersonRefSchema>;

export const ref = (p: { id: string; name: string }): PersonRef => ({ id: p.id, name: p.name });
