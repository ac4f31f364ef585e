/**
 * The TNY-360's MJCF, generated from our tables and loaded by MuJoCo itself: the mass is the
 * published 1.8 kg, the joints run in the body's JointId order with the firmware's limits, the
 * servos are the MG996R's and SG90's figures, and every paw lands where the firmware's kinematics
 * put the foot.
 */
import { describe, expect, it } from "vitest";
import { loadMjcf } from "../support/mjcf-model.js";
import { JOINTS, JOINT_NAMES, LEG_NAMES } from "../../src/bodies/tny360/joints.js";
import { footInBody } from "../../src/bodies/tny360/kinematics.js";
import { TNY360_BODY_MASS_KG, TNY360_CONTACT_LINKS, TNY360_LINK_MASS_KG, TNY360_SENSOR_ADR, TNY360_TOTAL_MASS_KG, tny360Mjcf } from "../../src/bodies/tny360/mjcf.js";
import { TNY360_SERVO, TNY360_SERVOS } from "../../src/bodies/tny360/servos.js";
import { Rng } from "../../src/sim/random.js";

const { mj, m, d, name } = await loadMjcf(tny360Mjcf());

describe("the TNY-360 MJCF", () => {
  it("weighs the published 1.8 kg: four legs, two ears and the body", () => {
    const masses = m.body_mass as Float64Array;
    expect(masses.reduce((a, b) => a + b, 0)).toBeCloseTo(TNY360_TOTAL_MASS_KG, 9);
    const byName = (n: string) => masses[mj.mj_name2id(m, mj.mjtObj.mjOBJ_BODY.value, n)]!;
    expect(byName("Body")).toBeCloseTo(TNY360_BODY_MASS_KG, 9);
    expect(TNY360_BODY_MASS_KG).toBeCloseTo(0.972, 9); // 1.8 − 4 × (75 + 90 + 35 g) − 2 × 14 g
    for (const leg of LEG_NAMES) {
      expect(byName(`${leg}Hip`) + byName(`${leg}Thigh`) + byName(`${leg}Calf`)).toBeCloseTo(TNY360_LINK_MASS_KG.hip + TNY360_LINK_MASS_KG.thigh + TNY360_LINK_MASS_KG.calf, 9);
    }
    expect(byName("EarLeft")).toBeCloseTo(TNY360_LINK_MASS_KG.ear, 9);
  });

  it("runs its 14 hinge joints in JointId order, each with the firmware's limits", () => {
    expect(m.nq).toBe(7 + 14);
    expect(m.njnt).toBe(15);
    const joints = Array.from({ length: 14 }, (_, i) => name(mj.mjtObj.mjOBJ_JOINT.value, i + 1));
    expect(joints).toEqual(JOINT_NAMES);
    const range = m.jnt_range as Float64Array;
    JOINTS.forEach((j, i) => {
      expect([range[2 * (i + 1)], range[2 * (i + 1) + 1]]).toEqual([Number(j.minRad.toPrecision(9)), Number(j.maxRad.toPrecision(9))]);
    });
  });

  it("has a position servo per joint in JointId order: MG996R legs, SG90 ears, at their stall torque, damped by their torque–speed slope", () => {
    expect(m.nu).toBe(14);
    expect(Array.from({ length: 14 }, (_, i) => name(mj.mjtObj.mjOBJ_ACTUATOR.value, i))).toEqual(JOINT_NAMES);
    const fr = m.actuator_forcerange as Float64Array;
    const gain = m.actuator_gainprm as Float64Array;
    const bias = m.actuator_biasprm as Float64Array;
    JOINTS.forEach((j, i) => {
      const s = j.part === "ear" ? TNY360_SERVOS.SG90 : TNY360_SERVOS.MG996R;
      expect(fr[2 * i + 1]).toBeCloseTo(s.stallTorqueNm, 6);
      expect(fr[2 * i]).toBeCloseTo(-s.stallTorqueNm, 6);
      expect(gain[10 * i]).toBeCloseTo(s.stallTorqueNm / TNY360_SERVO.stallErrorRad, 5);
      expect(bias[10 * i + 2]).toBeCloseTo(-s.stallTorqueNm / s.noLoadSpeedRadS, 6);
    });
    // the datasheets: MG996R 11 kgf·cm and 0.14 s/60° at 6 V; SG90 1.8 kgf·cm and 0.1 s/60°
    expect(TNY360_SERVOS.MG996R.stallTorqueNm).toBeCloseTo(1.0787, 4);
    expect(TNY360_SERVOS.MG996R.noLoadSpeedRadS).toBeCloseTo(7.48, 2);
    expect(TNY360_SERVOS.SG90.stallTorqueNm).toBeCloseTo(0.1765, 4);
    expect(TNY360_SERVOS.SG90.noLoadSpeedRadS).toBeCloseTo(10.47, 2);
  });

  it("puts each paw where the firmware's leg kinematics put the foot, for any joint angles", () => {
    const rng = new Rng(7);
    const sites = LEG_NAMES.map((l) => mj.mj_name2id(m, mj.mjtObj.mjOBJ_SITE.value, `${l}Foot`));
    const q = d.qpos as Float64Array;
    const out = new Float64Array(3);
    let worst = 0;
    for (let n = 0; n < 300; n++) {
      q.set([0, 0, 0, 1, 0, 0, 0]);
      for (let i = 0; i < 14; i++) q[7 + i] = JOINTS[i]!.minRad + rng.next() * (JOINTS[i]!.maxRad - JOINTS[i]!.minRad);
      mj.mj_kinematics(m, d);
      const xpos = d.site_xpos as Float64Array;
      for (let leg = 0; leg < 4; leg++) {
        footInBody(leg, q[7 + leg * 3]!, q[8 + leg * 3]!, q[9 + leg * 3]!, out);
        for (let k = 0; k < 3; k++) worst = Math.max(worst, Math.abs(xpos[3 * sites[leg]! + k]! - out[k]!));
      }
    }
    expect(worst).toBeLessThan(1e-12);
  });

  it("paws are spheres; the sensors are the IMU and a floor contact per link, in the documented order", () => {
    const paw = mj.mj_name2id(m, mj.mjtObj.mjOBJ_GEOM.value, "FrontLeftPawGeom");
    expect((m.geom_type as Int32Array)[paw]).toBe(mj.mjtGeom.mjGEOM_SPHERE.value);
    expect(TNY360_CONTACT_LINKS).toEqual(["Body", "FrontLeftPaw", "BackLeftPaw", "BackRightPaw", "FrontRightPaw"]);
    const adr = m.sensor_adr as Int32Array;
    expect(adr[0]).toBe(TNY360_SENSOR_ADR.accelerometer);
    expect(adr[1]).toBe(TNY360_SENSOR_ADR.gyro);
    expect(adr[2]).toBe(TNY360_SENSOR_ADR.quat);
    TNY360_CONTACT_LINKS.forEach((l, c) => {
      expect(name(mj.mjtObj.mjOBJ_SENSOR.value, 3 + c)).toBe(`${l}Contact`);
      expect(adr[3 + c]).toBe(TNY360_SENSOR_ADR.contacts + c * TNY360_SENSOR_ADR.contactStride);
    });
  });
});
