/**
 * A plausible physical NAO v6 for the simulated chest board, in SI units (the chest board
 * quantizes to counts). Deterministic under a seed. No allocation in `step`.
 *
 * - The mechanics (joints, feet, IMU, where the robot is) come from a body model (model.ts): the
 *   kinematic puppet by default, or MuJoCo (physics/mujoco-nao.ts). This file adds what a sensor
 *   adds: noise on currents, IMU and FSRs, and the parts no model simulates.
 * - Temperature rises with the current squared toward ambient + 45 °C·A⁻², with a 300 s time
 *   constant; status follows the temperature thresholds below.
 * - Battery discharges about 1 % per minute under load; sonar echoes follow a person walking
 *   between 0.4 and 1.7 m.
 * - Head: INA230 24.8 V / 10.7 W, TMP100 face temperature 43–47 °C, read every 300 ms.
 */
import { KinematicNaoModel, type NaoBodyModel, type NaoSimPose, GRAVITY_MPS2 } from "./model.js";
export { GRAVITY_MPS2 };
import { Rng } from "../random.js";

/** Joint temperature status thresholds, °C (inferred): 1 above the minimum, 2 near, 3 at the maximum. */
export const TEMPERATURE_STATUS_C = [70, 75, 80] as const;
const AMBIENT_C = 30;
const TAU_THERMAL_S = 300;
const HEAT_C_PER_A2 = 45;
const TMP100_PERIOD_S = 0.3;
/** Battery status register, raw 16 bits, as rUNSWift's captures show it (LoLA: -32628.0 and -32724.0). */
export const BATTERY_STATUS_CHARGING = 0x808c;
export const BATTERY_STATUS_DISCHARGING = 0x802c;

/** Normal draws per step: 25 joint currents, 2 angles, 3 + 3 IMU, 8 FSR, 2 sonar, battery, 2 head, face. */
const NOISE_PER_STEP = 47;

export class SimNaoBody {
  readonly rng: Rng;
  /** The mechanics underneath (kinematic unless a physics model was given). */
  readonly model: NaoBodyModel;
  /** Measured joint positions, LoLA order, rad (the model's; hands 0..1). */
  readonly positionRad: Float64Array;
  readonly targetRad = new Float64Array(25);
  readonly stiffness = new Float64Array(25);
  readonly currentA = new Float64Array(25);
  readonly temperatureC = new Float64Array(25);
  readonly status = new Uint8Array(25);
  readonly accelerometerMps2 = new Float64Array(3);
  readonly gyroscopeRadS = new Float64Array(3);
  /** True torso angles (x roll, y pitch), rad. */
  readonly anglesRad = new Float64Array(2);
  readonly fsrKg = new Float64Array(8);
  readonly sonarM = new Float64Array([1.0, 1.0]);
  readonly sonarEnabled = new Uint8Array([1, 1]);
  /** 14 touch sensors in the seed's order; tests press them with `touch[i] = 1`. */
  readonly touch = new Uint8Array(14);
  // NOTE: scalars that change every step live in one Float64Array: V8 boxes a double assigned to
  // an object field often enough to allocate in the hot loop; typed-array slots never do.
  readonly #f = new Float64Array(10);
  get batteryCharge(): number {
    return this.#f[0]!;
  }
  set batteryCharge(v: number) {
    this.#f[0] = v;
  }
  get batteryCurrentA(): number {
    return this.#f[1]!;
  }
  set batteryCurrentA(v: number) {
    this.#f[1] = v;
  }
  get batteryTemperatureC(): number {
    return this.#f[2]!;
  }
  set batteryTemperatureC(v: number) {
    this.#f[2] = v;
  }
  get headVoltageV(): number {
    return this.#f[3]!;
  }
  set headVoltageV(v: number) {
    this.#f[3] = v;
  }
  get headPowerW(): number {
    return this.#f[4]!;
  }
  set headPowerW(v: number) {
    this.#f[4] = v;
  }
  get faceTemperatureC(): number {
    return this.#f[5]!;
  }
  set faceTemperatureC(v: number) {
    this.#f[5] = v;
  }
  /** Simulated time since power-on, s. */
  get timeS(): number {
    return this.#f[6]!;
  }
  /** Put the mechanics into `pose` (the world's reset; the electronics keep running). */
  resetPose(pose: NaoSimPose): void {
    this.model.reset(pose);
    for (let i = 0; i < 25; i++) this.targetRad[i] = this.positionRad[i]!;
  }
  batteryStatusBits = BATTERY_STATUS_DISCHARGING;
  charging = false;
  /** False until the first TMP100 reading (about 300 ms after power-on). */
  faceTemperatureValid = false;
  readonly leds = new Float64Array(89);
  readonly #noise = new Float64Array(NOISE_PER_STEP);

  constructor(seed = 1, model: NaoBodyModel = new KinematicNaoModel()) {
    this.rng = new Rng(seed);
    this.model = model;
    this.positionRad = model.positionRad;
    for (let i = 0; i < 25; i++) {
      this.temperatureC[i] = AMBIENT_C + this.rng.range(-2, 4);
      this.targetRad[i] = this.positionRad[i]!;
    }
    this.batteryCharge = 0.99 - this.rng.range(0, 0.01);
    this.batteryCurrentA = -1.2;
    this.batteryTemperatureC = 28.5;
    this.headVoltageV = 24.8;
    this.headPowerW = 10.7;
    this.faceTemperatureC = 45;
    this.#f[7] = TMP100_PERIOD_S; // next TMP100 reading, s
  }

  /** Advance the body by `dtUs` whole microseconds (the hot path: an integer argument is never boxed). */
  stepUs(dtUs: number): void {
    this.#f[8] = dtUs * 1e-6;
    this.#f[9] = dtUs;
    this.#advance();
  }

  /** Advance the body by `dtS` seconds (rounded to whole microseconds). */
  step(dtS: number): void {
    this.stepUs(Math.round(dtS * 1e6));
  }

  // NOTE: takes its step from slots 8 (s) and 9 (µs), not an argument: V8 boxes a double passed to a call it
  // does not inline, and this function is too large to inline.
  #advance(): void {
    const f = this.#f;
    const dtS = f[8]!;
    const z = this.#noise; // standard normals for this step, drawn in one call
    this.rng.fillGauss(z, NOISE_PER_STEP);
    let k = 0;
    f[6]! += dtS;
    const t = f[6]!;
    let load = 0;
    const m = this.model;
    m.stepUs(f[9]!, this.targetRad, this.stiffness);
    for (let i = 0; i < 25; i++) {
      const amps = m.currentA[i]! + Math.abs(0.004 * z[k++]!);
      this.currentA[i] = Math.min(4, amps);
      load += amps;
      const tempTarget = AMBIENT_C + HEAT_C_PER_A2 * amps * amps;
      this.temperatureC[i]! += ((tempTarget - this.temperatureC[i]!) * dtS) / TAU_THERMAL_S;
      const c = this.temperatureC[i]!;
      this.status[i] = c >= TEMPERATURE_STATUS_C[2] ? 3 : c >= TEMPERATURE_STATUS_C[1] ? 2 : c >= TEMPERATURE_STATUS_C[0] ? 1 : 0;
    }
    // The IMU and the FSRs read the model with sensor noise.
    this.anglesRad[0] = m.anglesRad[0]! + 0.0005 * z[k++]!;
    this.anglesRad[1] = m.anglesRad[1]! + 0.0005 * z[k++]!;
    for (let a = 0; a < 3; a++) this.accelerometerMps2[a] = m.accelerometerMps2[a]! + 0.02 * z[k++]!;
    for (let a = 0; a < 3; a++) this.gyroscopeRadS[a] = m.gyroscopeRadS[a]! + 0.002 * z[k++]!;
    for (let i = 0; i < 8; i++) this.fsrKg[i] = Math.max(0, m.fsrKg[i]! + 0.005 * z[k++]!);
    // A person walking to and fro in front of the robot.
    for (let e = 0; e < 2; e++) {
      const noise = 0.01 * z[k++]!;
      if (this.sonarEnabled[e]) this.sonarM[e] = 1.05 + 0.65 * Math.sin(t * 0.3 + e * 0.2) + noise;
    }
    // Battery.
    this.batteryCurrentA = this.charging ? 1.5 : -(0.9 + 0.12 * load) + 0.01 * z[k++]!;
    this.batteryCharge = Math.min(1, Math.max(0, this.batteryCharge + (this.batteryCurrentA * dtS) / (2.9 * 3600)));
    this.batteryTemperatureC += ((this.charging ? 36 : 33) - this.batteryTemperatureC) * (dtS / 1200);
    // The status register's values in rUNSWift's raw captures (bit 0x80: charging, as B-Human reads it).
    this.batteryStatusBits = this.charging ? BATTERY_STATUS_CHARGING : BATTERY_STATUS_DISCHARGING;
    // Head.
    this.headVoltageV = 21.5 + 3.4 * this.batteryCharge + 0.005 * z[k++]!;
    this.headPowerW = 10.7 + 0.05 * z[k++]!;
    if (t >= f[7]!) {
      f[7]! += TMP100_PERIOD_S;
      this.faceTemperatureC = 45 + 2 * Math.sin(t / 60) + 0.05 * z[k++]!;
      this.faceTemperatureValid = true;
    }
  }
}
