import { z } from "zod";
import { asSessionId } from "../ids";
import { LIMITS } from "../../shared/limits";

// Input shapes several routers share.

/** How many rows a list procedure returns. */
export const ListInput = z.object({ limit: z.number().int().min(1).max(LIMITS.listMax).default(LIMITS.listDefault) }).optional();

/** A session id, or a team id (a team is named by its Lead's session id). */
export const SessionIdInput = z.string().min(1).max(64).transform(asSessionId);

/** A team named by its id (the Lead's session id). */
export const TeamRef = z.object({ teamId: SessionIdInput });

/** A session's (a Lead's) title. */
export const TitleInput = z.string().trim().min(1).max(LIMITS.sessionTitleChars);
