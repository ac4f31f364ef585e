/**
 * The simulated TNY-360's kinematic model (`serve --sim kinematic`; the seam: model.ts), in tick order: the realized posture, feet,
 * body height and paw contacts; odometry from the planted feet and the IMU; joint feedback,
 * estimates, velocities and holding torques; power draw, battery and the ADC channels.
 *
 * The model (inferred, documented in docs/protocol/tny360.md): ideal servos (the joint is where
 * its velocity-limited model is), the body rests on its lowest foot (or on its belly), planted
 * feet do not slip, so odometry is the motion of the planted feet. Allocation-free per step.
 */
import { eulerXYZ, footInBody, legFK, rotationXYZ } from "../../bodies/tny360/kinematics.js";
import { ADC_CHANNEL_COUNT, JOINTS, LEG_Y_INVERTED } from "../../bodies/tny360/joints.js";
import { JOINT_COUNT, LEG_COUNT } from "../../wire/tny/constants.js";
import { Rng } from "../random.js";
import { DT_S, type Firmware, HEIGHT_PREV_M } from "./firmware.js";
import { ACCEL_NOISE_MS2, FEEDBACK_NOISE_RAD, powerAndAdc, type Tny360BodyModel } from "./model.js";

// Physical model (inferred values; see the header).
const G = 9.81;
const BODY_MASS_KG = 1.8;
const BELLY_CLEARANCE_M = 0.035;
const CONTACT_M = 0.002;
const POSTURE_SHIFT_RATE_MS = 0.5;
const POSTURE_ROTATION_RATE_RADS = 2.0;
/** Posture components the body follows by rate limit (z is the measured height). */
const POSTURE_FOLLOW: readonly number[] = [0, 1, 3, 4, 5];

export class KinematicTnyModel implements Tny360BodyModel {
  readonly kind = "kinematic";
  readonly world = null;
  readonly #fw: Firmware;
  readonly #seed: number;
  #rand = new Rng(1);
  /** Standard normals drawn once per physics step: 3 accelerometer axes, then one per joint. */
  readonly #z = new Float64Array(3 + JOINT_COUNT);
  readonly #prevModel = new Float64Array(JOINT_COUNT);
  /** Realized posture: shift x, y, height z (m), rotation x, y, z (rad). */
  readonly realized = new Float64Array(6);
  readonly #rot = new Float64Array(9);
  /** The body's rotation in the world (odometry yaw × realized rotation). */
  readonly #rotW = new Float64Array(9);
  readonly #rotWPrev = new Float64Array(9);
  readonly #footBody = new Float64Array(LEG_COUNT * 3);
  readonly #footPlan = new Float64Array(LEG_COUNT * 3);
  readonly #footPlanPrev = new Float64Array(LEG_COUNT * 3);
  /** Paws on the ground at this step (1/0 per leg). */
  readonly grounded = new Uint8Array(LEG_COUNT);
  readonly #groundedPrev = new Uint8Array(LEG_COUNT);
  readonly #velW = new Float64Array(3);
  readonly #velWPrev = new Float64Array(3);
  readonly #accW = new Float64Array(3);
  readonly #euler = new Float64Array(3);
  readonly #fk = new Float64Array(3);
  readonly #fkd = new Float64Array(3);
  /** The ADC channels (getAllChannels): joint feedback voltages and paw switches. */
  readonly adc = new Float32Array(ADC_CHANNEL_COUNT);
  /** Feet on the ground at this physics step. */
  #nGround = 0;
  #firstPhysics = true;

  constructor(fw: Firmware, seed: number) {
    this.#fw = fw;
    this.#seed = seed;
  }

  /** Body centre above the ground, m (the realized posture's height). */
  get heightM(): number {
    return this.realized[2]!;
  }

  /** Back to boot: the noise generator restarts, nothing moves, the next step has no history. */
  reset(): void {
    this.#rand = new Rng(this.#seed || 1);
    this.#prevModel.set(this.#fw.model);
    this.realized.fill(0);
    this.#accW.fill(0);
    this.#velW.fill(0);
    this.#fw.f[HEIGHT_PREV_M] = Number.NaN;
    this.#firstPhysics = true;
  }

  /** First part: the realized posture, the feet under it, body height and paw contacts. */
  bodyPose(): void {
    const fw = this.#fw;
    const dtS = fw.f[DT_S]!;
    const m = fw.model;
    const realized = this.realized;
    const legsOn = (fw.enabledMask() & 0x0fff) === 0x0fff && fw.controlLoop;
    // the body follows the requested shift and rotation only while all 12 leg joints hold it
    for (let n = 0; n < POSTURE_FOLLOW.length; n++) {
      const k = POSTURE_FOLLOW[n]!;
      const goal = legsOn ? fw.posture[k]! : 0;
      const rate = k < 2 ? POSTURE_SHIFT_RATE_MS : POSTURE_ROTATION_RATE_RADS;
      const d = goal - realized[k]!;
      const stepMax = rate * dtS;
      realized[k] = Math.abs(d) <= stepMax ? goal : realized[k]! + Math.sign(d) * stepMax;
    }
    rotationXYZ(realized[3]!, realized[4]!, realized[5]!, this.#rot);
    const r = this.#rot;
    const footBody = this.#footBody;
    let minZ = Number.POSITIVE_INFINITY;
    for (let leg = 0; leg < LEG_COUNT; leg++) {
      const i = leg * 3;
      footInBody(leg, m[i]!, m[i + 1]!, m[i + 2]!, footBody, i);
      const z = r[6]! * footBody[i]! + r[7]! * footBody[i + 1]! + r[8]! * footBody[i + 2]!;
      if (z < minZ) minZ = z;
    }
    const height = Math.max(BELLY_CLEARANCE_M, -minZ); // resting on the lowest foot, or on the belly
    realized[2] = height;
    const plan = this.#footPlan;
    this.#footPlanPrev.set(plan);
    this.#groundedPrev.set(this.grounded);
    let nGround = 0;
    for (let leg = 0; leg < LEG_COUNT; leg++) {
      const i = leg * 3;
      const bx = footBody[i]!,
        by = footBody[i + 1]!,
        bz = footBody[i + 2]!;
      plan[i] = r[0]! * bx + r[1]! * by + r[2]! * bz + realized[0]!;
      plan[i + 1] = r[3]! * bx + r[4]! * by + r[5]! * bz + realized[1]!;
      plan[i + 2] = r[6]! * bx + r[7]! * by + r[8]! * bz + height;
      this.grounded[leg] = plan[i + 2]! <= CONTACT_M ? 1 : 0;
      nGround += this.grounded[leg]!;
    }
    this.#nGround = nGround;
    if (this.#firstPhysics) {
      this.#footPlanPrev.set(plan);
      this.#groundedPrev.set(this.grounded);
    }
  }

  /** Second part: odometry from the planted feet, the IMU, this step's noise. */
  odometryImu(): void {
    const fw = this.#fw;
    const f = fw.f;
    const dtS = f[DT_S]!;
    const r = this.#rot;
    const height = this.realized[2]!;
    const plan = this.#footPlan;
    const prev = this.#footPlanPrev;
    const grounded = this.grounded;
    const groundedPrev = this.#groundedPrev;
    // odometry: the body moves opposite to its planted feet (no slip)
    const od = fw.state.odometry;
    let dx = 0,
      dy = 0,
      dth = 0;
    if (fw.planner.active && dtS > 0) {
      let n = 0,
        mx = 0,
        my = 0,
        px = 0,
        py = 0;
      for (let leg = 0; leg < LEG_COUNT; leg++) {
        if (!grounded[leg] || !groundedPrev[leg]) continue;
        const i = leg * 3;
        mx += plan[i]! - prev[i]!;
        my += plan[i + 1]! - prev[i + 1]!;
        px += plan[i]!;
        py += plan[i + 1]!;
        n++;
      }
      if (n > 0) {
        mx /= n;
        my /= n;
        px /= n;
        py /= n;
        dx = -mx;
        dy = -my;
        if (n >= 2) {
          let num = 0,
            den = 0;
          for (let leg = 0; leg < LEG_COUNT; leg++) {
            if (!grounded[leg] || !groundedPrev[leg]) continue;
            const i = leg * 3;
            const rx = plan[i]! - px,
              ry = plan[i + 1]! - py;
            const ddx = plan[i]! - prev[i]! - mx,
              ddy = plan[i + 1]! - prev[i + 1]! - my;
            num += rx * ddy - ry * ddx;
            den += rx * rx + ry * ry;
          }
          if (den > 1e-9) dth = -num / den;
        }
      }
    }
    const yawMid = od.yawRad + dth / 2;
    const c = Math.cos(yawMid),
      s = Math.sin(yawMid);
    od.xM += c * dx - s * dy;
    od.yM += s * dx + c * dy;
    od.yawRad = wrapPi(od.yawRad + dth);
    const alpha = 0.1; // reported velocities are smoothed; the integration above is not
    if (dtS > 0) {
      od.vxMS += alpha * (dx / dtS - od.vxMS);
      od.vyMS += alpha * (dy / dtS - od.vyMS);
      od.yawRateRadS += alpha * (dth / dtS - od.yawRateRadS);
    }

    // IMU: world rotation = yaw of the odometry frame × the body's realized rotation
    const cy = Math.cos(od.yawRad),
      sy = Math.sin(od.yawRad);
    const w = this.#rotW;
    this.#rotWPrev.set(w);
    for (let col = 0; col < 3; col++) {
      w[col] = cy * r[col]! - sy * r[3 + col]!;
      w[3 + col] = sy * r[col]! + cy * r[3 + col]!;
      w[6 + col] = r[6 + col]!;
    }
    if (this.#firstPhysics) this.#rotWPrev.set(w);
    eulerXYZ(w, this.#euler);
    const imu = fw.state.imu;
    for (let k = 0; k < 3; k++) imu.orientationRad[k] = this.#euler[k]!;
    const p = this.#rotWPrev;
    const velW = this.#velW;
    const velWPrev = this.#velWPrev;
    const accW = this.#accW;
    if (dtS > 0) {
      // body-frame rates from Rprev^T · R ≈ I + [ω]× dt (skew part)
      const m01 = p[0]! * w[1]! + p[3]! * w[4]! + p[6]! * w[7]!;
      const m10 = p[1]! * w[0]! + p[4]! * w[3]! + p[7]! * w[6]!;
      const m02 = p[0]! * w[2]! + p[3]! * w[5]! + p[6]! * w[8]!;
      const m20 = p[2]! * w[0]! + p[5]! * w[3]! + p[8]! * w[6]!;
      const m12 = p[1]! * w[2]! + p[4]! * w[5]! + p[7]! * w[8]!;
      const m21 = p[2]! * w[1]! + p[5]! * w[4]! + p[8]! * w[7]!;
      imu.angularVelocityRadS[0] = (m21 - m12) / (2 * dtS);
      imu.angularVelocityRadS[1] = (m02 - m20) / (2 * dtS);
      imu.angularVelocityRadS[2] = (m10 - m01) / (2 * dtS);
      // world velocity of the body, then a smoothed acceleration
      velWPrev.set(velW);
      velW[0] = (cy * dx - sy * dy) / dtS;
      velW[1] = (sy * dx + cy * dy) / dtS;
      const heightPrev = f[HEIGHT_PREV_M]!;
      velW[2] = Number.isNaN(heightPrev) ? 0 : (height - heightPrev) / dtS;
      if (this.#firstPhysics) velWPrev.set(velW);
      for (let k = 0; k < 3; k++) accW[k] = accW[k]! + 0.2 * ((velW[k]! - velWPrev[k]!) / dtS - accW[k]!);
    }
    f[HEIGHT_PREV_M] = height;
    const fx = accW[0]!,
      fy = accW[1]!,
      fz = accW[2]! + G;
    // all of this step's noise in one call (a double returned from a call is boxed too)
    const z = this.#z;
    this.#rand.fillGauss(z, z.length);
    for (let k = 0; k < 3; k++) {
      // specific force and gravity direction in the body frame: R^T · v
      imu.linearAccelerationMS2[k] = w[k]! * fx + w[3 + k]! * fy + w[6 + k]! * fz + ACCEL_NOISE_MS2 * z[k]!;
      imu.down[k] = 0 - w[6 + k]!; // 0 − x, not −x: no −0 in the readings
    }
  }

  /** Third part: joint feedback, estimates, velocities, and holding torques. */
  jointSensors(): void {
    const fw = this.#fw;
    const dtS = fw.f[DT_S]!;
    const m = fw.model;
    const z = this.#z;
    const w = this.#rotW;
    // joints: ideal servos; feedback = angle + noise, estimate = model nudged toward feedback
    const j = fw.state.joints;
    for (let i = 0; i < JOINT_COUNT; i++) {
      const hasFeedback = JOINTS[i]!.adcChannel !== null;
      fw.feedback[i] = hasFeedback ? m[i]! + FEEDBACK_NOISE_RAD * z[3 + i]! : m[i]!;
      fw.estimated[i] = m[i]! + 0.25 * (fw.feedback[i]! - m[i]!);
      j.velocityRadS[i] = dtS > 0 && !this.#firstPhysics ? (m[i]! - this.#prevModel[i]!) / dtS : 0;
      j.effortNm[i] = 0;
    }
    this.#prevModel.set(m);

    // efforts: the weight shared by the planted feet, through each leg's Jacobian (J^T F)
    const nGround = this.#nGround;
    if (nGround > 0) {
      const f = (BODY_MASS_KG * G) / nGround;
      for (let leg = 0; leg < LEG_COUNT; leg++) {
        if (!this.grounded[leg]) continue;
        const i = leg * 3;
        // ground reaction in the leg frame: R^T (0, 0, f), y negated for the y-inverted legs
        const fbx = w[6]! * f,
          fby = (LEG_Y_INVERTED[leg] ? -1 : 1) * w[7]! * f,
          fbz = w[8]! * f;
        legFK(m[i]!, m[i + 1]!, m[i + 2]!, this.#fk);
        for (let k = 0; k < 3; k++) {
          const eps = 1e-6;
          legFK(m[i]! + (k === 0 ? eps : 0), m[i + 1]! + (k === 1 ? eps : 0), m[i + 2]! + (k === 2 ? eps : 0), this.#fkd);
          const jx = (this.#fkd[0]! - this.#fk[0]!) / eps,
            jy = (this.#fkd[1]! - this.#fk[1]!) / eps,
            jz = (this.#fkd[2]! - this.#fk[2]!) / eps;
          // holding torque the servo applies against the ground reaction
          j.effortNm[i + k] = fw.enabled[i + k] ? -(jx * fbx + jy * fby + jz * fbz) : 0;
        }
      }
    }
  }

  /** Last part: power draw and battery, the ADC channels. */
  powerAdc(): void {
    powerAndAdc(this.#fw, this.grounded, this.adc);
    this.#firstPhysics = false;
  }
}

function wrapPi(a: number): number {
  if (a > Math.PI) return a - 2 * Math.PI;
  if (a <= -Math.PI) return a + 2 * Math.PI;
  return a;
}
