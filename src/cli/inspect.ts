/**
 * `bodylink state`, `prefs`, `boards`: read from the running runtime's robot API when there is one
 * (found through the runtime record, or --url), else (prefs, boards) open the chest board directly:
 * the simulator by default, --usb for the robot.
 */
import type { Command } from "commander";
import WebSocket from "ws";
import { NaoRobot } from "../runtime/nao-robot.js";
import { boardAnswer, prefsAnswer } from "../serve/api/bodies/nao.js";
import { openUsbChestboard } from "../transport/usb.js";
import { HANDSHAKE } from "../wire/chestboard/constants.js";
import { apiUrlFor, type TargetOptions } from "./discovery.js";
import { BodylinkError } from "../errors.js";
import { CliError, parseIntOption } from "./errors.js";

export type UrlOption = TargetOptions;
export const apiUrl = apiUrlFor;

/** GET (or, with `body`, POST as JSON) one API path; one clear error when it fails. */
export async function getJson(base: string, path: string, post?: unknown): Promise<unknown> {
  let res: Response;
  try {
    // BODYLINK_TOKEN: the runtime's token, when it has one (serve --token; docs/security.md).
    const token = process.env.BODYLINK_TOKEN;
    const headers: Record<string, string> = token ? { authorization: `Bearer ${token}` } : {};
    res = await fetch(base + path, post === undefined ? { headers } : { method: "POST", headers: { ...headers, "content-type": "application/json" }, body: JSON.stringify(post) });
  } catch (e) {
    throw new BodylinkError("BL_ERR_CLI_NO_RUNTIME", `${base} (${(e as Error).cause ?? (e as Error).message})`);
  }
  const body = (await res.json().catch(() => null)) as { message?: string; code?: string } | null;
  if (!res.ok) throw new CliError(`${path}: ${res.status} ${body?.code ?? ""} ${body?.message ?? ""}`.trim());
  return body;
}

const fmtArr = (a: unknown, digits = 3) => (Array.isArray(a) ? a.map((v) => (typeof v === "number" ? v.toFixed(digits) : String(v))).join(" ") : String(a));

type Json = Record<string, unknown>;

/** Human summary of a NAO/P7/TNY state from GET /v1/state: every top-level field, arrays inline. */
export function formatState(s: Json): string {
  const out: string[] = [];
  const walk = (prefix: string, v: unknown) => {
    if (v && typeof v === "object" && !Array.isArray(v)) for (const [k, x] of Object.entries(v as Json)) walk(prefix ? `${prefix}.${k}` : k, x);
    else out.push(`${prefix.padEnd(28)} ${Array.isArray(v) ? fmtArr(v) : typeof v === "number" ? Number(v.toFixed(4)) : String(v)}`);
  };
  walk("", s);
  return out.join("\n");
}

async function withLocalNao<T>(o: { usb?: boolean; acceptBoardVersion?: number[] }, f: (r: NaoRobot) => Promise<T>): Promise<T> {
  const transport = o.usb ? await openUsbChestboard() : undefined;
  const r = await NaoRobot.create({ transport, acceptBoardVersions: o.acceptBoardVersion ?? HANDSHAKE.DEFAULT_ACCEPTED_VERSIONS });
  try {
    await r.configure();
    return await f(r);
  } finally {
    await r.link.transport.close();
  }
}

export function registerInspect(program: Command): void {
  program
    .command("state")
    .description("print the running runtime's state once, or stream it with --watch")
    .option("--json", "print JSON")
    .option("--watch", "stream the state (20 Hz) until Ctrl-C")
    .option("--count <n>", "with --watch: stop after n messages", parseIntOption("--count", 1, 1e9))
    .option("--robot <name>", "the runtime of this name on this machine (`bodylink ls`); needed when several run")
    .option("--url <url>", "robot API base URL (default: the runtime running on this machine)")
    .action(async (o: UrlOption & { json?: boolean; watch?: boolean; count?: number }) => {
      const base = apiUrl(o, true)!;
      if (!o.watch) {
        const s = (await getJson(base, "/v1/state")) as Json;
        console.log(o.json ? JSON.stringify(s, null, 2) : formatState(s));
        return;
      }
      await new Promise<void>((resolve, reject) => {
        const token = process.env.BODYLINK_TOKEN;
        const ws = new WebSocket(`${base.replace(/^http/, "ws")}/v1/stream`, token ? { headers: { authorization: `Bearer ${token}` } } : {});
        let n = 0;
        ws.on("message", (data) => {
          const m = JSON.parse(String(data)) as Json;
          if (m.type !== "state") return;
          console.log(o.json ? JSON.stringify(m) : `--- seq ${m.seq}\n${formatState((m.state ?? m) as Json)}`);
          if (o.count && ++n >= o.count) ws.close();
        });
        ws.on("close", () => resolve());
        ws.on("error", (e) => reject(new CliError(`state stream at ${base} failed: ${e.message}`)));
      });
    });

  program
    .command("prefs")
    .description("print the chest board's 76 preference values with names and units (like naoctl prefs)")
    .option("--json", "print JSON")
    .option("--usb", "with no runtime running: read the real chest board over USB")
    .option("--robot <name>", "the runtime of this name on this machine (`bodylink ls`); needed when several run")
    .option("--url <url>", "robot API base URL (default: the runtime running on this machine)")
    .action(async (o: UrlOption & { json?: boolean; usb?: boolean }) => {
      const base = apiUrl(o, false);
      const p = (base ? await getJson(base, "/v1/preferences") : await withLocalNao(o, async (r) => prefsAnswer(r.prefs!))) as ReturnType<typeof prefsAnswer>;
      if (o.json) return console.log(JSON.stringify(p, null, 2));
      const w = Math.max(...p.values.map((v) => v.key.length));
      for (const v of p.values) console.log(`${v.key.padEnd(w)}  ${typeof v.value === "number" && !Number.isInteger(v.value) ? Number(v.value.toPrecision(7)) : v.value}${v.unit ? ` ${v.unit}` : ""}`);
      console.log(`${p.values.length} values, CRC ok`);
    });

  program
    .command("boards")
    .description("print the motor-board handshake per board: serial, version, hardware revision, type, accepted or why not")
    .option("--json", "print JSON")
    .option("--usb", "with no runtime running: run the handshake on the real chest board over USB")
    .option("--accept-board-version <v...>", "with no runtime running: accepted versions", (v: string, prev: number[] | undefined) => [...(prev ?? []), parseIntOption("--accept-board-version", 0, 255)(v)])
    .option("--robot <name>", "the runtime of this name on this machine (`bodylink ls`); needed when several run")
    .option("--url <url>", "robot API base URL (default: the runtime running on this machine)")
    .action(async (o: UrlOption & { json?: boolean; usb?: boolean; acceptBoardVersion?: number[] }) => {
      const base = apiUrl(o, false);
      const boards = (base ? await getJson(base, "/v1/boards") : await withLocalNao(o, async (r) => r.boards.map(boardAnswer))) as ReturnType<typeof boardAnswer>[];
      if (o.json) return console.log(JSON.stringify(boards, null, 2));
      console.log(`${"board".padEnd(20)} ${"bus/addr".padEnd(9)} ${"serial".padEnd(10)} ver  hw  type   status`);
      for (const b of boards) {
        const serial = b.serial === null ? "-" : `0x${b.serial.toString(16)}`;
        const status = b.accepted ? "accepted" : `REJECTED after ${b.attempts}: ${b.reason}`;
        const mismatch = b.serial_mismatch ? ` (stored serial 0x${(b.stored_serial ?? 0).toString(16)} differs)` : "";
        console.log(`${b.name.padEnd(20)} ${`${b.bus}/0x${b.address.toString(16)}`.padEnd(9)} ${serial.padEnd(10)} ${String(b.config_version ?? "-").padEnd(4)} ${String(b.hardware_revision ?? "-").padEnd(3)} ${b.type.padEnd(6)} ${status}${mismatch}`);
      }
    });
}
