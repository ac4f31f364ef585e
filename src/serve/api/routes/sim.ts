/**
 * POST /v1/sim/step: lockstep time for robot API clients (`serve --lockstep`, every body). Simulated
 * time stands still until the lease holder asks for cycles; the answer comes once they have run, so
 * a script (a TNY-360 SDK client, a learned policy over the API) reads the state of exactly the
 * cycle it stepped to. Same rules as a command: the lease (renewed for every cycle stepped, so a
 * long step never outlives it), refused while an emergency stop is latched, and an e-stop or a lost
 * lease during a step ends it at the next cycle. Refused (404 BL_ERR_CMD_UNSUPPORTED) in real time.
 *
 * Prepare side only.
 */
import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import Type from "typebox";
import { BodylinkError } from "../../../errors.js";
import { describeEstop } from "../../../runtime/estop.js";
import { sendError } from "../answers.js";
import { bodyLimitFor } from "../body-limit.js";
import { checkedLease, requireLease, unknownLease } from "../guard.js";
import { CommandAnswerSchema, ErrorSchema } from "../schemas.js";
import type { ApiContext } from "./context.js";

/** Most cycles one step request may ask for (at 12 ms, 2 minutes of simulated time). */
export const MAX_STEP_CYCLES = 10_000;

const SimStepSchema = Type.Object(
  { cycles: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_STEP_CYCLES, default: 1, description: "Cycles to run (the body's period each); defaults to 1" })) },
  { additionalProperties: false },
);
const SimStepResult = Type.Object({
  cycles: Type.Integer({ description: "Cycles run" }),
  time_ms: Type.Number({ description: "The runtime clock after them, ms (the state's timestamp_ms)" }),
});

export const simRoutes: FastifyPluginAsyncTypebox<ApiContext> = async (r, { robot, authority, lockstep }) => {
  r.post(
    "/v1/sim/step",
    {
      bodyLimit: bodyLimitFor(SimStepSchema, "POST /v1/sim/step"),
      onRequest: requireLease(authority),
      schema: {
        summary: "Lockstep: run simulated time this many cycles, answer when they have run (serve --lockstep)",
        description:
          "Needs the lease (renewed every cycle of the step), refused while an emergency stop is latched; an e-stop during the step ends it. " +
          "Refused (404 BL_ERR_CMD_UNSUPPORTED) unless the runtime runs with --lockstep. docs/simulation.md.",
        tags: ["commands"],
        body: SimStepSchema,
        security: [{ lease: [] }],
        response: { 200: CommandAnswerSchema(SimStepResult), ...Object.fromEntries([400, 403, 404, 409, 413].map((c) => [c, ErrorSchema])) },
      },
    },
    async (req, reply) => {
      if (!lockstep) return sendError(reply, new BodylinkError("BL_ERR_CMD_UNSUPPORTED", `${robot.kind} in real time`, "lockstep clock to step (serve --lockstep)"));
      const leaseId = checkedLease(req);
      const cycles = req.body.cycles ?? 1;
      let ran = 0;
      let timeMs = lockstep.nowMs();
      while (ran < cycles) {
        if (authority.latched) return sendError(reply, new BodylinkError("BL_ERR_ESTOP_LATCHED", describeEstop(authority.estop)));
        if (!(await authority.renew(leaseId))) return sendError(reply, unknownLease(authority, leaseId));
        timeMs = await lockstep.step(1);
        ran++;
      }
      return { ok: true as const, result: { cycles: ran, time_ms: timeMs } };
    },
  );
};
