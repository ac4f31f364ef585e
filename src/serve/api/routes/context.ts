/**
 * What every route plugin of the robot API is given: the robot, its adapter, the state stream and
 * the control authority. `build.ts` makes one per server and registers each plugin with it.
 */
import type { BodyKind, PerBody } from "../../../bodies/registry.js";
import type { ControlAuthority } from "../../../runtime/authority.js";
import type { LockstepClock } from "../../../runtime/lockstep.js";
import type { NaoBody } from "../../../runtime/nao-body.js";
import type { P7Body } from "../../../runtime/p7-robot.js";
import type { Tny360Body } from "../../../runtime/tny360-robot.js";
import type { BodyAdapter } from "../adapter.js";
import type { StateStream } from "../stream.js";
import type { FleetGateway } from "../fleet-gateway.js";

/**
 * The runtime object the robot API serves, per body of the registry (`bodies/registry.ts`;
 * `PerBody`: a body missing here, or one the registry does not have, does not compile). The
 * adapters' table (`bodies/index.ts`) gives each factory its own body's object from it. The NAO
 * is a NaoBody: its core in this thread (NaoRobot) or in a worker (NaoHost), both declared so.
 */
export type ApiRobots = PerBody<{
  nao: NaoBody;
  p7: P7Body;
  tny360: Tny360Body;
}>;
/** Any body the robot API serves. */
export type ApiRobot = ApiRobots[BodyKind];

export interface ApiContext {
  readonly robot: ApiRobot;
  readonly adapter: BodyAdapter;
  readonly stream: StateStream;
  readonly authority: ControlAuthority;
  /** Set when the runtime joined a fleet (serve --fleet): health reports it, /v1/fleet serves it. */
  readonly fleet?: FleetGateway;
  /** The runtime's lockstep clock (serve --lockstep): POST /v1/sim/step moves it. */
  readonly lockstep?: LockstepClock;
}
