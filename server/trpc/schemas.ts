import { z } from "zod";
import { LIMITS } from "../limits";

// Input shapes several routers share.

/** How many rows a list procedure returns. */
export const ListInput = z.object({ limit: z.number().int().min(1).max(LIMITS.listMax).default(LIMITS.listDefault) }).optional();
