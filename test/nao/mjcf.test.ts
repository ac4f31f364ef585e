/**
 * Issue 21 item 2: the NAO's MJCF, generated from our tables, loaded by MuJoCo itself: masses sum
 * to Aldebaran's table, the joints run in LoLA's order, limits and torque limits are the tables'.
 */
import { describe, expect, it } from "vitest";
import { loadMjcf } from "../support/mjcf-model.js";
import { FSR_POSITIONS_M } from "../../src/bodies/nao/feet.js";
import { JOINT_LIMITS, LOLA_ORDER } from "../../src/bodies/nao/joints.js";
import { NAO_MASSES, NAO_TOTAL_MASS_KG } from "../../src/bodies/nao/masses.js";
import { groundedBasePose, NAO_CONTACT_LINKS, NAO_FOOT_BOX_M, NAO_MJCF_JOINTS, NAO_SENSOR_ADR, naoMjcf, naoServoGain, shapeInertia } from "../../src/bodies/nao/mjcf.js";
import { NAO_DRIVEN_JOINTS, NAO_JOINT_DRIVES } from "../../src/bodies/nao/motors.js";

const { mj, m, d, name } = await loadMjcf(naoMjcf());

describe("the NAO MJCF", () => {
  it("has the robot's mass: the bodies sum to Aldebaran's table, link by link", () => {
    const masses = m.body_mass as Float64Array;
    expect(masses.reduce((a, b) => a + b, 0)).toBeCloseTo(NAO_TOTAL_MASS_KG, 9);
    expect(NAO_TOTAL_MASS_KG).toBeCloseTo(5.35943, 5);
    const byName = (n: string) => masses[mj.mj_name2id(m, mj.mjtObj.mjOBJ_BODY.value, n)]!;
    expect(byName("Torso")).toBe(NAO_MASSES.torso.massKg);
    expect(byName("LThigh")).toBe(NAO_MASSES.leftLeg.hipPitch.massKg);
    expect(byName("RHand")).toBe(NAO_MASSES.rightArm.wristYaw.massKg);
    const legs = ["Pelvis", "Hip", "Thigh", "Tibia", "Ankle", "Foot"].map((l) => byName(`L${l}`)).reduce((a, b) => a + b, 0);
    expect(legs).toBeCloseTo(
      Object.values(NAO_MASSES.leftLeg).reduce((a, l) => a + l.massKg, 0),
      9,
    );
  });

  it("runs its hinge joints in LoLA's order (hands excepted; RHipYawPitch after LAnkleRoll), each with its table limits", () => {
    expect(m.nq).toBe(7 + 24);
    expect(m.njnt).toBe(25);
    const joints = Array.from({ length: 24 }, (_, i) => name(mj.mjtObj.mjOBJ_JOINT.value, i + 1));
    expect(joints).toEqual(NAO_MJCF_JOINTS);
    expect(joints.filter((j) => j !== "RHipYawPitch")).toEqual(LOLA_ORDER.filter((j) => j !== "LHand" && j !== "RHand"));
    const range = m.jnt_range as Float64Array;
    joints.forEach((j, i) => {
      const lim = JOINT_LIMITS[j as keyof typeof JOINT_LIMITS];
      expect([range[2 * (i + 1)], range[2 * (i + 1) + 1]]).toEqual([lim.minRad, lim.maxRad]);
    });
  });

  it("has one position servo per LoLA joint but the hands, in LoLA order, limited to the motor's stall torque", () => {
    expect(m.nu).toBe(23);
    const acts = Array.from({ length: 23 }, (_, i) => name(mj.mjtObj.mjOBJ_ACTUATOR.value, i));
    expect(acts).toEqual(NAO_DRIVEN_JOINTS);
    const fr = m.actuator_forcerange as Float64Array;
    const gain = m.actuator_gainprm as Float64Array;
    const bias = m.actuator_biasprm as Float64Array;
    acts.forEach((a, i) => {
      const d0 = NAO_JOINT_DRIVES[a as keyof typeof NAO_JOINT_DRIVES];
      expect(fr[2 * i + 1]).toBeCloseTo(d0.stallTorqueNm, 3);
      expect(fr[2 * i]).toBeCloseTo(-d0.stallTorqueNm, 3);
      expect(gain[10 * i]).toBeCloseTo(naoServoGain(a as keyof typeof NAO_JOINT_DRIVES), 2);
      expect(bias[10 * i + 1]).toBeCloseTo(-gain[10 * i]!, 9);
    });
    // Aldebaran's figures: the knee (ratio 130.85) 7.78 N·m stall, 366.83 °/s no load.
    expect(NAO_JOINT_DRIVES.LKneePitch.stallTorqueNm).toBeCloseTo(7.78, 1);
    expect((NAO_JOINT_DRIVES.LKneePitch.noLoadSpeedRadS * 180) / Math.PI).toBeCloseTo(366.83, 1);
    expect(NAO_JOINT_DRIVES.LHipRoll.stallTorqueNm).toBeCloseTo(11.97, 1);
  });

  it("puts the FSR marker sites at FSR_POSITIONS_M on the soles, and a touch sensor per FSR quarter", () => {
    mj.mj_resetDataKeyframe(m, d, 0);
    mj.mj_forward(m, d);
    const sitePos = m.site_pos as Float64Array;
    const names = ["FrontLeft", "FrontRight", "RearLeft", "RearRight"];
    for (const [p, fsr] of [
      ["L", FSR_POSITIONS_M.left],
      ["R", FSR_POSITIONS_M.right],
    ] as const) {
      names.forEach((n, i) => {
        const id = mj.mj_name2id(m, mj.mjtObj.mjOBJ_SITE.value, `${p}FSR${n}Point`);
        expect([sitePos[3 * id], sitePos[3 * id + 1], sitePos[3 * id + 2]]).toEqual([fsr[i]![0], fsr[i]![1], -0.04519]);
        const s = mj.mj_name2id(m, mj.mjtObj.mjOBJ_SENSOR.value, `${p}FSR${n}`);
        expect(s).toBe((p === "L" ? 0 : 4) + i);
      });
    }
    expect(m.nsensordata).toBe(NAO_SENSOR_ADR.contacts + NAO_SENSOR_ADR.contactStride * NAO_CONTACT_LINKS.length);
    expect(NAO_FOOT_BOX_M.xMax).toBeGreaterThan(FSR_POSITIONS_M.left[0]![0]);
  });

  it("stands from its 'stand' keyframe: feet flat on the floor, FSR quarters carry the weight", () => {
    mj.mj_resetDataKeyframe(m, d, 0);
    for (let i = 0; i < 500; i++) mj.mj_step(m, d);
    const s = d.sensordata as Float64Array;
    let sum = 0;
    for (let i = 0; i < 8; i++) {
      expect(s[i]).toBeGreaterThan(0);
      sum += s[i]!;
    }
    expect(sum / 9.81).toBeCloseTo(NAO_TOTAL_MASS_KG, 1);
    expect((d.qpos as Float64Array)[2]).toBeCloseTo(groundedBasePose(new Float64Array(25))[2], 2);
  });

  it("infers inertias from solid shapes (box, cylinder, sphere formulas)", () => {
    expect(shapeInertia({ kind: "sphere", r: 0.1, at: [0, 0, 0] }, 2)).toEqual([0.008, 0.008, 0.008].map((x) => expect.closeTo(x, 12)));
    expect(shapeInertia({ kind: "box", half: [1, 2, 3], at: [0, 0, 0] }, 3)).toEqual([13, 10, 5]);
    const [ix, iy, iz] = shapeInertia({ kind: "capsule", from: [0, 0, 0], to: [0, 0, -0.1], r: 0.03 }, 1);
    expect(iz).toBeCloseTo(0.5 * 0.03 * 0.03, 12);
    expect(ix).toBeCloseTo((3 * 0.03 * 0.03 + 0.01) / 12, 12);
    expect(iy).toBe(ix);
  });
});
