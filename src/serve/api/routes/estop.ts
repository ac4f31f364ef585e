/**
 * The emergency-stop routes (docs/api.md, "Emergency stop"): one latch per runtime, shared with
 * every other way in (LoLA, TNY-360 API, CLI, fleet).
 *
 *   GET  /v1/estop         the latch: { latched, reason, source, since_ms, category, phase, default_category }
 *   POST /v1/estop         stop (no lease): { category?, reason?, source? }; latches until reset
 *   POST /v1/estop/reset   release the latch: { reason, source? }; nothing moves until a client
 *                          takes a lease and commands
 *
 * Stopping needs no lease by design (anyone who can reach the API may stop the robot); the
 * server's Host/Origin/token checks decide who can reach it.
 */
import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { estopAnswer } from "../answers.js";
import { bodyLimitFor } from "../body-limit.js";
import { ErrorSchema, EstopAnswerSchema, EstopBodySchema, EstopResetAnswerSchema, EstopResetBodySchema, EstopStateSchema } from "../schemas.js";
import type { ApiContext } from "./context.js";

/** A client-named source, kept to letters, digits, - and _ (it goes into logs and the state). */
const sourceOf = (s: string | undefined): string => (s ?? "api").replace(/[^A-Za-z0-9_-]/g, "_");

export const estopRoutes: FastifyPluginAsyncTypebox<ApiContext> = async (r, { robot }) => {
  r.get("/v1/estop", { schema: { summary: "The emergency-stop latch and this body's default stop category", tags: ["control"], response: { 200: EstopStateSchema } } }, async () => ({
    ...estopAnswer(robot.estopState()),
    default_category: robot.defaultStopCategory,
  }));

  r.post(
    "/v1/estop",
    {
      bodyLimit: bodyLimitFor(EstopBodySchema, "POST /v1/estop"),
      schema: {
        summary: "Emergency stop: no lease needed; the body goes to its safe state, every lease is revoked, and it stays latched until POST /v1/estop/reset",
        tags: ["control"],
        body: EstopBodySchema,
        response: { 200: EstopAnswerSchema, 400: ErrorSchema },
      },
    },
    async (req) => {
      const b = req.body;
      const e = await robot.estop({
        source: sourceOf(b.source),
        reason: b.reason ?? "emergency stop (robot API)",
        ...(b.category === undefined ? {} : { category: b.category }),
      });
      req.log.warn({ event: "estop", source: e.source, category: e.category, reason: e.reason }, "emergency stop latched");
      return { stopped: true as const, ...estopAnswer(e), reason: e.reason ?? "" };
    },
  );

  r.post(
    "/v1/estop/reset",
    {
      bodyLimit: bodyLimitFor(EstopResetBodySchema, "POST /v1/estop/reset"),
      schema: {
        summary: "Release the emergency-stop latch (a reason is required); nothing moves until a client takes a lease and commands",
        tags: ["control"],
        body: EstopResetBodySchema,
        response: { 200: EstopResetAnswerSchema, 400: ErrorSchema },
      },
    },
    async (req) => {
      const wasLatched = robot.estopState().latched;
      const source = sourceOf(req.body.source);
      const e = await robot.resetEstop({ source, reason: req.body.reason });
      if (wasLatched) req.log.warn({ event: "estop_reset", source, reason: req.body.reason }, "emergency stop reset");
      return { ...estopAnswer(e), was_latched: wasLatched };
    },
  );
};
