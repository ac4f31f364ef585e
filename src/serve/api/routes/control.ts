/**
 * Control leases: GET /v1/control (who holds it, never the lease id), POST (acquire), PUT (renew),
 * DELETE (release). Renew and release check the lease header before the body is read (guard.ts).
 */
import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import Type from "typebox";
import { BodylinkError } from "../../../errors.js";
import { DEFAULT_LEASE_MS } from "../../../runtime/authority.js";
import { describeEstop } from "../../../runtime/estop.js";
import { heldError, holderAnswer, leaseAnswer, sendError } from "../answers.js";
import { bodyLimitFor } from "../body-limit.js";
import { checkedLease, requireLease, unknownLease } from "../guard.js";
import { AcquireBodySchema, ControlStatusSchema, ErrorSchema, LeaseSchema, RenewBodySchema } from "../schemas.js";
import type { ApiContext } from "./context.js";

export const controlRoutes: FastifyPluginAsyncTypebox<ApiContext> = async (r, { authority }) => {
  const leaseHook = requireLease(authority);

  r.get("/v1/control", { schema: { summary: "Who holds control and until when (never the lease id)", tags: ["control"], response: { 200: ControlStatusSchema } } }, async () => {
    const h = authority.holder();
    return { held: h !== null, holder: h ? holderAnswer(h) : null };
  });

  r.post(
    "/v1/control",
    {
      bodyLimit: bodyLimitFor(AcquireBodySchema, "POST /v1/control"),
      schema: {
        summary: "Acquire control: a lease that expires unless renewed",
        tags: ["control"],
        body: AcquireBodySchema,
        response: { 201: LeaseSchema, 400: ErrorSchema, 409: ErrorSchema },
      },
    },
    async (req, reply) => {
      const leaseMs = req.body.lease_ms ?? DEFAULT_LEASE_MS;
      const got = await authority.acquire(req.body.owner, "api", leaseMs);
      if (!got.ok) return sendError(reply, got.latched ? new BodylinkError("BL_ERR_ESTOP_LATCHED", describeEstop(got.estop)) : heldError(got.holder));
      const info = got.lease.info!;
      return reply.code(201).send(leaseAnswer(info, leaseMs));
    },
  );

  r.put(
    "/v1/control",
    {
      bodyLimit: bodyLimitFor(RenewBodySchema, "PUT /v1/control"),
      onRequest: leaseHook,
      schema: {
        summary: "Renew your lease for lease_ms from now",
        tags: ["control"],
        body: RenewBodySchema,
        security: [{ lease: [] }],
        response: { 200: LeaseSchema, 400: ErrorSchema, 403: ErrorSchema },
      },
    },
    async (req, reply) => {
      const id = checkedLease(req);
      const leaseMs = req.body.lease_ms ?? DEFAULT_LEASE_MS;
      if (!(await authority.renew(id, leaseMs))) return sendError(reply, unknownLease(authority, id));
      return leaseAnswer(authority.holder()!, leaseMs);
    },
  );

  r.delete(
    "/v1/control",
    {
      bodyLimit: bodyLimitFor(undefined),
      onRequest: leaseHook,
      schema: {
        summary: "Release your lease (the body ramps stiffness down when nobody holds control)",
        tags: ["control"],
        security: [{ lease: [] }],
        response: { 200: Type.Object({ released: Type.Literal(true) }), 403: ErrorSchema },
      },
    },
    async (req, reply) => {
      const id = checkedLease(req);
      if (!(await authority.release(id))) return sendError(reply, unknownLease(authority, id));
      return { released: true as const };
    },
  );
};
