/**
 * A plausible physical NAO v6 for the simulated chest board, in SI units (the chest board
 * quantizes to counts). Deterministic under a seed. No allocation in `step`.
 *
 * - Joints follow their targets as a first-order response whose speed scales with stiffness
 *   (time constant 40 ms at stiffness 1, capped at 6 rad/s); with stiffness 0 they stay put.
 * - Current follows effort: stiffness × (holding + tracking error); temperature rises with I²
 *   toward ambient + 45 °C·A⁻², with a 300 s time constant; status follows the temperature
 *   thresholds below.
 * - Accelerometer: gravity as LoLA reports it on the robot (z ≈ −9.81 m/s² upright, seed 000's
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
  batteryCharge = 0.99;
  batteryCurrentA = -1.2;
  batteryTemperatureC = 28.5;
  batteryStatusBits = 0;
  charging = false;
  headVoltageV = 24.8;
  headPowerW = 10.7;
  faceTemperatureC = 45;
  /** False until the first TMP100 reading (about 300 ms after power-on). */
  faceTemperatureValid = false;
  readonly leds = new Float64Array(89);
  timeS = 0;
  #nextTmpS = TMP100_PERIOD_S;

  constructor(seed = 1) {
    this.rng = new Rng(seed);
    for (let i = 0; i < 25; i++) {
      this.temperatureC[i] = AMBIENT_C + this.rng.range(-2, 4);
      // Start in a crouch-like rest: each joint at 0 clamped into its range.
      this.positionRad[i] = Math.min(LOLA_MAX_RAD[i]!, Math.max(LOLA_MIN_RAD[i]!, 0));
      this.targetRad[i] = this.positionRad[i]!;
    }
    this.batteryCharge = 0.99 - this.rng.range(0, 0.01);
  }

  /** Advance the body by `dtS` seconds. */
  step(dtS: number): void {
    const rng = this.rng;
    this.timeS += dtS;
    const t = this.timeS;
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
      const amps = s * (holding + 1.5 * Math.abs(this.targetRad[i]! - this.positionRad[i]!)) + Math.abs(rng.gauss(0.004));
      this.currentA[i] = Math.min(4, amps);
      load += amps;
      const tempTarget = AMBIENT_C + HEAT_C_PER_A2 * amps * amps;
      this.temperatureC[i]! += ((tempTarget - this.temperatureC[i]!) * dtS) / TAU_THERMAL_S;
      const c = this.temperatureC[i]!;
      this.status[i] = c >= TEMPERATURE_STATUS_C[2] ? 3 : c >= TEMPERATURE_STATUS_C[1] ? 2 : c >= TEMPERATURE_STATUS_C[0] ? 1 : 0;
    }
    // Torso sways a little; gravity seen in the inertial unit's axes.
    this.anglesRad[0] = 0.01 * Math.sin(t * 0.7) + rng.gauss(0.0005);
    this.anglesRad[1] = 0.015 * Math.sin(t * 0.5 + 1) + rng.gauss(0.0005);
    const roll = this.anglesRad[0]!;
    const pitch = this.anglesRad[1]!;
    this.accelerometerMps2[0] = GRAVITY_MPS2 * Math.sin(pitch) + rng.gauss(0.02);
    this.accelerometerMps2[1] = -GRAVITY_MPS2 * Math.sin(roll) * Math.cos(pitch) + rng.gauss(0.02);
    this.accelerometerMps2[2] = -GRAVITY_MPS2 * Math.cos(roll) * Math.cos(pitch) + rng.gauss(0.02);
    for (let k = 0; k < 3; k++) this.gyroscopeRadS[k] = rng.gauss(0.002);
    // Feet share the weight; the centre of pressure sways with the torso.
    const leftShare = 0.5 + 0.15 * Math.sin(t * 0.7);
    const front = 0.5 + 0.2 * Math.sin(t * 0.5 + 1);
    for (let f = 0; f < 2; f++) {
      const w = ROBOT_MASS_KG * (f === 0 ? leftShare : 1 - leftShare);
      const base = f * 4;
      this.fsrKg[base] = Math.max(0, (w * front) / 2 + rng.gauss(0.005));
      this.fsrKg[base + 1] = Math.max(0, (w * front) / 2 + rng.gauss(0.005));
      this.fsrKg[base + 2] = Math.max(0, (w * (1 - front)) / 2 + rng.gauss(0.005));
      this.fsrKg[base + 3] = Math.max(0, (w * (1 - front)) / 2 + rng.gauss(0.005));
    }
    // A person walking to and fro in front of the robot.
    for (let k = 0; k < 2; k++) {
      if (this.sonarEnabled[k]) this.sonarM[k] = 1.05 + 0.65 * Math.sin(t * 0.3 + k * 0.2) + rng.gauss(0.01);
    }
    // Battery.
    this.batteryCurrentA = this.charging ? 1.5 : -(0.9 + 0.12 * load) + rng.gauss(0.01);
    this.batteryCharge = Math.min(1, Math.max(0, this.batteryCharge + (this.batteryCurrentA * dtS) / (2.9 * 3600)));
    this.batteryTemperatureC += ((this.charging ? 36 : 33) - this.batteryTemperatureC) * (dtS / 1200);
    this.batteryStatusBits = this.charging ? 0x0080 : 0x0000;
    // Head.
    this.headVoltageV = 21.5 + 3.4 * this.batteryCharge + rng.gauss(0.005);
    this.headPowerW = 10.7 + rng.gauss(0.05);
    if (t >= this.#nextTmpS) {
      this.#nextTmpS += TMP100_PERIOD_S;
      this.faceTemperatureC = 45 + 2 * Math.sin(t / 60) + rng.gauss(0.05);
      this.faceTemperatureValid = true;
    }
  }
}
