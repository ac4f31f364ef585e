/**
 * Checks that run before a request's body is read (docs/security.md): nothing a client sends is
 * parsed until the request has passed them, so a large body, or one sent without a lease, costs
 * the main thread (which the body's cycle shares) almost nothing.
 *
 * - `refuseOversized` (onRequest, every route): a Content-Length above the route's body limit
 *   (`body-limit.ts`, derived from its schema) → 413 at once. A chunked body is counted as it
 *   arrives by fastify's parser against the same limit and refused at the first chunk over it.
 * - `requireLease` (onRequest, routes that need a lease): no lease header or a lease that is not
 *   held → 403 before the body is read. The handler still passes the id to the body, which checks
 *   it again (the lease may lapse in between).
 * - Either refusal, and fastify's own 413, closes the connection (`Connection: close`): a client
 *   that keeps sending after the answer is cut, so a 100 MB upload is not read to its end.
 *
 * Prepare side only.
 */
import type { FastifyReply, FastifyRequest } from "fastify";
import { BodylinkError } from "../../errors.js";
import type { ControlAuthority } from "../../runtime/authority.js";
import { describeEstop } from "../../runtime/estop.js";
import { holderAnswer, sendError } from "./answers.js";
import { LEASE_HEADER } from "./schemas.js";

declare module "fastify" {
  interface FastifyRequest {
    /** The lease id `requireLease` checked (set only on routes that need a lease). */
    bodylinkLeaseId: string | null;
  }
}

/** True while the request still has body bytes that nobody has read. */
function bodyPending(req: FastifyRequest): boolean {
  if (req.raw.complete) return false;
  const len = req.headers["content-length"];
  return req.headers["transfer-encoding"] !== undefined || (len !== undefined && len !== "0");
}

/**
 * Answer `e`; if the client is still sending a body, with `Connection: close`: Node then ends the
 * socket after the answer and stops reading it, so the rest of the body is never taken in
 * (test/api/body-limit.test.ts sends 100 MB and checks that the socket is closed long before).
 */
export function refuseAndCut(req: FastifyRequest, reply: FastifyReply, e: BodylinkError): FastifyReply {
  if (bodyPending(req)) reply.header("connection", "close");
  return sendError(reply, e);
}

/** onRequest: refuse a declared body larger than the route allows, before reading it. */
export async function refuseOversized(req: FastifyRequest, reply: FastifyReply): Promise<void> {
  const declared = req.headers["content-length"];
  if (declared === undefined) return;
  const limit = req.routeOptions.bodyLimit ?? 0;
  const n = Number(declared);
  if (Number.isFinite(n) && n > limit) await refuseAndCut(req, reply, new BodylinkError("BL_ERR_API_BODY_TOO_LARGE", String(limit)));
}

/** onRequest hook factory: the lease in the header must be held, else 403 before the body is read. */
export function requireLease(authority: ControlAuthority) {
  return async (req: FastifyRequest, reply: FastifyReply): Promise<void> => {
    const raw = req.headers[LEASE_HEADER];
    const id = Array.isArray(raw) ? raw[0] : raw;
    if (authority.latched) {
      await refuseAndCut(req, reply, new BodylinkError("BL_ERR_ESTOP_LATCHED", describeEstop(authority.estop)));
      return;
    }
    if (!id) {
      await refuseAndCut(req, reply, new BodylinkError("BL_ERR_AUTH_REQUIRED"));
      return;
    }
    if (!authority.isHeld(id)) {
      await refuseAndCut(req, reply, unknownLease(authority, id));
      return;
    }
    req.bodylinkLeaseId = id;
  };
}

export function unknownLease(authority: ControlAuthority, id: string): BodylinkError {
  const e = new BodylinkError("BL_ERR_AUTH_UNKNOWN_LEASE", id.length > 12 ? `${id.slice(0, 8)}…` : id);
  const h = authority.holder();
  return h ? Object.assign(e, { holder: holderAnswer(h) }) : e;
}

/** The id `requireLease` checked (a bug if the route has no such hook). */
export function checkedLease(req: FastifyRequest): string {
  const id = req.bodylinkLeaseId;
  if (id === null) throw new Error(`route ${req.routeOptions.url} reads a lease but has no requireLease hook`);
  return id;
}
