/**
 * The TNY-360's serve entry: its core (the simulated quadruped, or a real one with --tny-host) and
 * the TNY-360 API server, both in the core's worker (src/rt/tny360-worker.ts): a client's command
 * reaches the body on that thread, without a hop through the main thread (docs/architecture.md).
 */
import { Tny360Host } from "../../host/tny360-host.js";
import { parseTnyHost } from "../../runtime/tny360-robot.js";
import { TNY_DEFAULT_PORT } from "../../wire/tny/constants.js";
import { listenError, usageError } from "../errors.js";
import { type BodyEntry, coreOptions } from "./entry.js";

/** The listen errors the worker reports by errno (its Error does not cross the thread with its `code`). */
const LISTEN_ERRNOS = new Set(["EADDRINUSE", "EACCES", "EADDRNOTAVAIL"]);

export const TNY360_ENTRY: BodyEntry = {
  async start({ o, access, recordRing, estopSocket }) {
    let target: { host: string; port: number } | null = null;
    try {
      target = o.tnyHost ? parseTnyHost(o.tnyHost) : null;
    } catch (e) {
      throw usageError(`--tny-host: ${(e as Error).message}`, "serve");
    }
    const port = o.tnyPort ?? TNY_DEFAULT_PORT;
    const server = o.tny
      ? { host: o.host, port, fallbackToFreePort: o.tnyPort === undefined, token: access.token ?? null, allowHosts: [...(access.allowHosts ?? [])], allowOrigins: [...(access.allowOrigins ?? [])] }
      : null;
    const h = await Tny360Host.start({ ...coreOptions(o), remote: target, server, estopSocket, ...(recordRing ? { recordRing } : {}) }).catch((e: unknown) => {
      const errno = (e as { errno?: string }).errno;
      throw errno !== undefined && LISTEN_ERRNOS.has(errno) ? listenError(Object.assign(new Error((e as Error).message), { code: errno }), "TNY-360 API", o.host, port, "--tny-port") : e;
    });
    h.onRefused(access.onRefused);
    const lines = [
      target
        ? `tny360: real TNY-360 at ws://${target.host}:${target.port}/ (${h.state.link === "ok" ? "connected" : "not reachable yet, retrying"}), polled at up to 50 Hz; real-time core in its own thread`
        : "tny360: simulated TNY-360 (14 joints, 200 Hz); real-time core in its own thread",
    ];
    const tnyUrl = h.tnyPort !== null ? `ws://${o.host}:${h.tnyPort}/` : null;
    if (tnyUrl) lines.push(`TNY-360 API: ${tnyUrl} (binary WebSocket, at most 3 connections, in the real-time core's thread)`);
    return { robot: h, host: h, inThreadRobot: null, transport: target ? `tny:${o.tnyHost}` : "sim", lolaPath: null, tnyUrl, lines, closers: [() => h.shutdown()] };
  },
};
