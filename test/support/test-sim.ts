/**
 * Which simulated body the contract suites run on: the kinematic models, or MuJoCo when the
 * "physics" project of vitest.config.ts runs them again (BODYLINK_TEST_SIM=physics). The contracts
 * (LoLA's bytes and arbitration, the robot API, the P7 runtime's rules) must hold on both bodies a
 * user can choose.
 */
import type { SimKind } from "../../src/bodies/sim-world.js";
import { physicsNaoModel } from "../../src/drivers/nao/chestboard.js";
import { physicsP7Model } from "../../src/drivers/p7/sim.js";
import type { NaoBodyModel } from "../../src/sim/nao/model.js";
import type { P7BodyModel } from "../../src/sim/p7/model.js";

export const TEST_SIM: SimKind = process.env.BODYLINK_TEST_SIM === "physics" ? "physics" : "kinematic";

/** Spread into P7Robot.create's options: the arm's mechanics of this run. */
export async function p7TestSimModel(): Promise<{ simModel?: P7BodyModel }> {
  return TEST_SIM === "physics" ? { simModel: await physicsP7Model() } : {};
}

/** Spread into NaoRobot.create's options: the body under the simulated chest board in this run. */
export async function naoTestSimModel(): Promise<{ simModel?: NaoBodyModel }> {
  return TEST_SIM === "physics" ? { simModel: await physicsNaoModel() } : {};
}
