/**
 * `bodylink state`, `prefs`, `boards`: read from the running runtime's robot API when there is one
 * (found through the runtime record, or --url); with none, prefs and boards open the real chest
 * board over USB, or the simulated one with --sim (board.ts), which the first line then says.
 * A local board's modules (the robot, the simulator, USB), the API's answer shapes and the stream's
 * WebSocket are loaded by the command that needs them.
 */
import type { Command } from "commander";
import type { NaoRobot } from "../runtime/nao-robot.js";
import { HANDSHAKE } from "../wire/chestboard/constants.js";
import { type BoardFlags, type BoardSource, readSource, SIM_NOTE } from "./board.js";
import { apiUrlFor, type TargetOptions } from "./discovery.js";
import { BodylinkError } from "../errors.js";
import { parseIntOption, usageError } from "./errors.js";
import { getJson } from "./http.js";
import { type ControlAnswer, fetchView, formatState } from "./state-view.js";

export { formatState } from "./state-view.js";
export type UrlOption = TargetOptions;
export const apiUrl = apiUrlFor;
export { getJson };

type Json = Record<string, unknown>;

async function withLocalNao<T>(o: { usb?: boolean; acceptBoardVersion?: number[] }, sim: boolean, f: (r: NaoRobot) => Promise<T>): Promise<T> {
  const [{ NaoRobot }, { SimChestboard }, { openUsbChestboard }] = await Promise.all([import("../runtime/nao-robot.js"), import("../sim/nao/chestboard.js"), import("../transport/usb.js")]);
  const transport = sim ? new SimChestboard() : await openUsbChestboard();
  const r = await NaoRobot.create({ transport, acceptBoardVersions: o.acceptBoardVersion ?? HANDSHAKE.DEFAULT_ACCEPTED_VERSIONS });
  try {
    await r.configure();
    return await f(r);
  } finally {
    await r.link.transport.close();
  }
}

/** Read through the source: the robot API's `path`, or a local NAO (`local`). Says so when simulated. */
async function readBoard<T>(source: BoardSource, o: BoardFlags & { json?: boolean; acceptBoardVersion?: number[] }, path: string, local: (r: NaoRobot) => T): Promise<T> {
  const simulated = source.kind === "sim" || (source.kind === "api" && source.runtime?.transport === "sim");
  if (simulated) {
    const note = source.kind === "sim" ? SIM_NOTE : `simulated chest board (the runtime, pid ${source.runtime!.pid}, runs the simulator): not a robot's values`;
    // --json keeps stdout parseable: the note goes to stderr there
    if (o.json) console.error(`bodylink: ${note}`);
    else console.log(note);
  }
  if (source.kind === "api") return (await getJson(source.base, path)) as T;
  return withLocalNao(o, source.kind === "sim", async (r) => local(r));
}

const acceptVersions = (v: string, prev: number[] | undefined) => [...(prev ?? []), parseIntOption("--accept-board-version", 0, 255)(v)];

export function registerInspect(program: Command): void {
  program
    .command("state")
    .description("print the running runtime's state once (joints by name, units, who holds control), or stream it with --watch")
    .option("--json", "print JSON (with --watch: one message per line)")
    .option("--watch", "stream the state (20 Hz) until Ctrl-C: refreshed in place on a terminal, one block per message when piped")
    .option("--count <n>", "with --watch: stop after n messages", parseIntOption("--count", 1, 1e9))
    .option("--robot <name>", "the runtime of this name on this machine (`bodylink ls`); needed when several run")
    .option("--url <url>", "robot API base URL (default: the runtime running on this machine)")
    .action(async (o: UrlOption & { json?: boolean; watch?: boolean; count?: number }) => {
      if (o.count !== undefined && !o.watch) throw usageError("--count applies to --watch only (state --watch --count N)", "state");
      const base = apiUrl(o)!;
      const get = (path: string) => getJson(base, path);
      if (!o.watch) {
        const s = (await get("/v1/state")) as Json;
        if (o.json) return console.log(JSON.stringify(s, null, 2));
        const [view, control] = await Promise.all([fetchView(get), get("/v1/control") as Promise<ControlAnswer>]);
        console.log(formatState(s, view, control));
        return;
      }
      const view = o.json ? null : await fetchView(get);
      await watch(base, o, view);
    });

  program
    .command("prefs")
    .description("print the chest board's 76 preference values with names and units (like naoctl prefs)")
    .option("--json", "print JSON")
    .option("--sim", "with no runtime running: read the simulated chest board (says so in its first line)")
    .option("--usb", "with no runtime running: read the real chest board over USB (the default)")
    .option("--robot <name>", "the runtime of this name on this machine (`bodylink ls`); needed when several run")
    .option("--url <url>", "robot API base URL (default: the runtime running on this machine)")
    .action(async (o: BoardFlags & { json?: boolean }) => {
      const source = await readSource(o, "prefs");
      const { prefsAnswer } = await import("../serve/api/bodies/nao.js");
      const p = await readBoard(source, o, "/v1/preferences", (r) => prefsAnswer(r.prefs!));
      if (o.json) return console.log(JSON.stringify(p, null, 2));
      const w = Math.max(...p.values.map((v) => v.key.length));
      for (const v of p.values) console.log(`${v.key.padEnd(w)}  ${typeof v.value === "number" && !Number.isInteger(v.value) ? Number(v.value.toPrecision(7)) : v.value}${v.unit ? ` ${v.unit}` : ""}`);
      console.log(`${p.values.length} values, CRC ok`);
    });

  program
    .command("boards")
    .description("print the motor-board handshake per board: serial, version, hardware revision, type, accepted or why not")
    .option("--json", "print JSON")
    .option("--sim", "with no runtime running: run the handshake on the simulated chest board (says so in its first line)")
    .option("--usb", "with no runtime running: run the handshake on the real chest board over USB (the default)")
    .option("--accept-board-version <v...>", "with no runtime running: accepted versions", acceptVersions)
    .option("--robot <name>", "the runtime of this name on this machine (`bodylink ls`); needed when several run")
    .option("--url <url>", "robot API base URL (default: the runtime running on this machine)")
    .action(async (o: BoardFlags & { json?: boolean; acceptBoardVersion?: number[] }) => {
      const source = await readSource(o, "boards");
      const { boardAnswer } = await import("../serve/api/bodies/nao.js");
      const boards = await readBoard(source, o, "/v1/boards", (r) => r.boards.map(boardAnswer));
      if (o.json) return console.log(JSON.stringify(boards, null, 2));
      console.log(`${"board".padEnd(20)} ${"bus/addr".padEnd(9)} ${"serial".padEnd(10)} ver  hw  type   status`);
      for (const b of boards) {
        const serial = b.serial === null ? "-" : `0x${b.serial.toString(16)}`;
        const status = b.accepted ? "accepted" : `REJECTED after ${b.attempts}: ${b.reason}`;
        const mismatch = b.serial_mismatch ? ` (stored serial 0x${(b.stored_serial ?? 0).toString(16)} differs)` : "";
        console.log(
          `${b.name.padEnd(20)} ${`${b.bus}/0x${b.address.toString(16)}`.padEnd(9)} ${serial.padEnd(10)} ${String(b.config_version ?? "-").padEnd(4)} ${String(b.hardware_revision ?? "-").padEnd(3)} ${b.type.padEnd(6)} ${status}${mismatch}`,
        );
      }
    });
}

/** --watch: one JSON line per message, or the formatted state (in place on a terminal). */
async function watch(base: string, o: { json?: boolean; count?: number }, view: Awaited<ReturnType<typeof fetchView>> | null): Promise<void> {
  const tty = Boolean(process.stdout.isTTY) && !o.json;
  const { default: WebSocket } = await import("ws");
  let control: ControlAnswer | null = null;
  const refreshControl = async () => {
    control = (await getJson(base, "/v1/control").catch(() => null)) as ControlAnswer | null;
  };
  if (view) await refreshControl();
  const timer = view ? setInterval(() => void refreshControl(), 1000) : null;
  try {
    await new Promise<void>((resolve, reject) => {
      const token = process.env.BODYLINK_TOKEN; // as getJson: the runtime's token, when it has one
      const ws = new WebSocket(`${base.replace(/^http/, "ws")}/v1/stream`, token ? { headers: { authorization: `Bearer ${token}` } } : {});
      let n = 0;
      ws.on("message", (data) => {
        const m = JSON.parse(String(data)) as Json;
        if (m.type !== "state" || (o.count && n >= o.count)) return; // messages already in flight after the last one
        if (!view) console.log(JSON.stringify(m));
        else if (tty) process.stdout.write(`${n === 0 ? "\x1b[2J" : ""}\x1b[H${formatState(m, view, control, true).replace(/\n/g, "\x1b[K\n")}\x1b[K\n\x1b[J`);
        else console.log(`--- seq ${m.seq}\n${formatState(m, view, control, true)}`);
        if (o.count && ++n >= o.count) ws.close();
      });
      ws.on("close", () => resolve());
      ws.on("error", (e) => reject(new BodylinkError("BL_ERR_CLI_NO_RUNTIME", `${base} (state stream: ${e.message})`)));
    });
  } finally {
    if (timer) clearInterval(timer);
  }
}
