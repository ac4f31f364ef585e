/**
 * The robot API server (issue 4, part 1): fastify with a 20 Hz WebSocket state stream, REST reads,
 * commands behind control leases, an OpenAPI document, and one error shape. Body-independent: the
 * body's parts come from its adapter (`bodies/<body>.ts`, interface in `adapter.ts`).
 *
 * `buildApiServer` returns an app that is not listening (tests use `inject`; the CLI calls
 * `listen`); `startApiServer` listens, on 127.0.0.1 unless told otherwise.
 *
 * Routes (all JSON; the OpenAPI document at GET /openapi.json lists exactly these):
 *   GET    /v1/info             body, joint order, stream rate, lease limits
 *   GET    /v1/state            the state (REST units: NAO battery temperature in whole °C)
 *   GET    /v1/health           link, cycle timing, error counters, control holder, stream stats
 *   GET    /v1/stream           WebSocket: hello, then the state at 20 Hz (stream units)
 *   GET    /v1/control          who holds control (never the lease id)
 *   POST   /v1/control          acquire a lease {owner, lease_ms} → 201 lease | 409 held
 *   PUT    /v1/control          renew (header x-bodylink-lease) → 200 | 403
 *   DELETE /v1/control          release (header) → 200 | 403
 *   POST   /v1/estop            emergency stop, no lease
 *   GET    /v1/<body reads>     e.g. NAO /v1/preferences, /v1/boards
 *   POST   /v1/commands/<…>     the body's commands, lease in the header
 *   GET    /openapi.json
 *
 * Control rule (one Authority per runtime, shared with the LoLA and TNY-360 servers): reads never
 * need a lease; commands need the current lease's id; the first holder keeps control until it
 * releases or its lease expires (a lease not renewed expires by itself); others get 409 naming the
 * holder and until when; emergency stop needs no lease and revokes the lease.
 *
 * Prepare side throughout (allocates); the only perform-side code is the stream's cycle listener.
 */
import type { AddressInfo } from "node:net";
import swagger from "@fastify/swagger";
import { type TypeBoxTypeProvider, TypeBoxValidatorCompiler } from "@fastify/type-provider-typebox";
import websocket from "@fastify/websocket";
import Fastify, { type FastifyError, type FastifyInstance, type FastifyReply, type FastifyRequest, type FastifyServerOptions, type RouteOptions } from "fastify";
import Type from "typebox";
import { BodylinkError, type ErrorCode } from "../../errors.js";
import { DEFAULT_LEASE_MS, type LeaseInfo, type LeaseSource, MAX_LEASE_MS, MIN_LEASE_MS } from "../../runtime/authority.js";
import type { RobotHealth } from "../../runtime/robot.js";
import type { BodyAdapter } from "./adapter.js";
import { registerDashboard } from "./dashboard.js";
import type { NaoRobot } from "../../runtime/nao-robot.js";
import type { P7Robot } from "../../runtime/p7-robot.js";
import type { Tny360Robot } from "../../runtime/tny360-robot.js";
import { NaoAdapter } from "./bodies/nao.js";
import { P7Adapter } from "./bodies/p7.js";
import { Tny360Adapter } from "./bodies/tny360.js";
import {
  AcquireBodySchema,
  API_VERSION,
  CommandAnswerSchema,
  ControlStatusSchema,
  ErrorSchema,
  EstopBodySchema,
  HealthSchema,
  InfoSchema,
  LEASE_HEADER,
  LeaseSchema,
  RenewBodySchema,
  STREAM_PATH,
  STREAM_RATE_HZ,
  stateSchema,
} from "./schemas.js";
import { StateStream, type StreamOptions } from "./stream.js";

/** Any body the robot API serves. */
export type ApiRobot = NaoRobot | P7Robot | Tny360Robot;

export interface ApiServerOptions extends StreamOptions {
  /** Called for every route as it is registered, before any is (fastify's onRoute hook). */
  onRoute?: (route: RouteOptions) => void;
  /** fastify's logger option. Defaults to false (the CLI turns it on). */
  logger?: FastifyServerOptions["logger"];
}

export interface StartApiServerOptions extends ApiServerOptions {
  /** Interface to bind. Defaults to 127.0.0.1 (loopback only); pass 0.0.0.0 to open it up. */
  host?: string;
  /** TCP port; 0 (the default) picks a free one. */
  port?: number;
}

export interface RunningApiServer {
  /** Base URL, e.g. http://127.0.0.1:8080 (the SDK's connect() takes it). */
  readonly url: string;
  readonly port: number;
  readonly app: FastifyInstance;
  /** The state stream (its counters and send-slice figures, as /v1/health reports them). */
  readonly stream: StateStream;
  close(): Promise<void>;
}

/** The adapter for `robot`'s body. */
export function adapterFor(robot: ApiRobot): BodyAdapter {
  switch (robot.kind) {
    case "nao":
      return new NaoAdapter(robot);
    case "p7":
      return new P7Adapter(robot);
    case "tny360":
      return new Tny360Adapter(robot);
  }
}

const errorAnswers = (...codes: number[]) => Object.fromEntries(codes.map((c) => [c, ErrorSchema]));

/** Build the app (routes, schemas, OpenAPI) without listening. */
export function buildApiServer(robot: ApiRobot, opts: ApiServerOptions = {}): FastifyInstance {
  return build(robot, opts).app;
}

function build(robot: ApiRobot, opts: ApiServerOptions): { app: FastifyInstance; stream: StateStream } {
  const adapter = adapterFor(robot);
  const stream = new StateStream(adapter, opts);
  const authority = robot.authority;
  const app = Fastify({ logger: opts.logger ?? false }).withTypeProvider<TypeBoxTypeProvider>();
  // Every route, as registered (for tests and tools that check the OpenAPI document against them).
  if (opts.onRoute) app.addHook("onRoute", opts.onRoute);
  app.setValidatorCompiler(TypeBoxValidatorCompiler);
  app.setErrorHandler(errorHandler);
  app.setNotFoundHandler((req, reply) => {
    sendError(reply, new BodylinkError("BL_ERR_API_NO_ROUTE", req.method, req.url.split("?")[0]!));
  });
  app.addHook("onClose", async () => {
    stream.close();
    adapter.close();
  });

  app.register(swagger, {
    openapi: {
      openapi: "3.1.0",
      info: {
        title: `bodylink robot API (${adapter.kind})`,
        version: String(API_VERSION),
        description:
          "State stream (WebSocket, 20 Hz), REST state and commands for one robot body. Commands need a control lease: " +
          `POST /v1/control, then send its id in the ${LEASE_HEADER} header. docs/api.md has the units and SDK examples.`,
      },
      components: { securitySchemes: { lease: { type: "apiKey", in: "header", name: LEASE_HEADER } } },
      tags: [
        { name: "state", description: "Reads; no lease needed" },
        { name: "control", description: "Control leases and emergency stop" },
        { name: "commands", description: "Need the lease id in the x-bodylink-lease header" },
      ],
    },
  });
  app.register(websocket, { options: { maxPayload: 64 * 1024 } });
  registerDashboard(app); // GET / and /dashboard/… (docs/dashboard.md), hidden from the OpenAPI document

  // Routes go in a child plugin so @fastify/swagger's and @fastify/websocket's hooks see them.
  app.register(async (api) => {
    const r = api.withTypeProvider<TypeBoxTypeProvider>();
    // Requests whose fields are all optional may come without a body (curl -X POST …/v1/estop).
    r.addHook("preValidation", async (req) => {
      if (req.body === undefined && (req.method === "POST" || req.method === "PUT")) req.body = {};
    });

    r.get("/openapi.json", { schema: { summary: "This OpenAPI document", tags: ["state"] } }, async () => api.swagger());

    r.get(
      "/v1/info",
      { schema: { summary: "Body, joint order, stream rate and lease limits", tags: ["state"], response: { 200: InfoSchema } } },
      async () => ({
        body: adapter.kind,
        api_version: API_VERSION,
        joint_names: [...adapter.jointNames],
        stream: { path: STREAM_PATH, rate_hz: stream.rateHz },
        lease: { header: LEASE_HEADER, min_ms: MIN_LEASE_MS, max_ms: MAX_LEASE_MS, default_ms: DEFAULT_LEASE_MS },
      }),
    );

    const restState = stateSchema(adapter.schemas.rest, "The latest state, REST units");
    r.get(
      "/v1/state",
      {
        schema: {
          summary: "The latest state (same fields as the stream; REST units)",
          tags: ["state"],
          response: { 200: restState, 503: ErrorSchema },
        },
      },
      async (_req, reply) => {
        const src = adapter.source();
        const fields = src && adapter.read("rest");
        if (!src || !fields) return sendError(reply, new BodylinkError("BL_ERR_STATE_NONE"));
        return { type: "state", body: adapter.kind, seq: src.seq, timestamp_ms: src.timestampMs, epoch_ms: src.epochMs, link: src.link, ...fields };
      },
    );

    r.get(
      "/v1/health",
      { schema: { summary: "Link, cycle timing, error counters, control holder, stream statistics", tags: ["state"], response: { 200: HealthSchema } } },
      async () => healthAnswer(robot.health(), stream),
    );

    r.get(
      STREAM_PATH,
      {
        websocket: true,
        // @fastify/websocket marks WebSocket routes hidden; this one is part of the API, so list it.
        config: { swaggerTransform: ({ schema, url }: { schema: object; url: string }) => ({ schema: { ...schema, hide: false }, url }) },
        schema: {
          summary: "WebSocket state stream",
          description:
            `Upgrade to a WebSocket. The server sends a hello ({type: "hello", body, joint_names, rate_hz}), the current state at once, ` +
            `then one state message every ${1000 / STREAM_RATE_HZ} ms (stream units; see GET /v1/state's schema, where only the NAO's ` +
            "battery.temperature differs: LoLA's scale on the stream). A client that has not taken the previous message is skipped, " +
            "so it always gets the newest state, never a backlog.",
          tags: ["state"],
          response: { 101: Type.Null({ description: "Switching protocols" }) },
        },
      },
      (socket) => stream.add(socket),
    );

    // --- control leases ---
    r.get(
      "/v1/control",
      { schema: { summary: "Who holds control and until when (never the lease id)", tags: ["control"], response: { 200: ControlStatusSchema } } },
      async () => {
        const h = authority.holder();
        return { held: h !== null, holder: h ? holderAnswer(h) : null };
      },
    );

    r.post(
      "/v1/control",
      {
        schema: {
          summary: "Acquire control: a lease that expires unless renewed",
          tags: ["control"],
          body: AcquireBodySchema,
          response: { 201: LeaseSchema, 400: ErrorSchema, 409: ErrorSchema },
        },
      },
      async (req, reply) => {
        const leaseMs = req.body.lease_ms ?? DEFAULT_LEASE_MS;
        const got = authority.acquire(req.body.owner, "api", leaseMs);
        if (!got.ok) return sendError(reply, heldError(got.holder));
        const info = got.lease.info!;
        return reply.code(201).send(leaseAnswer(info, leaseMs));
      },
    );

    r.put(
      "/v1/control",
      {
        schema: {
          summary: "Renew your lease for lease_ms from now",
          tags: ["control"],
          body: RenewBodySchema,
          security: [{ lease: [] }],
          response: { 200: LeaseSchema, 400: ErrorSchema, 403: ErrorSchema },
        },
      },
      async (req, reply) => {
        const id = leaseIdOf(req);
        if (id instanceof BodylinkError) return sendError(reply, id);
        const leaseMs = req.body.lease_ms ?? DEFAULT_LEASE_MS;
        if (!authority.renew(id, leaseMs)) return sendError(reply, unknownLease(id));
        return leaseAnswer(authority.holder()!, leaseMs);
      },
    );

    r.delete(
      "/v1/control",
      {
        schema: {
          summary: "Release your lease (the body ramps stiffness down when nobody holds control)",
          tags: ["control"],
          security: [{ lease: [] }],
          response: { 200: Type.Object({ released: Type.Literal(true) }), 403: ErrorSchema },
        },
      },
      async (req, reply) => {
        const id = leaseIdOf(req);
        if (id instanceof BodylinkError) return sendError(reply, id);
        if (!authority.release(id)) return sendError(reply, unknownLease(id));
        return { released: true as const };
      },
    );

    r.post(
      "/v1/estop",
      {
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

    // --- body-specific reads and commands ---
    for (const read of adapter.reads) {
      r.get(
        read.path,
        {
          schema: {
            summary: read.summary,
            ...(read.description ? { description: read.description } : {}),
            tags: ["state"],
            response: { 200: read.response, 503: ErrorSchema },
          },
        },
        async (_req, reply) => {
          const v = read.get();
          if (v instanceof BodylinkError) return sendError(reply, v);
          return v;
        },
      );
    }
    for (const cmd of adapter.commands) {
      r.post(
        cmd.path,
        {
          schema: {
            summary: cmd.summary,
            ...(cmd.description ? { description: cmd.description } : {}),
            tags: ["commands"],
            body: cmd.request,
            security: [{ lease: [] }],
            response: { 200: CommandAnswerSchema(cmd.response), ...errorAnswers(400, 403, 409, 503) },
          },
        },
        async (req, reply) => {
          const id = leaseIdOf(req);
          if (id instanceof BodylinkError) return sendError(reply, id);
          const out = cmd.handle(id, req.body);
          if (!out.ok) return sendError(reply, out.error);
          return { ok: true as const, result: out.result };
        },
      );
    }
  });

  /** The lease id from the header, checked against the authority; or the 403 to send. */
  function leaseIdOf(req: FastifyRequest): string | BodylinkError {
    const raw = req.headers[LEASE_HEADER];
    const id = Array.isArray(raw) ? raw[0] : raw;
    if (!id) return new BodylinkError("BL_ERR_AUTH_REQUIRED");
    if (!authority.isHeld(id)) return unknownLease(id);
    return id;
  }

  function unknownLease(id: string): BodylinkError {
    const e = new BodylinkError("BL_ERR_AUTH_UNKNOWN_LEASE", id.length > 12 ? `${id.slice(0, 8)}…` : id);
    const h = authority.holder();
    return h ? Object.assign(e, { holder: holderAnswer(h) }) : e;
  }

  return { app: app as unknown as FastifyInstance, stream };
}

/** Build, listen on host:port (default 127.0.0.1, a free port), and report the URL. */
export async function startApiServer(robot: ApiRobot, opts: StartApiServerOptions = {}): Promise<RunningApiServer> {
  const { host = "127.0.0.1", port = 0, ...rest } = opts;
  const { app, stream } = build(robot, rest);
  await app.listen({ host, port });
  const addr = app.server.address() as AddressInfo;
  const h = addr.family === "IPv6" || host.includes(":") ? `[${addr.address}]` : addr.address;
  return { url: `http://${h}:${addr.port}`, port: addr.port, app, stream, close: () => app.close() };
}

function holderAnswer(h: LeaseInfo) {
  return { owner: h.owner, source: h.source, expires_at_epoch_ms: h.expiresAtEpochMs, expires_at: new Date(h.expiresAtEpochMs).toISOString() };
}

function leaseAnswer(info: LeaseInfo, leaseMs: number) {
  return {
    lease_id: info.id,
    owner: info.owner,
    source: "api" as const,
    lease_ms: leaseMs,
    expires_at_epoch_ms: info.expiresAtEpochMs,
    expires_at: new Date(info.expiresAtEpochMs).toISOString(),
  };
}

function heldError(h: LeaseInfo): BodylinkError {
  const e = new BodylinkError("BL_ERR_AUTH_HELD", `${h.owner} (${h.source})`, new Date(h.expiresAtEpochMs).toISOString());
  return Object.assign(e, { holder: holderAnswer(h) });
}

function healthAnswer(h: RobotHealth, stream: StateStream) {
  const c = h.cycle;
  return {
    body: h.body,
    link: h.link,
    safety_reason: h.safetyReason,
    cycle: {
      nominal_period_ms: c.nominalPeriodMs,
      cycles: c.cycles,
      late_cycles: c.lateCycles,
      period_ms: c.periodMs,
      exec_ms: c.execMs,
      jitter_p99_ms: c.jitterP99Ms,
      gc_collections: c.gc.collections,
      gc_ms: c.gc.ms,
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
    api: {
      subscribers: stream.subscribers,
      messages_sent: stream.messagesSent,
      messages_skipped: stream.messagesSkipped,
      send_slice_ms: (({ p99Ms, maxMs }) => ({ p99: p99Ms, max: maxMs }))(stream.sliceStats()),
    },
  };
}

type ErrorExtras = { holder?: unknown; problems?: unknown };

function sendError(reply: FastifyReply, e: BodylinkError): FastifyReply {
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
function errorHandler(err: FastifyError | BodylinkError, req: FastifyRequest, reply: FastifyReply): FastifyReply {
  if (err instanceof BodylinkError) return sendError(reply, err);
  if (err.validation) {
    const finite = /must be number/.test(err.message) ? " (a finite number: NaN and Infinity are refused)" : "";
    return sendError(reply, new BodylinkError("BL_ERR_API_BAD_REQUEST", `${err.message}${finite}`));
  }
  const status = err.statusCode ?? 500;
  if (status >= 400 && status < 500) {
    const code: ErrorCode = "BL_ERR_API_BAD_REQUEST";
    return reply.code(status).send({ code, status, message: `invalid request: ${err.message}` });
  }
  req.log.error(err);
  return sendError(reply, new BodylinkError("BL_ERR_API_INTERNAL", err.message));
}
