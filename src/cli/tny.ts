/** `bodylink serve --body tny360`: the simulated TNY-360 (or a real one with --tny-host) and its binary API server. */
import { parseTnyHost, Tny360Robot } from "../runtime/tny360-robot.js";
import { startTnyServer } from "../serve/tny/server.js";
import { TNY_DEFAULT_PORT } from "../wire/tny/constants.js";
import { listenError, usageError } from "./errors.js";
import type { ServeOptions } from "./serve.js";
import type { WebAccessOptions } from "../serve/web-access.js";

export async function startTny(o: ServeOptions, access: WebAccessOptions = {}): Promise<{ robot: Tny360Robot; closers: Array<() => Promise<void>>; lines: string[]; tnyUrl: string | null }> {
  let target: { host: string; port: number } | null = null;
  try {
    target = o.tnyHost ? parseTnyHost(o.tnyHost) : null;
  } catch (e) {
    throw usageError(`--tny-host: ${(e as Error).message}`, "serve");
  }
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
    const server = await startTnyServer(robot, { host: o.host, ...access, port: o.tnyPort ?? TNY_DEFAULT_PORT })
      // Without --tny-port, a taken 5621 (another runtime) is no error: take a free port and print it.
      .catch((e: unknown) => {
        if (o.tnyPort === undefined && (e as NodeJS.ErrnoException).code === "EADDRINUSE") return startTnyServer(robot, { host: o.host, ...access, port: 0 });
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
  return { robot, closers, lines, tnyUrl };
}
