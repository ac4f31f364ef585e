/**
 * Forward kinematics of the simulated P7 link model (joints.ts) and the two quantities the
 * simulator's effort model needs: the gravity torque each motor must supply to hold the arm, and
 * the diagonal of the joint-space inertia of the point-mass links.
 *
 * Model: every link is a point mass at the middle of a straight segment along its own +z; joint i
 * rotates link i about one axis of link i−1's frame (P7_JOINT_AXIS). No off-diagonal inertia, no
 * Coriolis or centrifugal terms (docs/p7.md says what that leaves out).
 *
 * Pure and browser-safe. A `P7Kinematics` owns its workspace: `update()` and the torque methods
 * never allocate, so the simulator calls them every 4 ms step.
 */
import { GRAVITY_M_S2, P7_BASE_HEIGHT_M, P7_IMU_MOUNT, P7_JOINT_AXIS, P7_JOINT_COUNT, P7_LINK_LENGTH_M, P7_LINK_MASS_KG, P7_ROTOR_INERTIA_KG_M2 } from "./joints.js";

const N = P7_JOINT_COUNT;

export class P7Kinematics {
  /** World (base) rotation of link i after joint i turned, row-major 3×3, i = 0..6 → offset 9·i. */
  readonly rotation = new Float64Array(9 * N);
  /** World position of joint i's origin, m, offset 3·i. */
  readonly jointPosM = new Float64Array(3 * N);
  /** World direction (unit) of joint i's axis, offset 3·i. */
  readonly axis = new Float64Array(3 * N);
  /** World position of link i's centre of mass, m, offset 3·i. */
  readonly comM = new Float64Array(3 * N);
  /** World position of the flange (end of link 7), m. */
  readonly flangeM = new Float64Array(3);
  /** World position of the simulated IMU, m. Its axes are link 7's: `rotation` at offset 54. */
  readonly imuM = new Float64Array(3);

  /** Recompute every pose for joint angles `q` (rad, 7 values). Allocation-free. */
  update(q: ArrayLike<number>): void {
    const R = this.rotation;
    const P = this.jointPosM;
    // Parent rotation starts as identity (the base frame), parent origin at the base.
    let p00 = 1,
      p01 = 0,
      p02 = 0,
      p10 = 0,
      p11 = 1,
      p12 = 0,
      p20 = 0,
      p21 = 0,
      p22 = 1;
    // NOTE: start from the Smi 0 and add the height: a loop variable that starts as a module
    // constant holding a heap number stays tagged in optimised code and boxes a new number on
    // every iteration (measured: 16 B per joint per update).
    let ox = 0,
      oy = 0,
      oz = 0;
    oz += P7_BASE_HEIGHT_M;
    for (let i = 0; i < N; i++) {
      const k = P7_JOINT_AXIS[i]!;
      P[3 * i] = ox;
      P[3 * i + 1] = oy;
      P[3 * i + 2] = oz;
      // The joint axis in world coordinates is column k of the parent rotation.
      this.axis[3 * i] = k === 0 ? p00 : k === 1 ? p01 : p02;
      this.axis[3 * i + 1] = k === 0 ? p10 : k === 1 ? p11 : p12;
      this.axis[3 * i + 2] = k === 0 ? p20 : k === 1 ? p21 : p22;
      const c = Math.cos(q[i]!);
      const s = Math.sin(q[i]!);
      // Child = parent · elementary rotation about local axis k (only two columns change).
      let r00 = p00,
        r01 = p01,
        r02 = p02,
        r10 = p10,
        r11 = p11,
        r12 = p12,
        r20 = p20,
        r21 = p21,
        r22 = p22;
      if (k === 2) {
        // Rz: col0' = c·col0 + s·col1, col1' = −s·col0 + c·col1
        r00 = c * p00 + s * p01;
        r01 = -s * p00 + c * p01;
        r10 = c * p10 + s * p11;
        r11 = -s * p10 + c * p11;
        r20 = c * p20 + s * p21;
        r21 = -s * p20 + c * p21;
      } else if (k === 1) {
        // Ry: col0' = c·col0 − s·col2, col2' = s·col0 + c·col2
        r00 = c * p00 - s * p02;
        r02 = s * p00 + c * p02;
        r10 = c * p10 - s * p12;
        r12 = s * p10 + c * p12;
        r20 = c * p20 - s * p22;
        r22 = s * p20 + c * p22;
      } else {
        // Rx: col1' = c·col1 + s·col2, col2' = −s·col1 + c·col2
        r01 = c * p01 + s * p02;
        r02 = -s * p01 + c * p02;
        r11 = c * p11 + s * p12;
        r12 = -s * p11 + c * p12;
        r21 = c * p21 + s * p22;
        r22 = -s * p21 + c * p22;
      }
      const o = 9 * i;
      R[o] = r00;
      R[o + 1] = r01;
      R[o + 2] = r02;
      R[o + 3] = r10;
      R[o + 4] = r11;
      R[o + 5] = r12;
      R[o + 6] = r20;
      R[o + 7] = r21;
      R[o + 8] = r22;
      const half = P7_LINK_LENGTH_M[i]! / 2;
      this.comM[3 * i] = ox + half * r02;
      this.comM[3 * i + 1] = oy + half * r12;
      this.comM[3 * i + 2] = oz + half * r22;
      const len = P7_LINK_LENGTH_M[i]!;
      ox += len * r02;
      oy += len * r12;
      oz += len * r22;
      p00 = r00;
      p01 = r01;
      p02 = r02;
      p10 = r10;
      p11 = r11;
      p12 = r12;
      p20 = r20;
      p21 = r21;
      p22 = r22;
    }
    this.flangeM[0] = ox;
    this.flangeM[1] = oy;
    this.flangeM[2] = oz;
    const j = 3 * (P7_IMU_MOUNT.link - 1);
    const d = P7_IMU_MOUNT.offsetM;
    this.imuM[0] = P[j]! + d * p02;
    this.imuM[1] = P[j + 1]! + d * p12;
    this.imuM[2] = P[j + 2]! + d * p22;
  }

  /**
   * Torque each motor must supply to hold the arm still against gravity, N·m, positive about the
   * joint's positive direction (call `update` first). Allocation-free.
   */
  gravityTorquesNm(out: Float64Array): void {
    const g = GRAVITY_M_S2;
    for (let i = 0; i < N; i++) {
      const ax = this.axis[3 * i]!,
        ay = this.axis[3 * i + 1]!;
      const px = this.jointPosM[3 * i]!,
        py = this.jointPosM[3 * i + 1]!;
      let t = 0;
      for (let k = i; k < N; k++) {
        // Gravity's torque about the axis is a · (r × m·(0,0,−g)) = m·g·(a_y·r_x − a_x·r_y);
        // the motor holds with the opposite sign.
        const rx = this.comM[3 * k]! - px;
        const ry = this.comM[3 * k + 1]! - py;
        t += P7_LINK_MASS_KG[k]! * g * (ax * ry - ay * rx);
      }
      out[i] = t;
    }
  }

  /**
   * Diagonal of the joint-space inertia, kg·m²: rotor inertia plus Σ m·(distance of each distal
   * link's mass from the joint axis)². Allocation-free.
   */
  inertiaDiagKgM2(out: Float64Array): void {
    for (let i = 0; i < N; i++) {
      const ax = this.axis[3 * i]!,
        ay = this.axis[3 * i + 1]!,
        az = this.axis[3 * i + 2]!;
      const px = this.jointPosM[3 * i]!,
        py = this.jointPosM[3 * i + 1]!,
        pz = this.jointPosM[3 * i + 2]!;
      let inertia = P7_ROTOR_INERTIA_KG_M2[i]!;
      for (let k = i; k < N; k++) {
        const rx = this.comM[3 * k]! - px;
        const ry = this.comM[3 * k + 1]! - py;
        const rz = this.comM[3 * k + 2]! - pz;
        const cx = ay * rz - az * ry;
        const cy = az * rx - ax * rz;
        const cz = ax * ry - ay * rx;
        inertia += P7_LINK_MASS_KG[k]! * (cx * cx + cy * cy + cz * cz);
      }
      out[i] = inertia;
    }
  }
}
