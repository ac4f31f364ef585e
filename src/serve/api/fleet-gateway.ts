/**
 * What the runtime's fleet seat (src/fleet/bridge.ts) offers the robot API's fleet routes
 * (routes/fleet.ts), as plain types. They are part of `startApiServer`'s published declarations
 * (its `fleet` option), so they name no TypeBox type: a `Static<typeof Schema>` there made every
 * strict consumer's tsc load and check TypeBox's ~380 declaration files (most of its time,
 * test/package.test.ts). test/api/published-types.test.ts checks each against its route schema.
 */
import type { FleetStatusAnswer } from "../../client/messages.js";

/** One robot as the fleet page shows it. `health` is the robot's last 1 Hz message, null when none came yet. */
export interface FleetRobotView {
  readonly name: string;
  readonly body: string;
  readonly host: string;
  readonly version: string;
  readonly started_at: string;
  readonly urls: { readonly api: string | null; readonly lola: string | null; readonly tny: string | null };
  readonly health: Record<string, unknown> | null;
  readonly health_age_ms: number | null;
}

/** The answer of POST /v1/fleet/estop and /v1/fleet/reset (routes/fleet.ts's ScatterSchema). */
export interface FleetScatterAnswer {
  readonly replies: { readonly name: string; readonly ok: boolean; readonly estop: Record<string, unknown>; readonly error?: Record<string, unknown> }[];
  readonly missing: string[];
  readonly unverified: string[];
  readonly elapsed_ms: number;
}

/** What the runtime's fleet seat offers the robot API. */
export interface FleetGateway {
  status(): FleetStatusAnswer;
  robots(): Promise<FleetRobotView[]>;
  estop(names: readonly string[] | null, req: { category?: 0 | 1; reason?: string }): Promise<FleetScatterAnswer>;
  reset(names: readonly string[] | null, req: { reason: string }): Promise<FleetScatterAnswer>;
}
