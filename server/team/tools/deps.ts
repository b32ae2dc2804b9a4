import type { TeamLimits } from "../../../shared/limits";
import type { ActivityBus } from "../../db/notify";
import type { SessionEvent } from "../../runtime/events";
import type { ModelOption } from "../../models/catalog";

/** What the Team tools need from their host. */
export interface TeamToolDeps {
  hub: ActivityBus<SessionEvent>;
  limits: TeamLimits;
  /** The models this server offers (spawn_teammate lists them and may name one). */
  models: readonly ModelOption[];
}
