/**
 * Issue 21: the physics NAO (MuJoCo under the chest board) stands, falls and crouches as a NAO
 * does, reads its sensors in LoLA's units, is deterministic, and steps without allocating.
 * Driven in simulated time (12 ms cycles), so nothing here depends on the machine's load.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { computeFeet } from "../../src/bodies/nao/feet.js";
import { LOLA_INDEX, REST_POSTURE_RAD } from "../../src/bodies/nao/joints.js";
import { NAO_TOTAL_MASS_KG } from "../../src/bodies/nao/masses.js";
import { NAO_FOOT_BOX_M } from "../../src/bodies/nao/mjcf.js";
import { NAO_JOINT_DRIVES } from "../../src/bodies/nao/motors.js";
import { SimNaoBody } from "../../src/sim/nao/body.js";
import { KinematicNaoModel } from "../../src/sim/nao/model.js";
import { MujocoNaoModel } from "../../src/sim/nao/physics/mujoco-nao.js";
import { loadMujoco } from "../../src/sim/physics/mujoco.js";
import { leastHeapAllocated } from "../support/allocated.js";

const CYCLE_US = 12_000;
const STAND_HEIGHT_M = 0.33309;

async function physics(pose: "stand" | "crouch" | "lying" = "stand") {
  const model = await MujocoNaoModel.create(pose);
  const body = new SimNaoBody(3, model);
  const run = (cycles: number, each?: (t: number) => void) => {
    for (let i = 0; i < cycles; i++) {
      each?.(i * 0.012);
      body.stepUs(CYCLE_US);
    }
  };
  return { model, body, run };
}

beforeAll(async () => {
  await loadMujoco();
});

describe("the physics NAO", () => {
  it("holds the zero posture at stiffness 1 for 30 s: upright, at standing height, its weight on the FSRs, the centre of pressure on the soles", async () => {
    const { model, body, run } = await physics("stand");
    body.stiffness.fill(1);
    body.targetRad.fill(0);
    run(2500);
    expect(model.timeS).toBeCloseTo(30, 6);
    expect(model.fallen).toBe(false);
    expect(Math.abs(model.basePositionM[2]! - STAND_HEIGHT_M)).toBeLessThan(0.02);
    const fsrSum = body.fsrKg.reduce((a, b) => a + b, 0);
    expect(Math.abs(fsrSum - NAO_TOTAL_MASS_KG) / NAO_TOTAL_MASS_KG).toBeLessThan(0.1);
    const w = new Float32Array(2);
    const cop = new Float32Array(4);
    computeFeet(body.fsrKg, w, cop);
    for (const foot of [0, 1]) {
      expect(w[foot]).toBeGreaterThan(0.3 * NAO_TOTAL_MASS_KG); // both feet carry the robot
      expect(cop[2 * foot]).toBeGreaterThan(NAO_FOOT_BOX_M.xMin);
      expect(cop[2 * foot]).toBeLessThan(NAO_FOOT_BOX_M.xMax);
      expect(Math.abs(cop[2 * foot + 1]!)).toBeLessThan(NAO_FOOT_BOX_M.halfWidth + 0.0034);
    }
    // LoLA's accelerometer sign: z ≈ −g upright; the inertial unit reads the small forward lean.
    expect(body.accelerometerMps2[2]).toBeCloseTo(-9.81, 0);
    expect(Math.abs(body.anglesRad[1]!)).toBeLessThan(0.05);
    expect(model.contactLinks.filter((_, i) => model.contactForceN[i]! > 0)).toEqual(["LFoot", "RFoot"]);
  });

  it("falls within 3 s when every stiffness goes to 0 (a category-0 stop)", async () => {
    const { model, body, run } = await physics("stand");
    body.stiffness.fill(1);
    run(100);
    expect(model.fallen).toBe(false);
    body.stiffness.fill(0);
    let fellAtS = Number.NaN;
    run(250, (t) => {
      if (model.fallen && Number.isNaN(fellAtS)) fellAtS = t;
    });
    expect(fellAtS).toBeLessThan(3);
    expect(model.basePositionM[2]).toBeLessThan(0.2);
  });

  it("crouches as a category-1 stop does (2 s to the rest posture, then limp) and stays crouched, not fallen, 3 s later", async () => {
    const { model, body, run } = await physics("stand");
    body.stiffness.fill(1);
    run(100);
    const from = Float64Array.from(body.positionRad);
    run(Math.round(2000 / 12), (t) => {
      const u = Math.min(1, t / 1.7);
      const e = u * u * (3 - 2 * u);
      const fade = t >= 1.7 ? Math.min(1, (t - 1.7) / 0.3) : 0;
      for (let i = 0; i < 25; i++) {
        body.targetRad[i] = from[i]! + (REST_POSTURE_RAD[i]! - from[i]!) * e;
        body.stiffness[i] = 1 - fade;
      }
    });
    body.stiffness.fill(0);
    run(250);
    expect(model.fallen).toBe(false);
    expect(model.basePositionM[2]).toBeLessThan(STAND_HEIGHT_M - 0.07);
    expect(model.basePositionM[2]).toBeGreaterThan(0.18);
    expect(body.positionRad[LOLA_INDEX.LKneePitch]).toBeGreaterThan(1.8);
  });

  it("resets to lying (fallen, on its back) and to a crouch that holds limp", async () => {
    const { model, body, run } = await physics("stand");
    model.reset("lying");
    run(50);
    expect(model.fallen).toBe(true);
    expect(model.basePositionM[2]).toBeLessThan(0.1);
    expect(body.accelerometerMps2[0]).toBeCloseTo(-9.81, 0); // on its back: gravity along the torso's −x in LoLA's sign
    model.reset("crouch");
    expect(model.timeS).toBe(0);
    run(250);
    expect(model.fallen).toBe(false);
  });

  it("draws current in proportion to the motors' torque (A per N·m from motors.ts)", async () => {
    const { model, body, run } = await physics("stand");
    body.stiffness.fill(1);
    run(200);
    const k = LOLA_INDEX.LKneePitch;
    expect(Math.abs(model.torqueNm[k]!)).toBeGreaterThan(0.05);
    expect(model.currentA[k]).toBeCloseTo(Math.abs(model.torqueNm[k]!) * NAO_JOINT_DRIVES.LKneePitch.currentAPerNm, 9);
    body.stiffness.fill(0);
    run(5);
    expect(model.torqueNm[k]).toBe(0);
  });

  it("is deterministic: the same commands give bit-identical states", async () => {
    const a = await physics("crouch");
    const b = await physics("crouch");
    for (const p of [a, b]) {
      p.body.stiffness.fill(1);
      p.run(300, (t) => p.body.targetRad.fill(Math.max(0, 1 - t) * 0.3));
    }
    expect(Buffer.from(a.model.positionRad.buffer)).toEqual(Buffer.from(b.model.positionRad.buffer));
    expect(Buffer.from(a.body.fsrKg.buffer)).toEqual(Buffer.from(b.body.fsrKg.buffer));
  });

  it("carries partial steps: 10 ms cycles advance 3 ms steps without drifting", async () => {
    const { model, body } = await physics("stand");
    for (let i = 0; i < 30; i++) body.stepUs(10_000);
    expect(model.timeS).toBeCloseTo(0.3, 9);
  });

  it("steps without allocating (the chest board's cycle)", async () => {
    const { body } = await physics("stand");
    body.stiffness.fill(1);
    // Warm up past the JIT's tier-ups (optimizing mid-measurement allocates once, not per step).
    for (let i = 0; i < 2000; i++) body.stepUs(CYCLE_US);
    expect(
      leastHeapAllocated(() => {
        for (let i = 0; i < 200; i++) body.stepUs(CYCLE_US);
      }, 10),
    ).toBeLessThan(1024);
  });

  it("the kinematic model behind the same seam still cannot fall", () => {
    const body = new SimNaoBody(3, new KinematicNaoModel());
    body.stiffness.fill(0);
    for (let i = 0; i < 500; i++) body.stepUs(CYCLE_US);
    expect(body.model.fallen).toBe(false);
    expect(body.fsrKg.reduce((a, b) => a + b, 0)).toBeCloseTo(NAO_TOTAL_MASS_KG, 0);
  });
});
