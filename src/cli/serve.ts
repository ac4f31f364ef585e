/**
 * `bodylink serve`: start one body (simulated by default) and its servers, print where they serve,
 * record the runtime for the other CLI commands, and shut down cleanly (stiffness off, socket file
 * removed) on SIGINT/SIGTERM.
 */
import type { Command } from "commander";
import { startApiServer } from "../serve/api/build.js";
import { startLolaServer } from "../serve/lola/server.js";
import { NaoRobot } from "../runtime/nao-robot.js";
import { P7Robot } from "../runtime/p7-robot.js";
import type { RobotBase } from "../runtime/robot.js";
import type { Tny360Robot } from "../runtime/tny360-robot.js";
import { openUsbChestboard } from "../transport/usb.js";
import { HANDSHAKE } from "../wire/chestboard/constants.js";
import { findRuntime, removeRuntime, writeRuntime } from "./discovery.js";
import { CliError, parseIntOption } from "./errors.js";

export const DEFAULT_API_PORT = 8780;
export const DEFAULT_LOLA_PATH = "/tmp/robocup";

export interface ServeOptions {
  body: string;
  usb?: boolean;
  host: string;
  apiPort: number;
  lola: boolean;
  lolaPath: string;
  lolaReaders: number;
  lolaGraceMs: number;
  acceptBoardVersion: number[];
  seed: number;
  tny: boolean;
  tnyPort: number;
  tnyHost?: string;
  /** Collect V8's young generation between cycles at most this often, ms; 0 leaves it to V8. Defaults to 100. */
  gcEveryMs?: number;
  quiet?: boolean;
}

export interface RunningRuntime {
  robot: RobotBase;
  lines: string[];
  close(): Promise<void>;
}

/** Start a body and its servers (used by the CLI and by integration tests). */
export async function startRuntime(o: ServeOptions): Promise<RunningRuntime> {
  const closers: Array<() => Promise<void>> = [];
  const lines: string[] = [];
  let robot: NaoRobot | P7Robot | Tny360Robot;
  let transport = "sim";
  let lolaPath: string | null = null;
  let tnyUrl: string | null = null;
  try {
    if (o.body === "nao") {
      const usb = o.usb ? await openUsbChestboard() : undefined;
      transport = usb ? "usb" : "sim";
      const nao = await NaoRobot.create({ transport: usb, seed: o.seed, acceptBoardVersions: o.acceptBoardVersion, youngGcEveryMs: o.gcEveryMs ?? 100 });
      robot = nao;
      await nao.start();
      closers.unshift(() => nao.stop());
      const rejected = nao.boards.filter((b) => !b.accepted);
      lines.push(`nao: ${transport === "sim" ? "simulated chest board" : "chest board on USB"}, body ${nao.prefs?.bodyId}, ${nao.boards.length - rejected.length}/${nao.boards.length} boards started`);
      for (const b of rejected) lines.push(`  board ${b.name} left uninitialized: ${b.reason}`);
      if (o.lola) {
        const lola = await startLolaServer(nao, { path: o.lolaPath, readers: o.lolaReaders, graceMs: o.lolaGraceMs });
        closers.unshift(() => lola.close());
        lolaPath = lola.path;
        lines.push(`LoLA socket: ${lola.path}${o.lolaReaders ? ` (+${o.lolaReaders} read-only clients)` : ""}`);
      }
    } else if (o.body === "p7") {
      const p7 = await P7Robot.create({ seed: o.seed, youngGcEveryMs: o.gcEveryMs ?? 100 });
      robot = p7;
      await p7.start();
      closers.unshift(() => p7.stop());
      lines.push("p7: simulated AIRBOT P7 arm (7 joints, 250 Hz)");
    } else if (o.body === "tny360") {
      const { startTny } = await import("./tny.js");
      const t = await startTny(o);
      robot = t.robot;
      closers.unshift(...t.closers);
      lines.push(...t.lines);
      tnyUrl = t.tnyUrl;
      transport = o.tnyHost ? `tny:${o.tnyHost}` : "sim";
    } else {
      throw new CliError(`unknown body ${JSON.stringify(o.body)}; choose nao, p7 or tny360`, 2);
    }
    const api = await startApiServer(robot, { host: o.host, port: o.apiPort });
    closers.unshift(() => api.close());
    lines.push(`robot API: ${api.url}  (dashboard ${api.url}/, state stream ${api.url.replace(/^http/, "ws")}/v1/stream, OpenAPI ${api.url}/openapi.json)`);
    writeRuntime({ pid: process.pid, body: o.body, transport, apiUrl: api.url, lolaPath, tnyUrl, startedAt: new Date().toISOString() });
    closers.push(async () => removeRuntime());
  } catch (e) {
    for (const c of closers) await c().catch(() => {});
    throw e;
  }
  let closed = false;
  return {
    robot,
    lines,
    async close() {
      if (closed) return;
      closed = true;
      for (const c of closers) await c().catch(() => {});
    },
  };
}

export function registerServe(program: Command): void {
  program
    .command("serve")
    .description("run the runtime: a body (simulated unless told otherwise) and its servers")
    .option("--body <body>", "nao | p7 | tny360", "nao")
    .option("--usb", "NAO: talk to the real chest board over USB instead of the simulator")
    .option("--host <address>", "address the servers bind to (loopback unless told otherwise)", "127.0.0.1")
    .option("--api-port <port>", "robot API port (0 picks a free one)", parseIntOption("--api-port", 0, 65535), DEFAULT_API_PORT)
    .option("--no-lola", "NAO: do not open the LoLA socket")
    .option("--lola-path <path>", "NAO: LoLA socket path", DEFAULT_LOLA_PATH)
    .option("--lola-readers <n>", "NAO: read-only LoLA clients allowed besides the controlling one", parseIntOption("--lola-readers", 0, 16), 0)
    .option("--lola-grace-ms <ms>", "NAO: how long a silent LoLA client's last command stays in force", parseIntOption("--lola-grace-ms", 50, 60000), 100)
    .option("--accept-board-version <v...>", "NAO: accepted motor-board configuration versions", (v: string, prev: number[] | undefined) => [...(prev ?? []), parseIntOption("--accept-board-version", 0, 255)(v)])
    .option("--seed <n>", "simulator seed", parseIntOption("--seed", 0, 2 ** 31 - 1), 1)
    .option("--no-tny", "TNY-360: do not open the TNY-360 API server")
    .option("--tny-port <port>", "TNY-360: API server port", parseIntOption("--tny-port", 0, 65535), 5621)
    .option("--tny-host <host>", "TNY-360: drive a real robot at this address instead of the simulator")
    .option(
      "--gc-every-ms <ms>",
      "collect V8's young generation between cycles at most this often, so it never stops a cycle at random (0: leave it to V8)",
      parseIntOption("--gc-every-ms", 0, 60000),
      100,
    )
    .action(async (raw: Omit<ServeOptions, "acceptBoardVersion"> & { acceptBoardVersion?: number[] }) => {
      const o: ServeOptions = { ...raw, acceptBoardVersion: raw.acceptBoardVersion ?? [...HANDSHAKE.DEFAULT_ACCEPTED_VERSIONS] };
      const other = findRuntime();
      if (other) throw new CliError(`a runtime is already running (pid ${other.pid}, ${other.body} on ${other.transport}, API ${other.apiUrl}); stop it first (Ctrl-C in its terminal, or kill ${other.pid})`);
      const rt = await startRuntime(o);
      for (const l of rt.lines) console.log(l);
      console.log("Ctrl-C to stop.");
      const stop = async (sig: string) => {
        console.log(`\n${sig}: stopping (stiffness off) …`);
        await rt.close();
        process.exit(0);
      };
      process.once("SIGINT", () => void stop("SIGINT"));
      process.once("SIGTERM", () => void stop("SIGTERM"));
    });
}
