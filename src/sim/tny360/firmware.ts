/**
 * The simulated TNY-360's firmware state, shared by its parts: the controller (controller.ts),
 * the physics (physics.ts), the module handlers (handlers.ts) and the tick that runs them
 * (quadruped.ts, whose header says how the tick stays allocation-free: the tick's scalars live in
 * `f`, a Float64Array, by the slot constants below, so they are never boxed).
 */
import { GaitPlanner } from "../../bodies/tny360/gait.js";
import { JOINTS } from "../../bodies/tny360/joints.js";
import { Tny360State } from "../../bodies/tny360/state.js";
import { defaultCalibration } from "../../bodies/tny360/units.js";
import type { VelocityKeepAlive } from "../../bodies/tny360/velocity.js";
import { AutoLifeLevel, ErrorModuleId, ErrorSeverity, GaitType, JOINT_COUNT, LEG_COUNT, type LogLevelCode } from "../../wire/tny/constants.js";
import { ErrorRing, LogRing } from "./rings.js";

/** Control-loop tick (`CONTROL_LOOP_FREQ_HZ` = 200). */
export const SIM_PERIOD_MS = 5;

/** Command limits: one table with the host that validates commands for a threaded core (bodies/tny360/limits.ts). */
export { SIM_LIMITS } from "../../bodies/tny360/limits.js";

/** Error ids this simulator records (0xMMSSCCVV, inferred codes; the firmware's list is not in the reference). */
export const SIM_ERROR_IDS = {
  /** Leg / kinematics / out of bounds / warning; payload [legId, IkStatus]. */
  legIkRefused: (ErrorModuleId.Leg << 24) | (0x01 << 16) | (0x01 << 8) | ErrorSeverity.Warning,
  /** Body / control / intent watchdog / warning. */
  intentWatchdog: (ErrorModuleId.Body << 24) | (0x02 << 16) | (0x01 << 8) | ErrorSeverity.Warning,
  /** System / RPC / queue full / error. */
  rpcQueueFull: (ErrorModuleId.System << 24) | (0x01 << 16) | (0x01 << 8) | ErrorSeverity.Error,
} as const;

// Slots of `Firmware.f`, the tick's scalars.
/** This tick's time, ms. */
export const NOW_MS = 0;
/** This tick's step, s. */
export const DT_S = 1;
/** The previous tick's time, ms; NaN before the first tick after boot. */
export const LAST_NOW_MS = 2;
export const BOOT_MS = 3;
export const NEXT_DECISION_MS = 4;
/** When the decision loop last refreshed the control intent, ms. */
export const INTENT_STAMP_MS = 5;
/** Joint speed scale (1, or a smooth sequence's 5 % / 10 %). */
export const SPEED_SCALE = 6;
/** Battery state of charge 0..1. */
export const SOC = 7;
/** Body height at the previous physics step, m (NaN after boot). */
export const HEIGHT_PREV_M = 8;
/** The time of the request being answered, read once by whoever received it (NaN: none, `now()` reads the clock). */
export const REQUEST_MS = 9;
const SLOT_COUNT = 10;

/** Each joint's servo calibration (the simulator's servos are the default ones). */
export const CALIBRATION = JOINTS.map((j) => defaultCalibration(j.id));

export class Firmware {
  readonly state = new Tny360State("sim");
  readonly log = new LogRing();
  readonly errors = new ErrorRing();
  readonly planner = new GaitPlanner();
  readonly keeper: VelocityKeepAlive;
  /** The tick's scalars, by the slot constants above (typed: never boxed). */
  readonly f = new Float64Array(SLOT_COUNT);

  readonly enabled = new Uint8Array(JOINT_COUNT);
  readonly target = new Float64Array(JOINT_COUNT);
  /** Where each ideal servo is (its velocity-limited model). */
  readonly model = new Float64Array(JOINT_COUNT);
  readonly feedback = new Float64Array(JOINT_COUNT);
  readonly estimated = new Float64Array(JOINT_COUNT);
  /** Joint overrides (NaN: none). */
  readonly override = new Float64Array(JOINT_COUNT).fill(Number.NaN);
  readonly legOverride = new Float64Array(LEG_COUNT * 3);
  readonly legOverrideOn = new Uint8Array(LEG_COUNT);
  /** Requested posture: shift x, y, height z (m), rotation x, y, z (rad). */
  readonly posture = new Float64Array(6);
  readonly intentV = new Float64Array(3);
  intentGait: number = GaitType.Walk;
  gait: number = GaitType.Walk;
  watchdogTripped = false;
  controlLoop = true;
  decisionLoop = true;
  autolife: number = AutoLifeLevel.Full;
  rebootPending = false;

  // body-IK scratch, shared by the controller and the leg handler (never both in one call)
  readonly feet = new Float64Array(LEG_COUNT * 3);
  readonly ik = new Float64Array(LEG_COUNT * 3);
  readonly ikStatus = new Uint8Array(LEG_COUNT);

  readonly #nowMs: (() => number) | null;

  constructor(keeper: VelocityKeepAlive, nowMs: (() => number) | null) {
    this.keeper = keeper;
    this.#nowMs = nowMs;
    this.f[REQUEST_MS] = Number.NaN;
  }

  /** Current time for stamping commands between ticks: the request's own time when its caller gave one. */
  now(): number {
    const requestMs = this.f[REQUEST_MS]!;
    if (!Number.isNaN(requestMs)) return requestMs;
    if (this.#nowMs) return this.#nowMs();
    const last = this.f[LAST_NOW_MS]!;
    return Number.isNaN(last) ? this.f[BOOT_MS]! : last;
  }

  /** Power a joint on or off. The model already sits where the joint is (ideal servo), so enabling never jumps. */
  enable(j: number, on: boolean): void {
    this.enabled[j] = on ? 1 : 0;
  }

  enabledMask(): number {
    let mask = 0;
    for (let j = 0; j < JOINT_COUNT; j++) if (this.enabled[j]) mask |= 1 << j;
    return mask;
  }

  logLine(level: LogLevelCode, tag: string, message: string): void {
    this.log.add(this.f[LAST_NOW_MS]! - this.f[BOOT_MS]! || 0, level, tag, message);
  }

  error(errorId: number, payload: ArrayLike<number>): void {
    this.errors.add(this.f[LAST_NOW_MS]! - this.f[BOOT_MS]! || 0, errorId, payload);
  }

  chipTemperatureC(): number {
    return 42 + 1.5 * this.state.power.currentA;
  }

  clearJointOverrides(): void {
    // a loop, not fill(): every setVelocity clears them by default, and the builtin's call costs more than 14 stores
    const o = this.override;
    for (let j = 0; j < JOINT_COUNT; j++) o[j] = Number.NaN;
  }
}
