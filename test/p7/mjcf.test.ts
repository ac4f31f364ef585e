/**
 * Issue 21 item 2 for the AIRBOT P7: its MJCF, generated from our tables, loaded by MuJoCo itself:
 * link masses sum to the table's 7.5 kg, the joints and servos run in the SDK's order (J1..J7) with
 * the raw limits and effort limits of the tables. The documented gravity check (docs/p7.md): in a
 * bent pose at rest MuJoCo's bias force (the torque that holds the arm against gravity) equals the
 * simulator's gravity model, and the simulated P7 holding that pose reports efforts of the same
 * signs and sizes (within its sensor noise); MuJoCo's own position servos hold the pose with those
 * torques (the arm's stop, holding against gravity, made physical). The links collide with the
 * floor, the base and each other except where they always overlap at a joint: nothing touches at
 * home or in the bent pose (so the gravity checks stay exact), a pose through the floor touches it.
 */
import { describe, expect, it } from "vitest";
import { loadMjcf } from "../support/mjcf-model.js";
import { GRAVITY_M_S2, P7_EFFORT_LIMIT_NM, P7_JOINT_NAMES, P7_LINK_MASS_KG, P7_MAX_RAD, P7_MIN_RAD, P7_RAW_LIMIT_MARGIN_RAD } from "../../src/bodies/p7/joints.js";
import { P7Kinematics } from "../../src/bodies/p7/kinematics.js";
import { P7_COLLISION_EXCLUDES, P7_SENSOR_ADR, p7Mjcf } from "../../src/bodies/p7/mjcf.js";
import { P7Sim } from "../../src/sim/p7/arm-sim.js";

const { mj, m, d, name } = await loadMjcf(p7Mjcf());
/** A bent pose: shoulder forward, elbow bent, wrist turned (inside every command limit). */
const BENT = [0.4, -0.9, 0.3, -1.2, 0.5, 0.6, -0.4];

describe("the P7 MJCF", () => {
  it("has the table's masses: the links sum to 7.5 kg, link by link", () => {
    const masses = Array.from(m.body_mass as Float64Array);
    expect(masses[0]).toBe(0); // the world
    expect(masses.slice(1)).toEqual([...P7_LINK_MASS_KG]);
    expect(masses.reduce((a, b) => a + b, 0)).toBeCloseTo(7.5, 12);
  });

  it("runs its joints and servos in the SDK's order with the raw limits and effort limits", () => {
    expect(m.nq).toBe(7);
    expect(Array.from({ length: 7 }, (_, i) => name(mj.mjtObj.mjOBJ_JOINT.value, i))).toEqual([...P7_JOINT_NAMES]);
    expect(Array.from({ length: 7 }, (_, i) => name(mj.mjtObj.mjOBJ_ACTUATOR.value, i))).toEqual([...P7_JOINT_NAMES]);
    const range = m.jnt_range as Float64Array;
    const fr = m.actuator_forcerange as Float64Array;
    const ctrl = m.actuator_ctrlrange as Float64Array;
    for (let i = 0; i < 7; i++) {
      expect(range[2 * i]).toBeCloseTo(P7_MIN_RAD[i]! - P7_RAW_LIMIT_MARGIN_RAD, 9);
      expect(range[2 * i + 1]).toBeCloseTo(P7_MAX_RAD[i]! + P7_RAW_LIMIT_MARGIN_RAD, 9);
      expect([ctrl[2 * i], ctrl[2 * i + 1]]).toEqual([P7_MIN_RAD[i], P7_MAX_RAD[i]]);
      expect([fr[2 * i], fr[2 * i + 1]]).toEqual([-P7_EFFORT_LIMIT_NM[i]!, P7_EFFORT_LIMIT_NM[i]]);
    }
    const g = m.opt.gravity as Float64Array;
    expect(Array.from(g)).toEqual([0, 0, -GRAVITY_M_S2]);
  });

  it("upright at rest needs no torque; bent, MuJoCo's gravity torques equal the simulator's model", () => {
    const q = d.qpos as Float64Array;
    const hold = new Float64Array(7);
    const k = new P7Kinematics();
    q.fill(0);
    mj.mj_forward(m, d);
    for (const t of d.qfrc_bias as Float64Array) expect(Math.abs(t)).toBeLessThan(1e-12);
    q.set(BENT);
    (d.qvel as Float64Array).fill(0);
    mj.mj_forward(m, d);
    const bias = Array.from(d.qfrc_bias as Float64Array);
    k.update(BENT);
    k.gravityTorquesNm(hold);
    for (let i = 0; i < 7; i++) expect(bias[i]).toBeCloseTo(hold[i]!, 9);
    // Not a trivial pose: the shoulder and elbow carry several N·m.
    expect(Math.abs(bias[1]!)).toBeGreaterThan(5);
    expect(Math.abs(bias[3]!)).toBeGreaterThan(1);
  });

  it("the simulated P7 holding the bent pose reports efforts whose signs and sizes match gravity (MuJoCo's)", () => {
    const sim = new P7Sim({ seed: 3, initialAnglesRad: BENT });
    for (let i = 0; i < 250; i++) sim.step(); // 1 s at rest
    const f = sim.read()!;
    (d.qpos as Float64Array).set(BENT);
    (d.qvel as Float64Array).fill(0);
    mj.mj_forward(m, d);
    const bias = d.qfrc_bias as Float64Array;
    for (let i = 0; i < 7; i++) {
      expect(Math.abs(f.angles[i]! - BENT[i]!)).toBeLessThan(1e-6); // it held
      expect(Math.abs(f.efforts[i]! - bias[i]!)).toBeLessThan(0.1); // sensor noise 0.02 N·m
      if (Math.abs(bias[i]!) > 0.5) expect(Math.sign(f.efforts[i]!)).toBe(Math.sign(bias[i]!));
    }
  });

  it("MuJoCo's servos hold the bent pose against gravity: the joints stay within 0.01 rad, the efforts are the gravity torques", () => {
    mj.mj_resetData(m, d);
    (d.qpos as Float64Array).set(BENT);
    (d.ctrl as Float64Array).set(BENT);
    for (let i = 0; i < 2000; i++) mj.mj_step(m, d); // 2 s
    const s = d.sensordata as Float64Array;
    const k = new P7Kinematics();
    const hold = new Float64Array(7);
    k.update(Array.from(s.subarray(P7_SENSOR_ADR.position, P7_SENSOR_ADR.position + 7)));
    k.gravityTorquesNm(hold);
    for (let i = 0; i < 7; i++) {
      expect(Math.abs(s[P7_SENSOR_ADR.position + i]! - BENT[i]!)).toBeLessThan(0.01);
      expect(Math.abs(s[P7_SENSOR_ADR.velocity + i]!)).toBeLessThan(1e-3);
      expect(s[P7_SENSOR_ADR.effort + i]!).toBeCloseTo(hold[i]!, 3);
    }
    // The IMU at rest reads +g along the world's up, whatever its orientation: |a| = g.
    const a = s.subarray(P7_SENSOR_ADR.accelerometer, P7_SENSOR_ADR.accelerometer + 3);
    expect(Math.hypot(a[0]!, a[1]!, a[2]!)).toBeCloseTo(GRAVITY_M_S2, 3);
  });
  it("collides with the floor, its base and itself, not where links always overlap: nothing touches at home or bent; folded down it touches the floor and the base", () => {
    const geom = (i: number) => name(mj.mjtObj.mjOBJ_GEOM.value, i);
    const touching = (pose: readonly number[]): string[] => {
      mj.mj_resetData(m, d);
      (d.qpos as Float64Array).set(pose);
      mj.mj_forward(m, d);
      return Array.from({ length: d.ncon }, (_, i) => {
        const c = d.contact.get(i)!;
        return [geom(c.geom1), geom(c.geom2)].sort().join("-");
      });
    };
    const type = m.geom_contype as Int32Array;
    const affinity = m.geom_conaffinity as Int32Array;
    for (let g = 0; g < m.ngeom; g++) {
      const robot = geom(g).startsWith("link");
      expect([type[g], affinity[g]], geom(g)).toEqual(robot ? [2, 3] : [1, 2]);
    }
    expect(P7_COLLISION_EXCLUDES).toEqual([
      ["world", "link1"],
      ["link1", "link3"],
      ["link2", "link4"],
      ["link3", "link5"],
      ["link4", "link6"],
      ["link5", "link7"],
    ]);
    expect(m.nexclude).toBe(6);
    expect(touching([0, 0, 0, 0, 0, 0, 0])).toEqual([]);
    expect(touching(BENT)).toEqual([]);
    // Without the excludes, home would be in contact with itself at every short housing.
    const unfiltered = mj.MjModel.from_xml_string(p7Mjcf().replace(/ *<exclude [^>]*>\n/g, ""));
    const ud = new mj.MjData(unfiltered);
    mj.mj_forward(unfiltered, ud);
    expect(ud.ncon).toBeGreaterThanOrEqual(5);
    ud.delete();
    unfiltered.delete();
    // The shoulder folded back 2.5 rad puts the arm through the floor and link 3 into its base.
    const down = new Set(touching([0, -2.5, 0, 0, 0, 0, 0]));
    expect(down).toContain("floor-link7Geom");
    expect(down).toContain("base-link3Geom");
  });
});
