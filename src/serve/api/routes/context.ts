/**
 * What every route plugin of the robot API is given: the robot, its adapter, the state stream and
 * the control authority. `build.ts` makes one per server and registers each plugin with it.
 */
import type { Authority } from "../../../runtime/authority.js";
import type { NaoRobot } from "../../../runtime/nao-robot.js";
import type { P7Robot } from "../../../runtime/p7-robot.js";
import type { Tny360Robot } from "../../../runtime/tny360-robot.js";
import type { BodyAdapter } from "../adapter.js";
import type { StateStream } from "../stream.js";
import type { FleetGateway } from "./fleet.js";

/** Any body the robot API serves. */
export type ApiRobot = NaoRobot | P7Robot | Tny360Robot;

export interface ApiContext {
  readonly robot: ApiRobot;
  readonly adapter: BodyAdapter;
  readonly stream: StateStream;
  readonly authority: Authority;
  /** Set when the runtime joined a fleet (serve --fleet): health reports it, /v1/fleet serves it. */
  readonly fleet?: FleetGateway;
}
