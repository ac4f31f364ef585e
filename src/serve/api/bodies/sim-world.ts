/**
 * A physics simulator's world in the state (`sim`, docs/simulation.md): one schema and one answer
 * for every body that has one. The body adapters give the contacts (each its own links).
 *
 * Prepare side (allocates).
 */
import type { SimResetResult } from "../../../runtime/robot.js";
import Type from "typebox";
import { SIM_WORLD } from "../../../bodies/sim-world.js";
import type { Awaitable } from "../../../runtime/authority.js";
import type { CommandRoute } from "../adapter.js";
import { numbers } from "../schemas.js";

/** Only with `serve --sim physics`. Single-typed properties (Lichtblick). */
export const SimWorldSchema = Type.Object(
  {
    time_s: Type.Number({ description: "Simulated time since power-on or the last reset, s" }),
    base_position_m: numbers(3, "The base's origin in the world, m (the NAO's torso, the TNY-360's body centre: x forward at start; the P7's base: bolted at 0; z up, the floor at z = 0)"),
    base_orientation_xyzw: numbers(4, "The base's orientation in the world, quaternion x, y, z, w"),
    fallen: Type.Boolean({
      description:
        "NAO: torso more than 50° from upright, or the torso or head on the floor; TNY-360: body more than 50° from upright (resting on its belly is not a fall); an arm bolted down never falls",
    }),
    real_time_factor: Type.Number({
      description: "Simulated seconds per real second over the last second: about 1 in real time, the machine's speed under --lockstep, 0 while simulated time stands still",
    }),
    contacts: Type.Array(
      Type.Object({
        link: Type.String({ description: "The link touching the floor (NAO: LFoot, RTibia, Head, …; TNY-360: Body, FrontLeftPaw, …; P7: link1 … link7, the floor or its base)" }),
        force_n: Type.Number({ description: "Net contact force, N" }),
      }),
      { description: "Links touching the floor now" },
    ),
  },
  { description: "The physics simulator's world; absent on a robot and on the kinematic simulator" },
);

export interface SimWorldAnswer {
  time_s: number;
  base_position_m: number[];
  base_orientation_xyzw: number[];
  fallen: boolean;
  real_time_factor: number;
  contacts: Array<{ link: string; force_n: number }>;
}

/** The `sim` field from a state's `simWorld` (SIM_WORLD's slots), or undefined without a physics world. */
export function simWorldAnswer(w: ArrayLike<number>, contacts: Array<{ link: string; force_n: number }> = []): SimWorldAnswer | undefined {
  if (w[SIM_WORLD.present] !== 1) return undefined;
  return {
    time_s: w[SIM_WORLD.timeS]!,
    base_position_m: [w[SIM_WORLD.x]!, w[SIM_WORLD.y]!, w[SIM_WORLD.z]!],
    base_orientation_xyzw: [w[SIM_WORLD.qx]!, w[SIM_WORLD.qy]!, w[SIM_WORLD.qz]!, w[SIM_WORLD.qw]!],
    fallen: w[SIM_WORLD.fallen] === 1,
    real_time_factor: w[SIM_WORLD.realTimeFactor]!,
    contacts,
  };
}

/**
 * `POST /v1/sim/reset` for a body: `{ pose }` from the body's table of poses (`posesDoc` says what
 * each is; `after` what holds the pose once there), answered `{ pose, time_s }`. The rules are the
 * body's `reset` (the lease and e-stop rules of a command; 404 BL_ERR_CMD_UNSUPPORTED on a robot
 * or a kinematic simulator).
 */
export function simResetRoute<P extends string>(poses: readonly P[], posesDoc: string, after: string, reset: (leaseId: string, pose: P) => Awaitable<SimResetResult>): CommandRoute<{ pose: P }> {
  return {
    path: "/v1/sim/reset",
    summary: `Put the physics simulator's world into a pose: ${poses.join(", ")} (simulator only)`,
    description:
      `The robot at rest in the pose, the world's time back to 0 (sim.time_s and health's sim.time_s); ${after} ` +
      "Needs the lease, refused while an emergency stop is latched, and refused (404 BL_ERR_CMD_UNSUPPORTED) on a real body and on the kinematic simulator (serve --sim physics). docs/simulation.md.",
    request: Type.Object(
      {
        pose: Type.Union(
          poses.map((p) => Type.Literal(p)),
          { description: posesDoc },
        ),
      },
      { additionalProperties: false },
    ),
    response: Type.Object({ pose: Type.String(), time_s: Type.Number({ description: "Simulated time after the reset, s (0)" }) }),
    handle: async (leaseId, body) => {
      const r = await reset(leaseId, body.pose);
      return r.ok ? { ok: true, result: { pose: body.pose, time_s: r.timeS } } : r;
    },
  };
}
