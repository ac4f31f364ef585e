/**
 * The TNY-360's serve entry: its core (the simulated quadruped, or a real one with --tny-host) and
 * the TNY-360 API server, both in the core's worker (src/rt/tny360-worker.ts): a client's command
 * reaches the body on that thread, without a hop through the main thread (docs/architecture.md).
 */
import { tny360PhysicsModel } from "../../drivers/tny360/driver.js";
import { Tny360Host } from "../../host/tny360-host.js";
import { LockstepClock } from "../../runtime/lockstep.js";
import { parseTnyHost, Tny360Robot } from "../../runtime/tny360-robot.js";
import { startTnyServer } from "../../serve/tny/server.js";
import { SIM_PERIOD_MS } from "../../sim/tny360/firmware.js";
import { CliError } from "../errors.js";
import { TNY_DEFAULT_PORT } from "../../wire/tny/constants.js";
import { listenError, usageError } from "../errors.js";
import type { ServeOptions } from "../serve-options.js";
import { type BodyEntry, coreOptions, type EntryContext, realRobotWarnings, type StartedBody } from "./entry.js";

/** What `serve` says of the simulated body under the firmware. */
const bodyLine = (sim: ServeOptions["sim"]): string =>
  sim === "physics" ? "MuJoCo physics (models/tny360.xml; it starts limp, resting on its folded legs)" : "kinematic (ideal servos, feet never slip; it cannot fall)";

/** The listen errors the worker reports by errno (its Error does not cross the thread with its `code`). */
const LISTEN_ERRNOS = new Set(["EADDRINUSE", "EACCES", "EADDRNOTAVAIL"]);

export const TNY360_ENTRY: BodyEntry = {
  flagWarnings(o, given) {
    const out = !o.tny && given("tnyPort") ? ["--tny-port has no effect with --no-tny; ignored"] : [];
    return o.tnyHost ? [...out, ...realRobotWarnings("--tny-host", given)] : out;
  },
  async start(ctx) {
    const { o, access, recordRing, estopSocket } = ctx;
    let target: { host: string; port: number } | null = null;
    try {
      target = o.tnyHost ? parseTnyHost(o.tnyHost) : null;
    } catch (e) {
      throw usageError(`--tny-host: ${(e as Error).message}`, "serve");
    }
    const port = o.tnyPort ?? TNY_DEFAULT_PORT;
    if (o.lockstep) {
      if (target) throw new CliError("--lockstep runs the simulated TNY-360 one cycle per step request: not with --tny-host (a real robot keeps its own time)", 2);
      return startLockstep(ctx, port);
    }
    const server = o.tny
      ? { host: o.host, port, fallbackToFreePort: o.tnyPort === undefined, token: access.token ?? null, allowHosts: [...(access.allowHosts ?? [])], allowOrigins: [...(access.allowOrigins ?? [])] }
      : null;
    const h = await Tny360Host.start({ ...coreOptions(o), ...(o.sim && !target ? { sim: o.sim } : {}), remote: target, server, estopSocket, ...(recordRing ? { recordRing } : {}) }).catch(
      (e: unknown) => {
        const errno = (e as { errno?: string }).errno;
        throw errno !== undefined && LISTEN_ERRNOS.has(errno) ? listenError(Object.assign(new Error((e as Error).message), { code: errno }), "TNY-360 API", o.host, port, "--tny-port") : e;
      },
    );
    h.onRefused(access.onRefused);
    const lines = [
      target
        ? `tny360: real TNY-360 at ws://${target.host}:${target.port}/ (${h.state.link === "ok" ? "connected" : "not reachable yet, retrying"}), polled at up to 50 Hz; real-time core in its own thread`
        : `tny360: simulated TNY-360 (14 joints, 200 Hz), ${bodyLine(o.sim)}; real-time core in its own thread`,
    ];
    const tnyUrl = h.tnyPort !== null ? `ws://${o.host}:${h.tnyPort}/` : null;
    if (tnyUrl) lines.push(`TNY-360 API: ${tnyUrl} (binary WebSocket, at most 3 connections, in the real-time core's thread)`);
    return { robot: h, host: h, inThreadRobot: null, transport: target ? `tny:${o.tnyHost}` : "sim", lolaPath: null, tnyUrl, lines, closers: [() => h.shutdown()] };
  },
};

/**
 * `--lockstep`: the simulated quadruped and its TNY-360 API server on this thread, one 5 ms cycle per
 * step a robot API client asks for (POST /v1/sim/step); the TNY-360 protocol has no step of its own.
 */
async function startLockstep({ o, access, tap: tapOn }: EntryContext, port: number): Promise<StartedBody> {
  const clock = new LockstepClock(SIM_PERIOD_MS);
  const tap = tapOn(clock);
  const simModel = o.sim === "physics" ? { simModel: await tny360PhysicsModel() } : {};
  const r = await Tny360Robot.create({ clock, seed: o.seed, youngGcEveryMs: o.gcEveryMs ?? 100, ...simModel });
  if (tap) {
    r.onCycle((seq) => {
      tap.tny360State(seq, r);
      tap.lateCycles(seq, r.loop.timing.lateCycles);
    });
  }
  await r.start();
  const closers: Array<() => Promise<void>> = [() => r.stop()];
  const lines = [`tny360: simulated TNY-360 (14 joints, 200 Hz), ${bodyLine(o.sim)}; lockstep: one ${SIM_PERIOD_MS} ms cycle per step (POST /v1/sim/step), on this thread`];
  let tnyUrl: string | null = null;
  if (o.tny) {
    const opts = {
      host: o.host,
      token: access.token ?? null,
      allowHosts: [...(access.allowHosts ?? [])],
      allowOrigins: [...(access.allowOrigins ?? [])],
      onRefused: access.onRefused,
      ...(tap ? { tap: tap.tny } : {}),
    };
    const server = await startTnyServer(r, { ...opts, port })
      .catch((e: unknown) => {
        if (o.tnyPort === undefined && (e as NodeJS.ErrnoException).code === "EADDRINUSE") return startTnyServer(r, { ...opts, port: 0 });
        throw listenError(e, "TNY-360 API", o.host, port, "--tny-port");
      })
      .catch(async (e: unknown) => {
        await r.stop();
        throw e;
      });
    closers.unshift(() => server.close());
    tnyUrl = `ws://${o.host}:${server.port}/`;
    lines.push(`TNY-360 API: ${tnyUrl} (binary WebSocket, at most 3 connections, on this thread)`);
  }
  return { robot: r, host: null, inThreadRobot: r, lockstep: clock, transport: "sim", lolaPath: null, tnyUrl, lines, closers };
}
