/**
 * The robot API's answer shapes and its one error path: every route builds its JSON answers and
 * error replies here, so the shapes stay the same across the route plugins (`routes/`).
 *
 * Prepare side only (allocates).
 */
import type { FastifyError, FastifyReply, FastifyRequest } from "fastify";
import { BodylinkError, type ErrorCode } from "../../errors.js";
import type { LeaseInfo, LeaseSource } from "../../runtime/authority.js";
import type { EstopState } from "../../runtime/estop.js";
import type { RobotHealth } from "../../runtime/robot.js";
import type { StateStream } from "./stream.js";

export function holderAnswer(h: LeaseInfo) {
  return { owner: h.owner, source: h.source, expires_at_epoch_ms: h.expiresAtEpochMs, expires_at: new Date(h.expiresAtEpochMs).toISOString() };
}

export function leaseAnswer(info: LeaseInfo, leaseMs: number) {
  return {
    lease_id: info.id,
    owner: info.owner,
    source: "api" as const,
    lease_ms: leaseMs,
    expires_at_epoch_ms: info.expiresAtEpochMs,
    expires_at: new Date(info.expiresAtEpochMs).toISOString(),
  };
}

export function heldError(h: LeaseInfo): BodylinkError {
  const e = new BodylinkError("BL_ERR_AUTH_HELD", `${h.owner} (${h.source})`, new Date(h.expiresAtEpochMs).toISOString());
  return Object.assign(e, { holder: holderAnswer(h) });
}

/** The emergency-stop latch in the API's snake_case. */
export function estopAnswer(e: EstopState) {
  return { latched: e.latched, reason: e.reason, source: e.source, since_ms: e.sinceEpochMs, category: e.category, phase: e.phase };
}

export function healthAnswer(h: RobotHealth, stream: StateStream) {
  const c = h.cycle;
  return {
    body: h.body,
    link: h.link,
    safety_code: h.safety,
    safety_reason: h.safetyReason,
    cycle: {
      nominal_period_ms: c.nominalPeriodMs,
      cycles: c.cycles,
      late_cycles: c.lateCycles,
      late_cycles_own_work: c.lateCyclesOwnWork,
      missed_cycles: c.missedCycles,
      window_cycles: c.windowCycles,
      period_ms: c.periodMs,
      exec_ms: c.execMs,
      lateness_ms: c.latenessMs,
      jitter_p99_ms: c.jitterP99Ms,
      gc_collections: c.gc.collections,
      gc_ms: c.gc.ms,
      core_cpu_ms: c.core.cpuMs,
      core_wakeups: c.core.wakeups,
      core_spun_ms: c.core.spunMs,
      core_gc_collections: c.core.gcCollections,
      core_gc_max_ms: c.core.gcMaxMs,
    },
    errors: { ...h.errors },
    control: h.control
      ? {
          owner: h.control.owner,
          source: h.control.source as LeaseSource,
          expires_at_epoch_ms: h.control.expiresAtEpochMs,
          expires_at: new Date(h.control.expiresAtEpochMs).toISOString(),
        }
      : null,
    estop: estopAnswer(h.estop),
    sim: h.sim ? { clock: h.sim.clock, model: h.sim.model, time_s: h.sim.timeS, real_time_factor: h.sim.realTimeFactor } : null,
    api: {
      subscribers: stream.subscribers,
      messages_sent: stream.messagesSent,
      messages_skipped: stream.messagesSkipped,
      send_slice_ms: (({ p99Ms, maxMs }) => ({ p99: p99Ms, max: maxMs }))(stream.sliceStats()),
    },
  };
}

type ErrorExtras = { holder?: unknown; problems?: unknown };

export function sendError(reply: FastifyReply, e: BodylinkError): FastifyReply {
  const extra = e as BodylinkError & ErrorExtras;
  return reply.code(e.status).send({
    code: e.code,
    status: e.status,
    message: e.message,
    ...(extra.holder ? { holder: extra.holder } : {}),
    ...(extra.problems ? { problems: extra.problems } : {}),
  });
}

/** Validation → 400 naming the field; BodylinkError → its status; anything else → its 4xx or 500. */
export function errorHandler(err: FastifyError | BodylinkError, req: FastifyRequest, reply: FastifyReply): FastifyReply {
  if (err instanceof BodylinkError) return sendError(reply, err);
  if (err.validation) {
    const finite = /must be number/.test(err.message) ? " (a finite number: NaN and Infinity are refused)" : "";
    return sendError(reply, new BodylinkError("BL_ERR_API_BAD_REQUEST", `${err.message}${finite}`));
  }
  // fastify's own limit, met while the body streams in (chunked bodies without a Content-Length).
  if (err.code === "FST_ERR_CTP_BODY_TOO_LARGE") return sendError(reply, new BodylinkError("BL_ERR_API_BODY_TOO_LARGE", String(req.routeOptions.bodyLimit)));
  const status = err.statusCode ?? 500;
  if (status >= 400 && status < 500) {
    const code: ErrorCode = "BL_ERR_API_BAD_REQUEST";
    return reply.code(status).send({ code, status, message: `invalid request: ${err.message}` });
  }
  req.log.error(err);
  return sendError(reply, new BodylinkError("BL_ERR_API_INTERNAL", err.message));
}
