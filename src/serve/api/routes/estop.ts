/** POST /v1/estop: the emergency stop. No lease needed; the body goes to its safe stop and control is revoked. */
import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import Type from "typebox";
import { bodyLimitFor } from "../body-limit.js";
import { ErrorSchema, EstopBodySchema } from "../schemas.js";
import type { ApiContext } from "./context.js";

export const estopRoutes: FastifyPluginAsyncTypebox<ApiContext> = async (r, { adapter }) => {
  r.post(
    "/v1/estop",
    {
      bodyLimit: bodyLimitFor(EstopBodySchema, "POST /v1/estop"),
      schema: {
        summary: "Emergency stop: no lease needed; the body goes to its safe stop and control is revoked",
        tags: ["control"],
        body: EstopBodySchema,
        response: { 200: Type.Object({ stopped: Type.Literal(true), reason: Type.String() }), 400: ErrorSchema },
      },
    },
    async (req) => {
      const reason = req.body.reason ?? "emergency stop (robot API)";
      adapter.emergencyStop(reason);
      return { stopped: true as const, reason };
    },
  );
};
