/** Shared pieces of the robot API tests: robots on a SimClock, stepping, route collection. */
import type { FastifyInstance } from "fastify";
import { type Clock, SimClock } from "../../src/runtime/clock.js";
import { NaoRobot } from "../../src/runtime/nao-robot.js";
import { P7Robot } from "../../src/runtime/p7-robot.js";
import { Tny360Robot } from "../../src/runtime/tny360-robot.js";
import { buildApiServer } from "../../src/serve/api/build.js";
import { naoTestSimModel } from "../support/test-sim.js";
import { p7TestSimModel } from "../support/test-sim.js";
import type { ApiRobot } from "../../src/serve/api/routes/context.js";

export const LEASE = "x-bodylink-lease";

/** A NAO runtime on the simulated chest board, configured (prefs, handshake), loop not started. */
export async function simNao(clock: Clock = new SimClock()): Promise<NaoRobot> {
  const robot = await NaoRobot.create({ clock, seed: 7, ...(await naoTestSimModel()) });
  await robot.configure();
  return robot;
}

export async function simP7(clock: Clock = new SimClock()): Promise<P7Robot> {
  return P7Robot.create({ clock, seed: 3, ...(await p7TestSimModel()) });
}

export async function simTny(clock: Clock = new SimClock()): Promise<Tny360Robot> {
  return Tny360Robot.create({ clock, seed: 5 });
}

export type AnyRobot = NaoRobot | P7Robot | Tny360Robot;

/** Run `n` cycles in simulated time: advance one period, then step. */
export async function step(robot: AnyRobot, clock: SimClock, n = 1): Promise<void> {
  const period = robot.loop.timing.nominalPeriodMs;
  for (let i = 0; i < n; i++) {
    await clock.advance(period);
    robot.loop.step();
  }
}

/** Build the app and record every route it registers (method + url), HEAD excluded. */
/**
 * The app and every API route it registers. The dashboard's page routes (GET /, /dashboard/…) are
 * left out on purpose: they serve HTML and assets, are hidden from the OpenAPI document, and have
 * their own test (test/dashboard).
 */
export async function appWithRoutes(robot: ApiRobot): Promise<{ app: FastifyInstance; routes: Set<string>; pages: Set<string> }> {
  const routes = new Set<string>();
  const pages = new Set<string>();
  const app = buildApiServer(robot, {
    onRoute: (r) => {
      const hidden = (r.schema as { hide?: boolean } | undefined)?.hide === true;
      for (const m of Array.isArray(r.method) ? r.method : [r.method]) {
        if (m === "HEAD") continue;
        if (hidden && (r.url === "/" || r.url.startsWith("/dashboard/"))) pages.add(`${m} ${r.url}`);
        else routes.add(`${m} ${r.url}`);
      }
    },
  });
  await app.ready();
  return { app, routes, pages };
}

/** A JSON answer's body. */
export interface Json {
  [k: string]: unknown;
}

/** One request through fastify's inject, with the lease header when given; the body parsed. */
export async function call(app: FastifyInstance, method: string, url: string, payload?: unknown, lease?: string) {
  const headers: Record<string, string> = {};
  if (lease) headers[LEASE] = lease;
  const r = await app.inject({ method: method as "GET", url, headers, ...(payload === undefined ? {} : { payload: payload as object }) });
  return { status: r.statusCode, body: r.body ? (JSON.parse(r.body) as Json) : {} };
}

/** A stand-in for a stream subscriber's WebSocket: records what was sent; `close()` runs its close handler. */
export class StubSocket {
  readyState = 1;
  bufferedAmount = 0;
  readonly sent: Array<{ type: string; seq?: number }> = [];
  readonly #handlers = new Map<string, () => void>();
  send(data: string | Buffer): void {
    this.sent.push(JSON.parse(data.toString()) as { type: string; seq?: number });
  }
  on(ev: string, fn: () => void): this {
    this.#handlers.set(ev, fn);
    return this;
  }
  close(): void {
    this.readyState = 3;
    this.#handlers.get("close")?.();
  }
  states(): number[] {
    return this.sent.filter((m) => m.type === "state").map((m) => m.seq!);
  }
}
