/**
 * The TNY-360 runtime state: what the simulator computes or the driver polls from a real robot,
 * in the firmware's joint order (JointId) and SI units.
 *
 * One instance lives for the robot's life and is overwritten in place every cycle (no
 * allocation). Anything handed to a client is a copy: `snapshotTny360State(s)` returns a frozen,
 * JSON-ready object. Values a source cannot provide are NaN (documented per field), never stale.
 */
import { GaitType, JOINT_COUNT, LEG_COUNT } from "../../wire/tny/constants.js";
import type { LinkStatus } from "../link.js";
import { SIM_WORLD, SIM_WORLD_SLOTS } from "../sim-world.js";
import { JOINT_NAMES, LEG_NAMES } from "./joints.js";
import { TNY360_CONTACT_LINKS } from "./mjcf.js";

/** The link words every body shares (bodies/link.ts). */
export type Tny360Link = LinkStatus;
export type Tny360Source = "sim" | "remote";
export type SmoothPhase = "idle" | "enabling" | "disabling";

export class Tny360State {
  /** Where the values come from: bodylink's simulator or a real robot over its WebSocket API. */
  readonly source: Tny360Source;
  /** Cycle (sim) or completed poll (remote) counter; 0 before the first. */
  seq = 0;
  /** Monotonic time of the cycle/poll that produced this state, ms (the runtime's clock). */
  timestampMs = 0;
  /** Wall-clock time of the same cycle/poll, ms since the Unix epoch. */
  epochMs = 0;
  /** True once a complete state has been produced (sim: first cycle; remote: first full poll). */
  valid = false;
  link: Tny360Link = "starting";

  readonly joints = {
    /** Measured angle, rad (potentiometer feedback; ears have none: their model angle). */
    positionRad: new Float32Array(JOINT_COUNT),
    /** Target angle the joint is driven to, rad (remote: polled round-robin, one joint per poll). */
    targetRad: new Float32Array(JOINT_COUNT),
    /** Angular velocity, rad/s (sim: model; remote: differenced feedback). */
    velocityRadS: new Float32Array(JOINT_COUNT),
    /** Holding torque estimate, N·m, signed (sim: gravity load through the leg Jacobian; remote: NaN). */
    effortNm: new Float32Array(JOINT_COUNT),
    /** 1 when the joint's servo is powered. */
    enabled: new Uint8Array(JOINT_COUNT),
    /** Servo temperature, °C: always NaN (MG996R/SG90 hobby servos report no temperature). */
    temperatureC: new Float32Array(JOINT_COUNT).fill(Number.NaN),
  };

  readonly imu = {
    /** Euler XYZ (roll, pitch, yaw), rad. A real robot's firmware always reports yaw 0 (§12 #15). */
    orientationRad: new Float32Array(3),
    /** Body-frame angular velocity, rad/s (NaN on a real robot: its firmware answers an empty reply). */
    angularVelocityRadS: new Float32Array(3),
    /** Body-frame specific force (what an accelerometer reads: +9.81 on z at rest), m/s² (NaN on a real robot). */
    linearAccelerationMS2: new Float32Array(3),
    /** Unit gravity direction in the body frame (0, 0, −1 when level). */
    down: new Float32Array(3),
  };

  /** Paw contact per leg (FL, BL, BR, FR): 1 = grounded. */
  readonly paws = { grounded: new Uint8Array(LEG_COUNT) };

  /**
   * Odometry of the planner frame in the start frame (x forward, y left at start), integrated from
   * planted feet (sim) or from the commanded velocity (remote: dead reckoning, not measured).
   */
  readonly odometry = { xM: 0, yM: 0, yawRad: 0, vxMS: 0, vyMS: 0, yawRateRadS: 0 };

  readonly body = {
    /** Target velocity the robot walks at now [x m/s, y m/s, yaw rad/s] (after watchdogs and decay). */
    targetVelocity: new Float32Array(3),
    /** Target posture position [x, y, z] m (z = height above ground). */
    posturePositionM: new Float32Array(3),
    /** Target posture rotation [rx, ry, rz] rad, Euler XYZ. */
    postureRotationRad: new Float32Array(3),
    /** Measured body height above the ground, m (sim; NaN remote). */
    heightM: 0,
    /** GaitType: 0 Creep, 1 Walk, 2 Run. */
    gait: GaitType.Walk as number,
    /** Enable bitfield over JointId. */
    enabledMask: 0,
    smooth: "idle" as SmoothPhase,
  };

  readonly power = { voltageV: 0, currentA: 0, powerW: 0 };

  readonly errors = {
    /** Events in the robot's ring (max 32). */
    count: 0,
    /** Most recent event's id, or −1. */
    lastEventId: -1,
    /** Most recent event's error id 0xMMSSCCVV, or 0. */
    lastErrorId: 0,
  };

  readonly system = { controlLoopEnabled: true, decisionLoopEnabled: true, chipTemperatureC: Number.NaN };

  /**
   * The physics simulator's world (slots in SIM_WORLD, bodies/sim-world.ts): present (1 with
   * `--sim physics`), simulated time s, the body centre's position m and orientation (x, y, z, w)
   * in the world, fallen (0/1), the real-time factor. All 0 on a robot and the kinematic simulator.
   */
  readonly simWorld = new Float64Array(SIM_WORLD_SLOTS);
  /** Net floor contact force per link, N, in TNY360_CONTACT_LINKS' order (the body, then the paws; 0: not touching). */
  readonly simContacts = new Float32Array(TNY360_CONTACT_LINKS.length);

  constructor(source: Tny360Source) {
    this.source = source;
  }
}

/**
 * Copy every value of `from` into `to` (a driver's newest state into the runtime's, in its `read`).
 * Perform side: no allocation. `source` is the state's identity and is not copied.
 */
export function copyTny360State(from: Tny360State, to: Tny360State): void {
  to.seq = from.seq;
  to.timestampMs = from.timestampMs;
  to.epochMs = from.epochMs;
  to.valid = from.valid;
  to.link = from.link;
  const fj = from.joints;
  const tj = to.joints;
  tj.positionRad.set(fj.positionRad);
  tj.targetRad.set(fj.targetRad);
  tj.velocityRadS.set(fj.velocityRadS);
  tj.effortNm.set(fj.effortNm);
  tj.enabled.set(fj.enabled);
  tj.temperatureC.set(fj.temperatureC);
  to.imu.orientationRad.set(from.imu.orientationRad);
  to.imu.angularVelocityRadS.set(from.imu.angularVelocityRadS);
  to.imu.linearAccelerationMS2.set(from.imu.linearAccelerationMS2);
  to.imu.down.set(from.imu.down);
  to.paws.grounded.set(from.paws.grounded);
  const fo = from.odometry;
  const to_ = to.odometry;
  to_.xM = fo.xM;
  to_.yM = fo.yM;
  to_.yawRad = fo.yawRad;
  to_.vxMS = fo.vxMS;
  to_.vyMS = fo.vyMS;
  to_.yawRateRadS = fo.yawRateRadS;
  const fb = from.body;
  const tb = to.body;
  tb.targetVelocity.set(fb.targetVelocity);
  tb.posturePositionM.set(fb.posturePositionM);
  tb.postureRotationRad.set(fb.postureRotationRad);
  tb.heightM = fb.heightM;
  tb.gait = fb.gait;
  tb.enabledMask = fb.enabledMask;
  tb.smooth = fb.smooth;
  to.power.voltageV = from.power.voltageV;
  to.power.currentA = from.power.currentA;
  to.power.powerW = from.power.powerW;
  to.errors.count = from.errors.count;
  to.errors.lastEventId = from.errors.lastEventId;
  to.errors.lastErrorId = from.errors.lastErrorId;
  to.system.controlLoopEnabled = from.system.controlLoopEnabled;
  to.system.decisionLoopEnabled = from.system.decisionLoopEnabled;
  to.system.chipTemperatureC = from.system.chipTemperatureC;
  to.simWorld.set(from.simWorld);
  to.simContacts.set(from.simContacts);
}

/** A physics simulator's world in a snapshot (docs/simulation.md); null without one. */
export interface Tny360SimSnapshot {
  readonly timeS: number;
  readonly basePositionM: readonly number[];
  readonly baseOrientationXyzw: readonly number[];
  readonly fallen: boolean;
  readonly realTimeFactor: number;
  /** Links touching the floor now, and the net force on each, N. */
  readonly contacts: readonly { readonly link: string; readonly forceN: number }[];
}

/** Plain, frozen, JSON-ready copy of a state (prepare side; allocates). */
export interface Tny360Snapshot {
  readonly source: Tny360Source;
  readonly seq: number;
  readonly timestampMs: number;
  readonly epochMs: number;
  readonly valid: boolean;
  readonly link: Tny360Link;
  readonly joints: {
    readonly names: readonly string[];
    readonly positionRad: readonly number[];
    readonly targetRad: readonly number[];
    readonly velocityRadS: readonly number[];
    readonly effortNm: readonly (number | null)[];
    readonly enabled: readonly boolean[];
    /** null: no sensor. */
    readonly temperatureC: readonly (number | null)[];
  };
  readonly imu: {
    readonly orientationRad: readonly number[];
    readonly angularVelocityRadS: readonly (number | null)[];
    readonly linearAccelerationMS2: readonly (number | null)[];
    readonly down: readonly number[];
  };
  readonly paws: { readonly legs: readonly string[]; readonly grounded: readonly boolean[] };
  readonly odometry: { readonly xM: number; readonly yM: number; readonly yawRad: number; readonly vxMS: number; readonly vyMS: number; readonly yawRateRadS: number };
  readonly body: {
    readonly targetVelocity: { readonly xMS: number; readonly yMS: number; readonly yawRadS: number };
    readonly posture: { readonly xM: number; readonly yM: number; readonly zM: number; readonly rxRad: number; readonly ryRad: number; readonly rzRad: number };
    readonly heightM: number | null;
    readonly gait: "Creep" | "Walk" | "Run";
    readonly enabledMask: number;
    readonly smooth: SmoothPhase;
  };
  readonly power: { readonly voltageV: number; readonly currentA: number; readonly powerW: number };
  readonly errors: { readonly count: number; readonly lastEventId: number; readonly lastErrorId: number };
  readonly system: { readonly controlLoopEnabled: boolean; readonly decisionLoopEnabled: boolean; readonly chipTemperatureC: number | null };
  /** The physics simulator's world (`serve --sim physics`); null on a robot and the kinematic simulator. */
  readonly sim: Tny360SimSnapshot | null;
}

const GAITS = ["Creep", "Walk", "Run"] as const;
/** NaN → null so JSON keeps "unknown" distinct from 0. */
const orNull = (v: number): number | null => (Number.isNaN(v) ? null : v);

function deepFreeze<T>(o: T): T {
  if (o && typeof o === "object") {
    for (const v of Object.values(o)) deepFreeze(v);
    Object.freeze(o);
  }
  return o;
}

export type Tny360JointsSnapshot = Tny360Snapshot["joints"];
export type Tny360ImuSnapshot = Tny360Snapshot["imu"];
export type Tny360PawsSnapshot = Tny360Snapshot["paws"];
export type Tny360OdometrySnapshot = Tny360Snapshot["odometry"];
export type Tny360BodySnapshot = Tny360Snapshot["body"];
export type Tny360PowerSnapshot = Tny360Snapshot["power"];
export type Tny360ErrorsSnapshot = Tny360Snapshot["errors"];

/** Joints in JointId order: measured/target angles, velocities, efforts, enable bits, temperatures (null = no sensor). */
export function snapshotJoints(s: Tny360State): Tny360JointsSnapshot {
  const j = s.joints;
  return deepFreeze({
    names: [...JOINT_NAMES],
    positionRad: Array.from(j.positionRad),
    targetRad: Array.from(j.targetRad),
    velocityRadS: Array.from(j.velocityRadS),
    effortNm: Array.from(j.effortNm, orNull),
    enabled: Array.from(j.enabled, (v) => v !== 0),
    temperatureC: Array.from(j.temperatureC, orNull),
  });
}

/** IMU: orientation (Euler XYZ), angular velocity, specific force, down vector (null = not available). */
export function snapshotImu(s: Tny360State): Tny360ImuSnapshot {
  return deepFreeze({
    orientationRad: Array.from(s.imu.orientationRad),
    angularVelocityRadS: Array.from(s.imu.angularVelocityRadS, orNull),
    linearAccelerationMS2: Array.from(s.imu.linearAccelerationMS2, orNull),
    down: Array.from(s.imu.down),
  });
}

export function snapshotPaws(s: Tny360State): Tny360PawsSnapshot {
  return deepFreeze({ legs: [...LEG_NAMES], grounded: Array.from(s.paws.grounded, (v) => v !== 0) });
}

export function snapshotOdometry(s: Tny360State): Tny360OdometrySnapshot {
  return Object.freeze({ ...s.odometry });
}

/** Target velocity, posture, measured height, gait, enable bits, smooth sequence. */
export function snapshotBody(s: Tny360State): Tny360BodySnapshot {
  return deepFreeze({
    targetVelocity: { xMS: s.body.targetVelocity[0]!, yMS: s.body.targetVelocity[1]!, yawRadS: s.body.targetVelocity[2]! },
    posture: {
      xM: s.body.posturePositionM[0]!,
      yM: s.body.posturePositionM[1]!,
      zM: s.body.posturePositionM[2]!,
      rxRad: s.body.postureRotationRad[0]!,
      ryRad: s.body.postureRotationRad[1]!,
      rzRad: s.body.postureRotationRad[2]!,
    },
    heightM: orNull(s.body.heightM),
    gait: GAITS[s.body.gait] ?? "Walk",
    enabledMask: s.body.enabledMask,
    smooth: s.body.smooth,
  });
}

export function snapshotPower(s: Tny360State): Tny360PowerSnapshot {
  return Object.freeze({ ...s.power });
}

export function snapshotErrors(s: Tny360State): Tny360ErrorsSnapshot {
  return Object.freeze({ ...s.errors });
}

/** The whole state as one frozen, JSON-ready object. */
export function snapshotTny360State(s: Tny360State): Tny360Snapshot {
  return Object.freeze({
    source: s.source,
    seq: s.seq,
    timestampMs: s.timestampMs,
    epochMs: s.epochMs,
    valid: s.valid,
    link: s.link,
    joints: snapshotJoints(s),
    imu: snapshotImu(s),
    paws: snapshotPaws(s),
    odometry: snapshotOdometry(s),
    body: snapshotBody(s),
    power: snapshotPower(s),
    errors: snapshotErrors(s),
    system: Object.freeze({ ...s.system, chipTemperatureC: orNull(s.system.chipTemperatureC) }),
    sim: snapshotSimWorld(s),
  });
}

/** The physics world, or null without one. */
export function snapshotSimWorld(s: Tny360State): Tny360SimSnapshot | null {
  const w = s.simWorld;
  if (w[SIM_WORLD.present] !== 1) return null;
  const contacts: { link: string; forceN: number }[] = [];
  for (let i = 0; i < TNY360_CONTACT_LINKS.length; i++) if (s.simContacts[i]! > 0) contacts.push({ link: TNY360_CONTACT_LINKS[i]!, forceN: s.simContacts[i]! });
  return deepFreeze({
    timeS: w[SIM_WORLD.timeS]!,
    basePositionM: [w[SIM_WORLD.x]!, w[SIM_WORLD.y]!, w[SIM_WORLD.z]!],
    baseOrientationXyzw: [w[SIM_WORLD.qx]!, w[SIM_WORLD.qy]!, w[SIM_WORLD.qz]!, w[SIM_WORLD.qw]!],
    fallen: w[SIM_WORLD.fallen] === 1,
    realTimeFactor: w[SIM_WORLD.realTimeFactor]!,
    contacts,
  });
}

/** One decoded answer to a request: a status, and for Ok the return values in table order. */
export interface TnyReply {
  readonly status: number;
  readonly values: readonly unknown[];
}

export const NO_VALUES: readonly unknown[] = Object.freeze([]);
export const OK_EMPTY: TnyReply = Object.freeze({ status: 0, values: NO_VALUES });
