import type { TeamLimits } from "../../limits";
import type { ActivityHub } from "../../live/activity";
import type { ModelOption } from "../../models/catalog";

/** What the Team tools need from their host. */
export interface TeamToolDeps {
  hub: ActivityHub;
  limits: TeamLimits;
  /** The models this server offers (spawn_teammate lists them and may name one). */
  models: readonly ModelOption[];
}
