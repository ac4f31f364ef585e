/**
 * The robot API server (docs/api.md): fastify with a 20 Hz WebSocket state stream, REST reads,
 * commands behind control leases, an OpenAPI document, and one error shape. Body-independent: the
 * body's parts come from its adapter (`bodies/<body>.ts`, one per registry entry in `bodies/index.ts`;
 * interface in `adapter.ts`).
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
 *   GET    /v1/estop            the emergency-stop latch (routes/estop.ts)
 *   POST   /v1/estop            emergency stop, no lease; latched until POST /v1/estop/reset
 *   POST   /v1/estop/reset      release the latch (a reason is required)
 *   GET    /v1/<body reads>     e.g. NAO /v1/preferences, /v1/boards
 *   POST   /v1/commands/<…>     the body's commands, lease in the header
 *   GET    /openapi.json
 *
 * Control rule (one Authority per runtime, shared with the LoLA and TNY-360 servers): reads never
 * need a lease; commands need the current lease's id; the first holder keeps control until it
 * releases or its lease expires (a lease not renewed expires by itself); others get 409 naming the
 * holder and until when; emergency stop needs no lease and revokes the lease.
 *
 * Layout: this file builds the app and registers one route plugin per concern (`routes/meta.ts`,
 * `state.ts`, `stream.ts`, `control.ts`, `estop.ts`, `commands.ts`, each given an `ApiContext`);
 * `guard.ts` holds the checks that run before a body is read (size, lease), `body-limit.ts`
 * derives each route's body limit from its schema, `answers.ts` the answer shapes and errors.
 *
 * Prepare side throughout (allocates); the only perform-side code is the stream's cycle listener.
 */
import type { AddressInfo } from "node:net";
import swagger from "@fastify/swagger";
import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import websocket from "@fastify/websocket";
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyServerOptions, type RouteOptions } from "fastify";
import { BodylinkError } from "../../errors.js";
import type { BodyAdapter } from "./adapter.js";
import { errorHandler, sendError } from "./answers.js";
import { MIN_BODY_LIMIT_BYTES } from "./body-limit.js";
import { registerDashboard } from "./dashboard.js";
import { adapterOf } from "./bodies/index.js";
import { refuseAndCut, refuseOversized } from "./guard.js";
import { commandRoutes } from "./routes/commands.js";
import type { ApiContext, ApiRobot, ApiRobots } from "./routes/context.js";
import { controlRoutes } from "./routes/control.js";
import { estopRoutes } from "./routes/estop.js";
import type { FleetGateway } from "./fleet-gateway.js";
import { fleetRoutes } from "./routes/fleet.js";
import type { LockstepClock } from "../../runtime/lockstep.js";
import { metaRoutes } from "./routes/meta.js";
import { stateRoutes } from "./routes/state.js";
import { streamRoutes } from "./routes/stream.js";
import { simRoutes } from "./routes/sim.js";
import { API_VERSION, LEASE_HEADER } from "./schemas.js";
import { StateStream, type StreamOptions } from "./stream.js";
import { validatorCompiler } from "./validator.js";
import { redactToken, requireTokenOffLoopback, WebAccess, type WebAccessOptions } from "../web-access.js";
import { type ConnectionLimit, effectiveMaxConnections, limitConnections } from "../connection-limit.js";

export type { ApiRobot } from "./routes/context.js";

export interface ApiServerOptions extends StreamOptions, WebAccessOptions {
  /** Called for every route as it is registered, before any is (fastify's onRoute hook). */
  onRoute?: (route: RouteOptions) => void;
  /** Called for every request the Host/token/Origin checks refuse (the safety log; rate-limited there). */
  onRefused?: (what: string, detail: string) => void;
  /** fastify's logger option. Defaults to false. */
  logger?: FastifyServerOptions["logger"];
  /**
   * The runtime's own logger (serve/logger.ts) instead: fastify logs through it at the level it is
   * given (serve: error, so requests are not logged; the safety log says what matters). Replaces `logger`.
   */
  loggerInstance?: FastifyBaseLogger;
  /** The runtime's fleet seat (serve --fleet): /v1/health reports it and /v1/fleet serves the fleet page. */
  fleet?: FleetGateway;
  /** The runtime's lockstep clock (serve --lockstep): POST /v1/sim/step moves it; without one the route refuses. */
  lockstep?: LockstepClock;
}

export interface StartApiServerOptions extends ApiServerOptions {
  /** Interface to bind. Defaults to 127.0.0.1 (loopback only); pass 0.0.0.0 to open it up. */
  host?: string;
  /** TCP port; 0 (the default) picks a free one. */
  port?: number;
  /**
   * Most connections at once; at the limit the stalest idle one makes room (connection-limit.ts).
   * Defaults to 1024, and never more than the descriptor limit less its reserve.
   */
  maxConnections?: number;
}

export interface RunningApiServer {
  /** Base URL, e.g. http://127.0.0.1:8080 (the SDK's connect() takes it). */
  readonly url: string;
  readonly port: number;
  readonly app: FastifyInstance;
  /** The state stream (its counters and send-slice figures, as /v1/health reports them). */
  readonly stream: StateStream;
  /** The body's adapter (the fleet bridge reads state through the same one). */
  readonly adapter: BodyAdapter;
  /** The connection bound (connection-limit.ts): the limit in force, sockets open, idle ones closed for room. */
  readonly connections: ConnectionLimit;
  close(): Promise<void>;
}

/** The adapter for `robot`'s body, from the registry-keyed table (`bodies/index.ts`). */
export function adapterFor(robot: ApiRobot): BodyAdapter {
  // `robot.kind` names the robot's own type in ApiRobots; TypeScript cannot correlate the two
  // through a union, so the pair is passed as the generic's widest instance.
  return adapterOf(robot.kind, robot as ApiRobots[typeof robot.kind] as never);
}

/** Build the app (routes, schemas, OpenAPI) without listening. */
export function buildApiServer(robot: ApiRobot, opts: ApiServerOptions = {}): FastifyInstance {
  return build(robot, opts, "127.0.0.1").app;
}

function build(robot: ApiRobot, opts: ApiServerOptions, boundHost: string): { app: FastifyInstance; stream: StateStream; adapter: BodyAdapter } {
  const adapter = adapterFor(robot);
  const stream = new StateStream(adapter, opts);
  const ctx: ApiContext = { robot, adapter, stream, authority: robot.authority, ...(opts.fleet ? { fleet: opts.fleet } : {}), ...(opts.lockstep ? { lockstep: opts.lockstep } : {}) };
  // bodyLimit: the ceiling for a route that sets none (each route with a body sets its own, from
  // its schema: body-limit.ts).
  const app = Fastify({
    ...(opts.loggerInstance ? { loggerInstance: opts.loggerInstance } : { logger: opts.logger ?? false }),
    bodyLimit: MIN_BODY_LIMIT_BYTES,
    // Nothing lingers (docs/security.md, "Descriptors"): a connection that has not sent its headers
    // within 10 s (one that never sends a byte included) or its whole request within 30 s is closed,
    // checked every second; a keep-alive socket idle for 5 s too.
    http: { headersTimeout: HEADERS_TIMEOUT_MS, requestTimeout: REQUEST_TIMEOUT_MS, connectionsCheckingInterval: 1000 },
    requestTimeout: REQUEST_TIMEOUT_MS,
    keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS,
  }).withTypeProvider<TypeBoxTypeProvider>();
  // Every route, as registered (for tests and tools that check the OpenAPI document against them).
  if (opts.onRoute) app.addHook("onRoute", opts.onRoute);
  app.setValidatorCompiler(validatorCompiler);
  app.setErrorHandler(errorHandler);
  app.setNotFoundHandler((req, reply) => {
    sendError(reply, new BodylinkError("BL_ERR_API_NO_ROUTE", req.method, req.url.split("?")[0]!));
  });
  app.decorateRequest("bodylinkLeaseId", null);
  // Host, token, Origin and non-simple checks on every request, WebSocket upgrades included
  // (@fastify/websocket routes upgrades through these hooks): web-access.ts, docs/security.md.
  const access = new WebAccess(boundHost, opts);
  app.addHook("onRequest", async (req, reply) => {
    const path = req.url.split("?")[0]!;
    const upgrade = req.headers.upgrade?.toLowerCase() === "websocket";
    const refused = access.check(req, { upgrade, page: path === "/" || path.startsWith("/dashboard/") });
    if (!refused) return;
    opts.onRefused?.(`api ${upgrade ? "WebSocket" : "request"} (${refused.code})`, `${req.method} ${redactToken(req.url)} from ${req.ip}: ${refused.message}`);
    // A refused upgrade never reaches @fastify/websocket's hooks (which would end its socket).
    if (upgrade) reply.raw.once("finish", () => req.raw.socket.end());
    await refuseAndCut(req, reply, refused);
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
        { name: "commands", description: `Need the lease id in the ${LEASE_HEADER} header` },
        ...(opts.fleet ? [{ name: "fleet", description: "The fleet this runtime joined (serve --fleet): every robot, stop all" }] : []),
      ],
    },
  });
  app.register(websocket, { options: { maxPayload: 64 * 1024 } });
  registerDashboard(app, { fleet: Boolean(opts.fleet) }); // GET / and /dashboard/… (docs/dashboard.md), hidden from the OpenAPI document

  // Routes go in a child plugin so @fastify/swagger's and @fastify/websocket's hooks see them; one
  // plugin per concern (routes/).
  app.register(async (api) => {
    // Before anything is read: a declared body over the route's limit (guard.ts).
    api.addHook("onRequest", refuseOversized);
    // Requests whose fields are all optional may come without a body (curl -X POST …/v1/estop).
    api.addHook("preValidation", async (req) => {
      if (req.body === undefined && (req.method === "POST" || req.method === "PUT")) req.body = {};
    });
    api.register(metaRoutes, ctx);
    api.register(stateRoutes, ctx);
    api.register(streamRoutes, ctx);
    api.register(controlRoutes, ctx);
    api.register(estopRoutes, ctx);
    api.register(commandRoutes, ctx);
    api.register(simRoutes, ctx);
    if (ctx.fleet) api.register(fleetRoutes, ctx);
  });

  return { app: app as unknown as FastifyInstance, stream, adapter };
}

/** A connection that has not sent its request headers within this long is closed, ms. */
export const HEADERS_TIMEOUT_MS = 10_000;
/** A request that has not arrived whole within this long is closed, ms (its answer may take longer). */
export const REQUEST_TIMEOUT_MS = 30_000;
/** A keep-alive socket idle this long between requests is closed, ms. */
export const KEEP_ALIVE_TIMEOUT_MS = 5_000;

/** Build, listen on host:port (default 127.0.0.1, a free port), and report the URL. */
export async function startApiServer(robot: ApiRobot, opts: StartApiServerOptions = {}): Promise<RunningApiServer> {
  const { host = "127.0.0.1", port = 0, maxConnections, ...rest } = opts;
  requireTokenOffLoopback(host, rest.token);
  const { app, stream, adapter } = build(robot, rest, host);
  // After the plugins (the WebSocket plugin's upgrade listener), before the first connection.
  await app.ready();
  const connections = limitConnections(app.server, effectiveMaxConnections(maxConnections));
  await app.listen({ host, port });
  const addr = app.server.address() as AddressInfo;
  const h = addr.family === "IPv6" || host.includes(":") ? `[${addr.address}]` : addr.address;
  return { url: `http://${h}:${addr.port}`, port: addr.port, app, stream, adapter, connections, close: () => app.close() };
}
