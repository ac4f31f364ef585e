/**
 * `bodylink replay FILE.mcap`: drive the runtime from a recording instead of a body. Every server
 * (LoLA socket, robot API, dashboard) works on the recorded data; the LoLA messages it sends are
 * the recorded ones byte for byte (it compares each and says so at the end). Real time by
 * default, `--speed N`, or `--step` (Enter plays one cycle, "N" Enter plays N).
 */
import { createInterface } from "node:readline";
import type { Command } from "commander";
import type { ReplayDriver } from "../replay/driver.js";
import { type Clock, MonotonicClock, SimClock } from "../runtime/clock.js";
import { HANDSHAKE } from "../wire/chestboard/constants.js";
import { CliError, parseIntOption } from "./errors.js";
import { DEFAULT_API_PORT, DEFAULT_LOLA_PATH, type ServeOptions } from "./serve-options.js";
import { checkRuntimeDir, removeRuntimeRecord } from "./discovery.js";
import type { BodyEntry } from "./bodies/entry.js";
import type { NaoRobot } from "../runtime/nao-robot.js";
import { BodylinkError } from "../errors.js";
import { join } from "node:path";

interface ReplayCliOptions {
  speed?: number;
  step?: boolean;
  host: string;
  apiPort?: number;
  lola: boolean;
  lolaPath?: string;
  lolaReaders: number;
  name?: string;
}

export function registerReplay(program: Command): void {
  program
    .command("replay <file>")
    .description("drive the runtime (LoLA socket, robot API, dashboard) from a recording instead of a body; the LoLA messages are the recorded ones byte for byte")
    .option("--speed <n>", "play N times faster (or slower: 0.5) than recorded", (v: string) => {
      const n = Number(v);
      if (!(n > 0 && n <= 100)) throw new CliError(`--speed must be a number in (0, 100], got ${JSON.stringify(v)}`, 2);
      return n;
    })
    .option("--step", "play one cycle per Enter (or N cycles: type N, Enter)")
    .option("--name <name>", "this runtime's name (default: nao-HOST …)")
    .option("--host <address>", "address the servers bind to (loopback unless told otherwise)", "127.0.0.1")
    .option("--api-port <port>", `robot API port; 0 picks a free one (default: ${DEFAULT_API_PORT}, or a free one when that is taken)`, parseIntOption("--api-port", 0, 65535))
    .option("--no-lola", "do not open the LoLA socket")
    .option("--lola-path <path>", `LoLA socket path (default: ${DEFAULT_LOLA_PATH}, or <runtime dir>/NAME.lola when another runtime serves that)`)
    .option("--lola-readers <n>", "read-only LoLA clients allowed besides the controlling one", parseIntOption("--lola-readers", 0, 16), 0)
    .action(async (file: string, o: ReplayCliOptions) => {
      if (o.step && o.speed) throw new CliError("--step and --speed exclude each other", 2);
      // The recording's reader and the servers load when a replay runs, not with the CLI.
      const [{ ReplayDriver }, { ScaledClock }, { startRuntime }] = await Promise.all([import("../replay/driver.js"), import("../replay/clock.js"), import("./serve.js")]);
      const driver = await ReplayDriver.load(file);
      const sim = o.step ? new SimClock() : null;
      const clock: Clock = sim ?? (o.speed && o.speed !== 1 ? new ScaledClock(o.speed) : new MonotonicClock());
      const opts: ServeOptions = {
        body: "nao",
        host: o.host,
        lola: o.lola,
        lolaReaders: o.lolaReaders,
        lolaGraceMs: 100,
        acceptBoardVersion: [...HANDSHAKE.DEFAULT_ACCEPTED_VERSIONS],
        seed: 1,
        tny: false,
        gcEveryMs: 100,
        ...(o.apiPort !== undefined ? { apiPort: o.apiPort } : {}),
        ...(o.lolaPath ? { lolaPath: o.lolaPath } : {}),
        ...(o.name ? { name: o.name } : {}),
      };
      const replay = replayEntry(driver, clock);
      const rt = await startRuntime(opts, replay);
      process.once("exit", () => removeRuntimeRecord());
      for (const l of rt.lines) console.log(l);
      const span = Number(driver.steps[driver.steps.length - 1]!.timeNs - driver.steps[0]!.timeNs) / 1e9;
      console.log(
        `replaying ${driver.steps.length.toLocaleString("en-US")} cycles (${span.toFixed(1)} s recorded)${o.step ? ": Enter plays one cycle, N Enter plays N" : o.speed ? ` at ${o.speed}x` : " in real time"}. Ctrl-C to stop.`,
      );
      let closing = false;
      const finish = async (why: string) => {
        if (closing) return;
        closing = true;
        await rt.close();
        console.log(
          `${why}: ${driver.played.toLocaleString("en-US")} cycles played; ${driver.matches.toLocaleString("en-US")} of ${driver.compared.toLocaleString("en-US")} LoLA messages sent were byte-identical to the recording${driver.firstMismatch ? ` (first difference at cycle ${driver.firstMismatch}; bodylink verify ${file} lists the values)` : ""}`,
        );
        process.exit(driver.compared > 0 && driver.matches === driver.compared ? 0 : 1);
      };
      void driver.ended.then(() => setTimeout(() => void finish("end of the recording"), 50));
      process.once("SIGINT", () => void finish("SIGINT"));
      process.once("SIGTERM", () => void finish("SIGTERM"));
      if (sim) {
        const rl = createInterface({ input: process.stdin });
        rl.on("line", (line) => {
          const n = line.trim() === "" ? 1 : Number(line.trim());
          if (!Number.isInteger(n) || n < 1) return console.log("type a number of cycles, or just Enter for one");
          // One cycle per step, run directly (the loop sleeps on the simulated clock, which only moves here).
          for (let i = 0; i < n && !driver.done; i++) {
            sim.set(sim.nowMs() + 12);
            replay.robot!.loop.step();
          }
          console.log(`cycle ${driver.position}/${driver.steps.length}: ${driver.matches} of ${driver.compared} LoLA messages identical so far`);
        });
        rl.on("close", () => void finish("end of input"));
      }
    });
}

/**
 * Replay's start: the NAO on this thread, driven by the recording on `clock` (the one place the
 * in-thread robot serves; `--step` runs its cycles directly), and our LoLA server comparing every
 * message it sends with the recorded one. `robot` is set once started.
 */
export function replayEntry(driver: ReplayDriver, clock: Clock): BodyEntry & { robot: NaoRobot | null } {
  return {
    robot: null,
    flagWarnings: () => [], // replay's own options are checked by replay
    async start({ o, name, others }) {
      const [{ NaoRobot }, { startLolaServer }] = await Promise.all([import("../runtime/nao-robot.js"), import("../serve/lola/server.js")]);
      const nao = await NaoRobot.create({ driver, clock, seed: o.seed, acceptBoardVersions: o.acceptBoardVersion, youngGcEveryMs: o.gcEveryMs ?? 100 });
      this.robot = nao;
      await nao.start();
      const closers: Array<() => Promise<void>> = [() => nao.stop()];
      const lines = [`nao: ${driver.name}, body ${nao.prefs?.bodyId}`];
      let lolaPath: string | null = null;
      if (o.lola) {
        const derived = join(checkRuntimeDir(true)!, `${name}.lola`);
        const path = o.lolaPath ?? (others.some((r) => r.lolaPath === DEFAULT_LOLA_PATH) ? derived : DEFAULT_LOLA_PATH);
        const lolaOpts = { readers: o.lolaReaders, graceMs: o.lolaGraceMs, tap: { sensor: (b: Uint8Array, n: number) => void driver.compare(b, n), command: () => {} } };
        // Without --lola-path, a busy /tmp/robocup (another runtime, or LoLA itself) is no error: take the derived path.
        const lola = await startLolaServer(nao, { path, ...lolaOpts }).catch((e: unknown) => {
          if (o.lolaPath === undefined && path !== derived && e instanceof BodylinkError && e.code === "BL_ERR_LOLA_SOCKET") return startLolaServer(nao, { path: derived, ...lolaOpts });
          throw e;
        });
        closers.unshift(() => lola.close());
        lolaPath = lola.path;
        lines.push(`LoLA socket: ${lola.path}${o.lolaReaders ? ` (+${o.lolaReaders} read-only clients)` : ""}`);
      }
      return { robot: nao, host: null, inThreadRobot: nao, transport: driver.name, lolaPath, tnyUrl: null, lines, closers };
    },
  };
}
