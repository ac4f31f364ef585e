/**
 * `bodylink serve --body tny360`: the simulated TNY-360 (or a real one with --tny-host) and its
 * binary API server. With the threaded core (serve's default) the body and, unless
 * `--tny-server main`, the TNY-360 API server run in the core's worker (src/rt/tny360-worker.ts).
 */
import { Tny360Host } from "../host/tny360-host.js";
import { parseTnyHost, type Tny360Body, Tny360Robot } from "../runtime/tny360-robot.js";
import { startTnyServer } from "../serve/tny/server.js";
import { TNY_DEFAULT_PORT } from "../wire/tny/constants.js";
import { listenError, usageError } from "./errors.js";
import { coreWakeOptions, testCoreHooks, type ServeOptions } from "./serve.js";
import type { WebAccessOptions } from "../serve/web-access.js";
import type { TnyFrameTap } from "../record/tap.js";

type Started = { robot: Tny360Body; /** The in-thread core, when the core is not in a worker. */ core: Tny360Robot | null; host: Tny360Host | null; closers: Array<() => Promise<void>>; lines: string[]; tnyUrl: string | null };

/**
 * `inThread`: keep the core on this thread whatever `o.core` says (a custom clock). `recordRing`:
 * a recording's ring for a threaded core (it records its cycles there; the recorder drains it).
 */
export async function startTny(
  o: ServeOptions,
  access: WebAccessOptions & { onRefused?: (what: string, detail: string) => void } = {},
  where: { inThread?: boolean; recordRing?: SharedArrayBuffer | null; tap?: TnyFrameTap | null; estopSocket?: string | null } = {},
): Promise<Started> {
  let target: { host: string; port: number } | null = null;
  try {
    target = o.tnyHost ? parseTnyHost(o.tnyHost) : null;
  } catch (e) {
    throw usageError(`--tny-host: ${(e as Error).message}`, "serve");
  }
  if (o.core === "worker" && !where.inThread) return startThreaded(o, access, target, where.recordRing ?? null, where.tap ?? null, where.estopSocket ?? null);
  const tap = where.tap ? { tap: where.tap } : {};
  const robot = await Tny360Robot.create({ ...(target ? { host: target.host, port: target.port } : { seed: o.seed }), youngGcEveryMs: o.gcEveryMs ?? 100 });
  await robot.start();
  const closers: Array<() => Promise<void>> = [() => robot.stop()];
  const lines = [
    target
      ? `tny360: real TNY-360 at ws://${target.host}:${target.port}/ (${robot.state.link === "ok" ? "connected" : "not reachable yet, retrying"}), polled at up to 50 Hz`
      : "tny360: simulated TNY-360 (14 joints, 200 Hz)",
  ];
  let tnyUrl: string | null = null;
  if (o.tny) {
    const server = await startTnyServer(robot, { host: o.host, ...access, ...tap, port: o.tnyPort ?? TNY_DEFAULT_PORT })
      // Without --tny-port, a taken 5621 (another runtime) is no error: take a free port and print it.
      .catch((e: unknown) => {
        if (o.tnyPort === undefined && (e as NodeJS.ErrnoException).code === "EADDRINUSE") return startTnyServer(robot, { host: o.host, ...access, ...tap, port: 0 });
        throw e;
      })
      .catch(async (e: unknown) => {
        await robot.stop(); // the caller gets no closers when this throws: stop the robot here
        throw listenError(e, "TNY-360 API", o.host, o.tnyPort ?? TNY_DEFAULT_PORT, "--tny-port");
      });
    closers.unshift(() => server.close());
    tnyUrl = `ws://${o.host}:${server.port}/`;
    lines.push(`TNY-360 API: ${tnyUrl} (binary WebSocket, at most 3 connections)`);
  }
  return { robot, core: robot, host: null, closers, lines, tnyUrl };
}

/** The threaded core: the body in its worker, and the TNY-360 API server there too unless `--tny-server main`. */
async function startThreaded(
  o: ServeOptions,
  access: WebAccessOptions & { onRefused?: (what: string, detail: string) => void },
  target: { host: string; port: number } | null,
  recordRing: SharedArrayBuffer | null,
  tnyTap: TnyFrameTap | null,
  estopSocket: string | null,
): Promise<Started> {
  const tap = tnyTap ? { tap: tnyTap } : {};
  const inCore = o.tny && o.tnyServer !== "main";
  const port = o.tnyPort ?? TNY_DEFAULT_PORT;
  const server = { host: o.host, port, fallbackToFreePort: o.tnyPort === undefined, token: access.token ?? null, allowHosts: [...(access.allowHosts ?? [])], allowOrigins: [...(access.allowOrigins ?? [])] };
  const host = await Tny360Host.start({ seed: o.seed, remote: target, server: inCore ? server : null, gcEveryMs: o.gcEveryMs ?? 100, estopSocket, ...(recordRing ? { recordRing } : {}), ...testCoreHooks(), ...coreWakeOptions(o) }).catch((e: unknown) => {
    throw (e as { errno?: string }).errno === "EADDRINUSE" || (e as { errno?: string }).errno === "EACCES" || (e as { errno?: string }).errno === "EADDRNOTAVAIL"
      ? listenError(Object.assign(new Error((e as Error).message), { code: (e as { errno?: string }).errno }), "TNY-360 API", o.host, port, "--tny-port")
      : e;
  });
  if (access.onRefused) host.onRefused(access.onRefused);
  const robot: Tny360Body = host;
  const closers: Array<() => Promise<void>> = [() => host.shutdown()];
  const lines = [
    target
      ? `tny360: real TNY-360 at ws://${target.host}:${target.port}/ (${host.state.link === "ok" ? "connected" : "not reachable yet, retrying"}), polled at up to 50 Hz; real-time core in its own thread`
      : "tny360: simulated TNY-360 (14 joints, 200 Hz); real-time core in its own thread",
  ];
  let tnyUrl: string | null = null;
  let tnyPort = host.tnyPort;
  if (o.tny && !inCore) {
    const s = await startTnyServer(host, { host: o.host, ...access, ...tap, port })
      .catch((e: unknown) => {
        if (o.tnyPort === undefined && (e as NodeJS.ErrnoException).code === "EADDRINUSE") return startTnyServer(host, { host: o.host, ...access, ...tap, port: 0 });
        throw e;
      })
      .catch(async (e: unknown) => {
        await host.shutdown();
        throw listenError(e, "TNY-360 API", o.host, port, "--tny-port");
      });
    closers.unshift(() => s.close());
    tnyPort = s.port;
  }
  if (o.tny && tnyPort !== null) {
    tnyUrl = `ws://${o.host}:${tnyPort}/`;
    lines.push(`TNY-360 API: ${tnyUrl} (binary WebSocket, at most 3 connections${inCore ? ", in the real-time core's thread" : ", on the main thread"})`);
  }
  return { robot, core: null, host, closers, lines, tnyUrl };
}
