/**
 * The simulated TNY-360's control stages, in tick order: the 30 Hz decision loop (API requests →
 * control intent, with bodylink's velocity keep-alive), the control-intent watchdog, the smooth
 * enable/disable sequencer (Body.cpp task, tny360.md §6 body 0x06/0x07), the gait planner, leg
 * overrides, body IK, joint overrides and the velocity-limited joint models (7 rad/s, scaled).
 * Allocation-free per tick except log and error entries (see quadruped.ts's header).
 */
import { bodyIK, IK_STATUS_NAMES, IkStatus } from "../../bodies/tny360/kinematics.js";
import { LEG_NAMES, MAX_JOINT_VELOCITY_RAD_S } from "../../bodies/tny360/joints.js";
import { REST_POSE_RAD, SMOOTH_DISABLE_SPEED, SMOOTH_ENABLE_REST_SPEED, SMOOTH_ENABLE_STAND_SPEED, STAND_POSE_RAD, smoothDisableEstimateS, smoothEnableEstimateS } from "../../bodies/tny360/poses.js";
import type { SmoothPhase } from "../../bodies/tny360/state.js";
import { GaitType, JOINT_COUNT, LEG_COUNT, LogLevel } from "../../wire/tny/constants.js";
import { BOOT_MS, DT_S, type Firmware, INTENT_STAMP_MS, LAST_NOW_MS, NEXT_DECISION_MS, NOW_MS, SIM_ERROR_IDS, SIM_PERIOD_MS, SPEED_SCALE } from "./firmware.js";

const DECISION_PERIOD_MS = 1000 / 30;
/** `CONTROL_INTENT_WATCHDOG_MS`. */
const CONTROL_WATCHDOG_MS = 500;

const Smooth = { Idle: 0, EnableRest: 1, EnableStand: 2, DisableRest: 3 } as const;
type SmoothStep = (typeof Smooth)[keyof typeof Smooth];
const SMOOTH_PHASES: readonly SmoothPhase[] = ["idle", "enabling", "enabling", "disabling"];

export class Controller {
  readonly #fw: Firmware;
  #smooth: SmoothStep = Smooth.Idle;
  /** Legs whose refused IK target was already recorded (once per episode). */
  readonly #ikLogged = new Uint8Array(LEG_COUNT);

  constructor(fw: Firmware) {
    this.#fw = fw;
  }

  /** The smooth sequence's phase, as the state reports it. */
  get smoothPhase(): SmoothPhase {
    return SMOOTH_PHASES[this.#smooth]!;
  }

  /** Back to boot: no sequence, nothing recorded. */
  reset(): void {
    this.#smooth = Smooth.Idle;
    this.#ikLogged.fill(0);
  }

  /** The step, the velocity keep-alive and the 30 Hz decision loop. */
  decide(): void {
    const fw = this.#fw;
    const f = fw.f;
    const nowMs = f[NOW_MS]!;
    const last = f[LAST_NOW_MS]!;
    f[DT_S] = Number.isNaN(last) ? SIM_PERIOD_MS / 1000 : Math.min(0.05, Math.max(0, (nowMs - last) / 1000));
    f[LAST_NOW_MS] = nowMs;

    // bodylink's velocity keep-alive (the firmware has none): not renewed → decay to zero
    const keeper = fw.keeper;
    const wasDecaying = keeper.decaying;
    keeper.update(nowMs);
    if (keeper.decaying && !wasDecaying) fw.logLine(LogLevel.Warning, "body", `velocity not renewed within ${keeper.timeoutMs} ms: decaying to zero`);

    // decision loop, 30 Hz: merge requests into the control intent
    if (fw.decisionLoop && nowMs >= f[NEXT_DECISION_MS]!) {
      fw.intentV.set(keeper.current);
      fw.intentGait = fw.gait;
      f[INTENT_STAMP_MS] = nowMs;
      f[NEXT_DECISION_MS] = Math.max(f[NEXT_DECISION_MS]! + DECISION_PERIOD_MS, nowMs);
    }
  }

  /** Control loop, first half: intent watchdog, smooth sequencer, gait planner. */
  controlIntent(): void {
    const fw = this.#fw;
    if (!fw.controlLoop) return;
    const f = fw.f;
    const planner = fw.planner;
    const input = planner.input; // [dtS, vx, vy, wz]
    input[0] = f[DT_S]!;
    input[1] = fw.intentV[0]!;
    input[2] = fw.intentV[1]!;
    input[3] = fw.intentV[2]!;
    let gait = fw.intentGait;
    if (f[NOW_MS]! - f[INTENT_STAMP_MS]! > CONTROL_WATCHDOG_MS) {
      // a stalled decision loop: the firmware forces velocity 0 and the Walk gait
      input[1] = 0;
      input[2] = 0;
      input[3] = 0;
      gait = GaitType.Walk;
      if (!fw.watchdogTripped) {
        fw.watchdogTripped = true;
        fw.error(SIM_ERROR_IDS.intentWatchdog, []);
        fw.logLine(LogLevel.Warning, "control", "control intent older than 500 ms: velocity forced to 0");
      }
    } else fw.watchdogTripped = false;

    this.#smoothStep();

    planner.gait = gait;
    // Standing still is decided here, in this always-hot loop (see GaitPlanner.idle).
    if (!planner.idle) planner.advance();
  }

  /** Control loop, second half: leg overrides, body IK, joint overrides, joint models. */
  controlJoints(): void {
    const fw = this.#fw;
    if (!fw.controlLoop) return;
    const feet = fw.feet;
    const target = fw.target;
    const model = fw.model;
    feet.set(fw.planner.feet);
    for (let leg = 0; leg < LEG_COUNT; leg++) {
      if (fw.legOverrideOn[leg]) for (let k = 0; k < 3; k++) feet[leg * 3 + k] = fw.legOverride[leg * 3 + k]!;
    }
    bodyIK(fw.posture, feet, fw.ik, fw.ikStatus);
    for (let leg = 0; leg < LEG_COUNT; leg++) {
      const st = fw.ikStatus[leg]!;
      if (st === IkStatus.Ok) {
        for (let k = 0; k < 3; k++) target[leg * 3 + k] = fw.ik[leg * 3 + k]!;
        this.#ikLogged[leg] = 0;
      } else if (!this.#ikLogged[leg]) {
        // refused: the joints keep their old targets (firmware); recorded once per episode
        this.#ikLogged[leg] = 1;
        fw.error(SIM_ERROR_IDS.legIkRefused, [leg, st]);
        fw.logLine(LogLevel.Warning, "kinematics", `${LEG_NAMES[leg]} foot target refused: ${IK_STATUS_NAMES[st]}`);
      }
    }
    for (let j = 0; j < JOINT_COUNT; j++) {
      const o = fw.override[j]!;
      if (!Number.isNaN(o)) target[j] = o;
    }
    const maxStep = MAX_JOINT_VELOCITY_RAD_S * fw.f[SPEED_SCALE]! * fw.f[DT_S]!;
    for (let j = 0; j < JOINT_COUNT; j++) {
      if (!fw.enabled[j]) continue;
      const d = target[j]! - model[j]!;
      model[j] = Math.abs(d) <= maxStep ? target[j]! : model[j]! + Math.sign(d) * maxStep;
    }
  }

  // -------------------------------------------------------------------------------------------
  // Smooth enable / disable (Body.cpp task, §6 body 0x06/0x07)

  #smoothStep(): void {
    const fw = this.#fw;
    switch (this.#smooth) {
      case Smooth.EnableRest:
        if (this.#legsAt(REST_POSE_RAD)) {
          fw.f[SPEED_SCALE] = SMOOTH_ENABLE_STAND_SPEED;
          this.#setLegOverrides(STAND_POSE_RAD);
          this.#smooth = Smooth.EnableStand;
        }
        return;
      case Smooth.EnableStand:
        if (this.#legsAt(STAND_POSE_RAD)) {
          fw.f[SPEED_SCALE] = 1;
          fw.clearJointOverrides(); // enableSmooth clears the joint overrides when it finishes
          this.#smooth = Smooth.Idle;
          fw.logLine(LogLevel.Success, "body", `smooth enable done at ${((fw.f[NOW_MS]! - fw.f[BOOT_MS]!) / 1000).toFixed(3)} s`);
        }
        return;
      case Smooth.DisableRest:
        if (this.#legsAt(REST_POSE_RAD)) {
          for (let j = 0; j < 12; j++) {
            fw.enabled[j] = 0;
            fw.override[j] = Number.NaN;
          }
          fw.f[SPEED_SCALE] = 1;
          this.#smooth = Smooth.Idle;
          fw.logLine(LogLevel.Success, "body", "smooth disable done: leg joints off");
        }
        return;
      default:
        return;
    }
  }

  /** Every enabled leg joint has reached its pose value (disabled joints cannot move: ignored). */
  #legsAt(pose: Float64Array): boolean {
    const fw = this.#fw;
    for (let j = 0; j < 12; j++) if (fw.enabled[j] && fw.model[j] !== pose[j]) return false;
    return true;
  }

  #setLegOverrides(pose: Float64Array): void {
    for (let j = 0; j < 12; j++) this.#fw.override[j] = pose[j]!;
  }

  /** Stop a smooth sequence in progress (an override write, the control loop stopping, an e-stop). */
  cancelSmooth(why: string): void {
    if (this.#smooth === Smooth.Idle) return;
    this.#smooth = Smooth.Idle;
    this.#fw.f[SPEED_SCALE] = 1;
    this.#fw.logLine(LogLevel.Warning, "body", `smooth sequence cancelled: ${why}`);
  }

  /** Start a smooth enable; returns its estimated duration (s), or −1 with the control loop stopped. */
  enableSmooth(): number {
    const fw = this.#fw;
    if (!fw.controlLoop) return -1; // nothing moves with the control loop stopped
    for (let j = 0; j < JOINT_COUNT; j++) fw.enable(j, true);
    const estimate = smoothEnableEstimateS(fw.model);
    fw.f[SPEED_SCALE] = SMOOTH_ENABLE_REST_SPEED;
    this.#setLegOverrides(REST_POSE_RAD);
    this.#smooth = Smooth.EnableRest;
    fw.logLine(LogLevel.Info, "body", `smooth enable: REST at 5 %, then STAND at 10 %, about ${estimate.toFixed(2)} s`);
    return estimate;
  }

  /** Start a smooth disable; returns its estimated duration (s), or −1 with the control loop stopped. */
  disableSmooth(): number {
    const fw = this.#fw;
    if (!fw.controlLoop) return -1;
    const estimate = smoothDisableEstimateS(fw.model, fw.enabled);
    fw.f[SPEED_SCALE] = SMOOTH_DISABLE_SPEED;
    this.#setLegOverrides(REST_POSE_RAD);
    this.#smooth = Smooth.DisableRest;
    fw.logLine(LogLevel.Info, "body", `smooth disable: REST at 10 %, then leg joints off, about ${estimate.toFixed(2)} s`);
    return estimate;
  }
}
