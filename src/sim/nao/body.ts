/**
 * A plausible physical NAO v6 for the simulated chest board, in SI units (the chest board
 * quantizes to counts). Deterministic under a seed. No allocation in `step`.
 *
 * - Joints follow their targets as a first-order response whose speed scales with stiffness
 *   (time constant 40 ms at stiffness 1, capped at 6 rad/s); with stiffness 0 they stay put.
 * - Current follows effort: stiffness × (holding + tracking error); temperature rises with I²
 *   toward ambient + 45 °C·A⁻², with a 300 s time constant; status follows the temperature
 *   thresholds below.
 * - Accelerometer: gravity as LoLA reports it on the robot (z ≈ −9.81 m/s² upright, docs/api.md's
 *   "gravity at −10.4 m/s²"), tilted by the torso angles, with noise. Gyroscope near zero with noise.
 * - Battery discharges about 1 % per minute under load; sonar echoes follow a person walking
 *   between 0.4 and 1.7 m; the 5.3 kg robot's weight is shared by the feet with a slow sway.
 * - Head: INA230 24.8 V / 10.7 W, TMP100 face temperature 43–47 °C, read every 300 ms.
 */
import { LOLA_MAX_RAD, LOLA_MIN_RAD, isHand } from "../../bodies/nao/joints.js";
import { Rng } from "../random.js";

export const ROBOT_MASS_KG = 5.3;
export const GRAVITY_MPS2 = 9.81;
/** Joint temperature status thresholds, °C (inferred): 1 above the minimum, 2 near, 3 at the maximum. */
export const TEMPERATURE_STATUS_C = [70, 75, 80] as const;
const AMBIENT_C = 30;
const TAU_THERMAL_S = 300;
const HEAT_C_PER_A2 = 45;
const JOINT_TAU_S = 0.04;
const JOINT_MAX_SPEED_RADS = 6;
const TMP100_PERIOD_S = 0.3;
/** Battery status register, raw 16 bits, as rUNSWift's captures show it (LoLA: -32628.0 and -32724.0). */
export const BATTERY_STATUS_CHARGING = 0x808c;
export const BATTERY_STATUS_DISCHARGING = 0x802c;

/** Normal draws per step: 25 joint currents, 2 angles, 3 + 3 IMU, 8 FSR, 2 sonar, battery, 2 head, face. */
const NOISE_PER_STEP = 47;

export class SimNaoBody {
  readonly rng: Rng;
  readonly positionRad = new Float64Array(25);
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
  readonly #f = new Float64Array(9);
  get batteryCharge(): number { return this.#f[0]!; }
  set batteryCharge(v: number) { this.#f[0] = v; }
  get batteryCurrentA(): number { return this.#f[1]!; }
  set batteryCurrentA(v: number) { this.#f[1] = v; }
  get batteryTemperatureC(): number { return this.#f[2]!; }
  set batteryTemperatureC(v: number) { this.#f[2] = v; }
  get headVoltageV(): number { return this.#f[3]!; }
  set headVoltageV(v: number) { this.#f[3] = v; }
  get headPowerW(): number { return this.#f[4]!; }
  set headPowerW(v: number) { this.#f[4] = v; }
  get faceTemperatureC(): number { return this.#f[5]!; }
  set faceTemperatureC(v: number) { this.#f[5] = v; }
  /** Simulated time since power-on, s. */
  get timeS(): number { return this.#f[6]!; }
  batteryStatusBits = BATTERY_STATUS_DISCHARGING;
  charging = false;
  /** False until the first TMP100 reading (about 300 ms after power-on). */
  faceTemperatureValid = false;
  readonly leds = new Float64Array(89);
  readonly #noise = new Float64Array(NOISE_PER_STEP);

  constructor(seed = 1) {
    this.rng = new Rng(seed);
    for (let i = 0; i < 25; i++) {
      this.temperatureC[i] = AMBIENT_C + this.rng.range(-2, 4);
      // Start in a crouch-like rest: each joint at 0 clamped into its range.
      this.positionRad[i] = Math.min(LOLA_MAX_RAD[i]!, Math.max(LOLA_MIN_RAD[i]!, 0));
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
    this.#advance();
  }

  /** Advance the body by `dtS` seconds. */
  step(dtS: number): void {
    this.#f[8] = dtS;
    this.#advance();
  }

  // NOTE: takes its step from slot 8, not an argument: V8 boxes a double passed to a call it
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
    for (let i = 0; i < 25; i++) {
      const s = this.stiffness[i]!;
      const err = this.targetRad[i]! - this.positionRad[i]!;
      if (s > 0) {
        const alpha = 1 - Math.exp(-(dtS * s) / JOINT_TAU_S);
        const maxStep = JOINT_MAX_SPEED_RADS * s * dtS;
        this.positionRad[i]! += Math.max(-maxStep, Math.min(maxStep, err * alpha));
      }
      this.positionRad[i] = Math.min(isHand(i) ? 1 : LOLA_MAX_RAD[i]!, Math.max(isHand(i) ? 0 : LOLA_MIN_RAD[i]!, this.positionRad[i]!));
      const holding = i >= 7 && i <= 17 ? 0.25 : 0.05; // legs carry the body
      const amps = s * (holding + 1.5 * Math.abs(this.targetRad[i]! - this.positionRad[i]!)) + Math.abs(0.004 * z[k++]!);
      this.currentA[i] = Math.min(4, amps);
      load += amps;
      const tempTarget = AMBIENT_C + HEAT_C_PER_A2 * amps * amps;
      this.temperatureC[i]! += ((tempTarget - this.temperatureC[i]!) * dtS) / TAU_THERMAL_S;
      const c = this.temperatureC[i]!;
      this.status[i] = c >= TEMPERATURE_STATUS_C[2] ? 3 : c >= TEMPERATURE_STATUS_C[1] ? 2 : c >= TEMPERATURE_STATUS_C[0] ? 1 : 0;
    }
    // Torso sways a little; gravity seen in the inertial unit's axes.
    this.anglesRad[0] = 0.01 * Math.sin(t * 0.7) + 0.0005 * z[k++]!;
    this.anglesRad[1] = 0.015 * Math.sin(t * 0.5 + 1) + 0.0005 * z[k++]!;
    const roll = this.anglesRad[0]!;
    const pitch = this.anglesRad[1]!;
    this.accelerometerMps2[0] = GRAVITY_MPS2 * Math.sin(pitch) + 0.02 * z[k++]!;
    this.accelerometerMps2[1] = -GRAVITY_MPS2 * Math.sin(roll) * Math.cos(pitch) + 0.02 * z[k++]!;
    this.accelerometerMps2[2] = -GRAVITY_MPS2 * Math.cos(roll) * Math.cos(pitch) + 0.02 * z[k++]!;
    for (let a = 0; a < 3; a++) this.gyroscopeRadS[a] = 0.002 * z[k++]!;
    // Feet share the weight; the centre of pressure sways with the torso.
    const leftShare = 0.5 + 0.15 * Math.sin(t * 0.7);
    const front = 0.5 + 0.2 * Math.sin(t * 0.5 + 1);
    for (let foot = 0; foot < 2; foot++) {
      const w = ROBOT_MASS_KG * (foot === 0 ? leftShare : 1 - leftShare);
      const base = foot * 4;
      this.fsrKg[base] = Math.max(0, (w * front) / 2 + 0.005 * z[k++]!);
      this.fsrKg[base + 1] = Math.max(0, (w * front) / 2 + 0.005 * z[k++]!);
      this.fsrKg[base + 2] = Math.max(0, (w * (1 - front)) / 2 + 0.005 * z[k++]!);
      this.fsrKg[base + 3] = Math.max(0, (w * (1 - front)) / 2 + 0.005 * z[k++]!);
    }
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
