/**
 * The NAO body the contract suites run on: the kinematic puppet, or the MuJoCo NAO when the
 * "physics" project of vitest.config.ts runs them again (BODYLINK_TEST_SIM=physics). The contracts
 * (LoLA's bytes and arbitration, the robot API) must hold on both bodies a user can choose.
 */
import { physicsNaoModel } from "../../src/drivers/nao/chestboard.js";
import type { NaoBodyModel, NaoSimKind } from "../../src/sim/nao/model.js";
import { TEST_SIM } from "./test-sim.js";

export const NAO_TEST_SIM: NaoSimKind = TEST_SIM;

/** Spread into NaoRobot.create's options: the body model of this run. */
export async function naoTestSimModel(): Promise<{ simModel?: NaoBodyModel }> {
  return NAO_TEST_SIM === "physics" ? { simModel: await physicsNaoModel() } : {};
}
