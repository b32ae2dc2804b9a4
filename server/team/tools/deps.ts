import type { TeamLimits } from "../../limits";
import type { ActivityHub } from "../../live/activity";

/** What the Team tools need from their host. */
export interface TeamToolDeps {
  hub: ActivityHub;
  limits: TeamLimits;
}
