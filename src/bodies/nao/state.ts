/**
 * The NAO runtime's state: LoLA's arrays, order and units (docs/protocol/chestboard.md), plus
 * what LoLA never sends (foot weight and centre of pressure, head readings).
 *
 * One instance lives for the runtime's life and is overwritten in place every cycle (no
 * allocation). Servers read it on the perform side; anything handed to a client is a copy
 * (see `snapshotNaoState`). Float arrays are Float32Array because LoLA's values are float32: the
 * LoLA writer copies them bit for bit.
 */

import type { LinkStatus } from "../link.js";
import type { SafetyCode } from "../safety.js";
import { SIM_WORLD_SLOTS } from "../sim-world.js";

export type { LinkStatus };

export interface HeadReadings {
  /** INA230 bus voltage, V (1.25 mV per count). */
  voltageV: number;
  /** INA230 power, W. */
  powerW: number;
  /** INA230 current, A. */
  currentA: number;
  /** TMP100 face temperature, °C; 0 until the first reading (read about every 300 ms). */
  faceTemperatureC: number;
}

/** Slots of `NaoState.simWorld` (a physics simulator's world; all 0 on a robot or the kinematic simulator). */
export { SIM_WORLD } from "../sim-world.js";
/** Slots in `NaoState.simContacts`: NAO_CONTACT_LINKS' order (bodies/nao/mjcf.ts), room for 16. */
export const SIM_CONTACT_SLOTS = 16;

/** Slots of `NaoState.scalars`. */
export const SCALAR = {
  timestampMs: 0,
  epochMs: 1,
  batteryTemperatureC: 2,
  headVoltageV: 3,
  headPowerW: 4,
  headCurrentA: 5,
  faceTemperatureC: 6,
} as const;

export class NaoState {
  /**
   * Scalar doubles written every cycle, in one typed array (slots in SCALAR) and read through the
   * named accessors below. NOTE: V8 may box a double stored in an object field; never a typed-array slot.
   */
  readonly scalars = new Float64Array(7);
  /** Cycle sequence number; 0 before the first decoded answer. */
  seq = 0;
  /** Monotonic time of the cycle that produced this state, ms (the runtime's clock). */
  get timestampMs(): number {
    return this.scalars[SCALAR.timestampMs]!;
  }
  set timestampMs(v: number) {
    this.scalars[SCALAR.timestampMs] = v;
  }
  /** Wall-clock time of the same cycle, ms since the Unix epoch. */
  get epochMs(): number {
    return this.scalars[SCALAR.epochMs]!;
  }
  set epochMs(v: number) {
    this.scalars[SCALAR.epochMs] = v;
  }
  /** True once a complete answer frame has been decoded. */
  valid = false;

  /** m/s², x y z, inertial unit axes as LoLA reports them (±9.81 m/s² per 16,384 counts). */
  readonly accelerometer = new Float32Array(3);
  /** rad/s, x y z (500 °/s per 32,768 counts). */
  readonly gyroscope = new Float32Array(3);
  /** rad, x y: the inertial unit's own estimate with the preference offsets applied. */
  readonly angles = new Float32Array(2);
  /** [charge 0..1, status bit field, current A (negative discharging), temperature on LoLA's scale]. */
  readonly battery = new Float32Array(4);
  /** kg: LFoot FL FR RL RR, RFoot FL FR RL RR. */
  readonly fsr = new Float32Array(8);
  /** m, left right: first echo. */
  readonly sonar = new Float32Array(2);
  /** 0 or 1, in the seed's touch order (chest button, head front/middle/rear, bumpers, hands). */
  readonly touch = new Float32Array(14);
  /** rad (hands 0..1), LoLA order. */
  readonly position = new Float32Array(25);
  /**
   * rad/s, LoLA order: estimated by the runtime (the NAO has no velocity sensor), the finite
   * difference of `position` over the last two fresh states; 0 until there are two.
   */
  readonly velocity = new Float32Array(25);
  /** A, LoLA order. */
  readonly current = new Float32Array(25);
  /** °C in steps of 2, LoLA order. */
  readonly temperature = new Float32Array(25);
  /** 0 normal, 1 above the minimum, 2 near the maximum, 3 at the maximum; LoLA order. */
  readonly status = new Uint8Array(25);
  /** The stiffness that was commanded and sent this cycle (0..1), LoLA order. Not measured. */
  readonly stiffness = new Float32Array(25);

  /** Battery temperature in °C (the true value; `battery[3]` is LoLA's scale). */
  get batteryTemperatureC(): number {
    return this.scalars[SCALAR.batteryTemperatureC]!;
  }
  set batteryTemperatureC(v: number) {
    this.scalars[SCALAR.batteryTemperatureC] = v;
  }
  /** Total weight on each foot, kg: [left, right]. */
  readonly footWeightKg = new Float32Array(2);
  /** Centre of pressure in each ankle frame, m: [left x, left y, right x, right y]. 0 when unloaded. */
  readonly centerOfPressureM = new Float32Array(4);
  /** Head readings (views of `scalars`). */
  readonly head: Readonly<HeadReadings> = headView(this.scalars);

  /** 1 where the joint's board was accepted and started, 0 where it was left uninitialized. */
  readonly jointInitialized = new Uint8Array(25);
  /**
   * The physics simulator's world (slots in SIM_WORLD): present (1 with a physics body), simulated
   * time s, torso position m (x, y, z; the floor at z = 0), orientation (x, y, z, w), fallen (0/1),
   * simulated seconds per real second over the last second (runtime/sim-time.ts).
   */
  readonly simWorld = new Float64Array(SIM_WORLD_SLOTS);
  /** Net floor contact force per link, N, in NAO_CONTACT_LINKS' order (0: not touching). */
  readonly simContacts = new Float32Array(SIM_CONTACT_SLOTS);

  link: LinkStatus = "starting";
  /** Why the commanded stiffness is being ramped to 0, as a code (SAFETY_CODES); "none" when commands flow normally. */
  safety: SafetyCode = "none";
  /** The same in words with its details (who, what failed), or null when commands flow normally. */
  safetyReason: string | null = null;
  /** Frames the chest board did not acknowledge with the right CRC (cumulative). */
  unacknowledgedFrames = 0;
  /** Bulk reads that timed out (cumulative). */
  readTimeouts = 0;
  /** Answer frames that decoded to no messages (cumulative). */
  badFrames = 0;
  /** Last chest-board status word from vendor request 0x15, or -1 if never asked. */
  boardStatus = -1;
}

function headView(f: Float64Array): Readonly<HeadReadings> {
  return Object.freeze({
    get voltageV() {
      return f[SCALAR.headVoltageV]!;
    },
    get powerW() {
      return f[SCALAR.headPowerW]!;
    },
    get currentA() {
      return f[SCALAR.headCurrentA]!;
    },
    get faceTemperatureC() {
      return f[SCALAR.faceTemperatureC]!;
    },
  });
}

/** A plain, JSON-ready copy of the state (prepare side: allocates). */
export function snapshotNaoState(s: NaoState) {
  return {
    seq: s.seq,
    timestampMs: s.timestampMs,
    epochMs: s.epochMs,
    valid: s.valid,
    accelerometer: Array.from(s.accelerometer),
    gyroscope: Array.from(s.gyroscope),
    angles: Array.from(s.angles),
    battery: Array.from(s.battery),
    fsr: Array.from(s.fsr),
    sonar: Array.from(s.sonar),
    touch: Array.from(s.touch),
    position: Array.from(s.position),
    current: Array.from(s.current),
    temperature: Array.from(s.temperature),
    status: Array.from(s.status),
    stiffness: Array.from(s.stiffness),
    batteryTemperatureC: s.batteryTemperatureC,
    footWeightKg: Array.from(s.footWeightKg),
    centerOfPressureM: Array.from(s.centerOfPressureM),
    head: { voltageV: s.head.voltageV, powerW: s.head.powerW, currentA: s.head.currentA, faceTemperatureC: s.head.faceTemperatureC },
    jointInitialized: Array.from(s.jointInitialized, (v) => v === 1),
    link: s.link,
    safety: s.safety,
    safetyReason: s.safetyReason,
    unacknowledgedFrames: s.unacknowledgedFrames,
    readTimeouts: s.readTimeouts,
    badFrames: s.badFrames,
    boardStatus: s.boardStatus,
  };
}
export type NaoStateSnapshot = ReturnType<typeof snapshotNaoState>;
