/**
 * The fleet page's gateway (only when the runtime joined a fleet: serve --fleet). The browser talks
 * to its own robot API, never to NATS: the broker's credentials stay in the runtime, the robot
 * API's Host/Origin/token checks cover these routes as every other, and nats-server needs no
 * WebSocket listener opened to browsers. The runtime answers from its own NATS connection.
 *
 *   GET  /v1/fleet         every robot present: presence, last health (link, battery, cycle, control, e-stop)
 *   POST /v1/fleet/estop   e-stop every robot (or `names`): each robot's latch, each one's answer
 *   POST /v1/fleet/reset   reset every robot's e-stop (or `names`), with a reason
 */
import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import Type from "typebox";
import { BodylinkError } from "../../../errors.js";
import { sendError } from "../answers.js";
import { bodyLimitFor } from "../body-limit.js";
import { ErrorSchema } from "../schemas.js";
import type { ApiContext } from "./context.js";

const Names = Type.Optional(
  Type.Array(Type.String({ minLength: 1, maxLength: 64, pattern: "^[A-Za-z0-9][A-Za-z0-9_-]*$" }), { minItems: 1, maxItems: 1000, description: "Only these robots (default: every robot)" }),
);
const FleetEstopBody = Type.Object(
  {
    names: Names,
    category: Type.Optional(Type.Union([Type.Literal(0), Type.Literal(1)], { description: "0 cuts at once, 1 stops in a safe posture first (each body's default when absent)" })),
    reason: Type.Optional(Type.String({ maxLength: 200 })),
  },
  { additionalProperties: false },
);
const FleetResetBody = Type.Object({ names: Names, reason: Type.String({ minLength: 1, maxLength: 200 }) }, { additionalProperties: false });
/** The scatter's answer (FleetScatterAnswer in ../fleet-gateway.ts is its type, checked equal). */
export const ScatterSchema = Type.Object({
  replies: Type.Array(Type.Object({ name: Type.String(), ok: Type.Boolean(), estop: Type.Record(Type.String(), Type.Unknown()), error: Type.Optional(Type.Record(Type.String(), Type.Unknown())) })),
  missing: Type.Array(Type.String(), { description: "Robots present in the fleet that did not answer in time (an answer that does not verify against the robot's key is no answer)" }),
  unverified: Type.Array(Type.String(), { description: "Names claimed by answers that did not verify against the robots' keys (forged, or unknown robots); ignored" }),
  elapsed_ms: Type.Number({ description: "From the request to the last answer" }),
});

export const fleetRoutes: FastifyPluginAsyncTypebox<ApiContext> = async (r, { fleet }) => {
  if (!fleet) return;
  const notJoined = () => new BodylinkError("BL_ERR_FLEET_UNREACHABLE", fleet.status().url, `this runtime is ${fleet.status().connection}`);
  r.get(
    "/v1/fleet",
    {
      schema: {
        summary: "Every robot in the fleet: presence and its last health message",
        tags: ["fleet"],
        response: {
          200: Type.Object({ self: Type.String(), connection: Type.String(), robots: Type.Array(Type.Record(Type.String(), Type.Unknown())) }),
          503: ErrorSchema,
        },
      },
    },
    async (_req, reply) => {
      const s = fleet.status();
      if (s.connection !== "connected") return sendError(reply, notJoined());
      return { self: s.name, connection: s.connection, robots: (await fleet.robots()) as unknown as Record<string, unknown>[] };
    },
  );
  r.post(
    "/v1/fleet/estop",
    {
      bodyLimit: bodyLimitFor(FleetEstopBody, "POST /v1/fleet/estop"),
      schema: {
        summary: "Emergency stop every robot in the fleet (or the named ones); each latches until reset",
        tags: ["fleet"],
        body: FleetEstopBody,
        response: { 200: ScatterSchema, 400: ErrorSchema, 503: ErrorSchema },
      },
    },
    async (req, reply) => {
      if (fleet.status().connection !== "connected") return sendError(reply, notJoined());
      const b = req.body;
      return fleet.estop(b.names ?? null, { ...(b.category !== undefined ? { category: b.category } : {}), reason: b.reason ?? "fleet emergency stop (dashboard)" });
    },
  );
  r.post(
    "/v1/fleet/reset",
    {
      bodyLimit: bodyLimitFor(FleetResetBody, "POST /v1/fleet/reset"),
      schema: {
        summary: "Reset the e-stop of every robot (or the named ones); nothing moves until a client takes control",
        tags: ["fleet"],
        body: FleetResetBody,
        response: { 200: ScatterSchema, 400: ErrorSchema, 503: ErrorSchema },
      },
    },
    async (req, reply) => {
      if (fleet.status().connection !== "connected") return sendError(reply, notJoined());
      return fleet.reset(req.body.names ?? null, { reason: req.body.reason });
    },
  );
};
