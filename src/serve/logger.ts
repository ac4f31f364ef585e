/**
 * The runtime's one log (docs/operations.md, "Logs"): every line `bodylink serve` logs goes through
 * one pino logger (fastify's logger): the safety log, the fleet bridge, the recorder, the robot
 * API's internal errors, each core's own lines (its LoLA server, its lifecycle), start, shutdown
 * and crashes. Two renderings of the same records: `json` (pino's line format: level, time in epoch
 * ms, pid, hostname, msg and fields; what journald, jq and log shippers read) and `pretty` (one
 * human line: local time, level, component, message, fields). JSON unless the log goes to a
 * terminal. Lines are written synchronously: a line logged just before the process exits is not
 * lost, and the log never runs on the real-time core's thread.
 *
 * Prepare side only (main thread). Client text in messages and fields is escaped (serve/log.ts).
 */
import { closeSync, openSync } from "node:fs";
import { hostname } from "node:os";
import { type DestinationStream, type Logger, pino } from "pino";
import { escapeForLog, type LogFormat, type LogLevel } from "./log.js";

// The choices (`serve --log-format`, `--log-level`) live in log.ts, which the CLI's flags read without loading pino.
export { LOG_FORMATS, LOG_LEVELS, type LogFormat, type LogLevel } from "./log.js";

/** pino's numbers for its levels (a JSON line's `level`). */
export const LEVEL_NUMBER = { trace: 10, debug: 20, info: 30, warn: 40, error: 50, fatal: 60 } as const;
const LEVEL_NAME = new Map<number, string>(Object.entries(LEVEL_NUMBER).map(([k, v]) => [v, k]));

export type { Logger };

export interface LogOptions {
  /** Defaults to `pretty` when the log goes to a terminal, else `json` (a file, a pipe, journald). */
  format?: LogFormat;
  /** Defaults to `info`. */
  level?: LogLevel;
  /** Append to this file instead of stderr (rotation is the system's: logrotate with copytruncate). */
  file?: string;
  /** Tests: where the lines go (one string per write, newline included); overrides `file`. */
  stream?: { write(line: string): void };
  /** Tests: whether `stream` is a terminal (colours in `pretty`). */
  isTTY?: boolean;
}

export interface RuntimeLog {
  readonly logger: Logger;
  readonly format: LogFormat;
  /** Where it writes, for the start report ("stderr" or the file). */
  readonly target: string;
}

/**
 * The log `serve` writes. A `file` that cannot be opened throws (the caller reports it with
 * BL_ERR_LOG_FILE) before anything starts.
 */
export function createLog(o: LogOptions = {}): RuntimeLog {
  let out: { write(line: string): void };
  let tty: boolean;
  let target: string;
  if (o.stream) {
    out = o.stream;
    tty = o.isTTY ?? false;
    target = "stream";
  } else if (o.file !== undefined) {
    // Opened here, synchronously, so a bad path is one clear error and not a crash on the first line.
    closeSync(openSync(o.file, "a", 0o640));
    out = pino.destination({ dest: o.file, append: true, sync: true });
    tty = false;
    target = o.file;
  } else {
    out = pino.destination({ fd: 2, sync: true });
    tty = process.stderr.isTTY === true;
    target = "stderr";
  }
  const format = o.format ?? (tty ? "pretty" : "json");
  const dest: DestinationStream = format === "json" ? (out as DestinationStream) : { write: (line: string) => out.write(prettyLine(line, tty)) };
  const logger = pino({ level: o.level ?? "info", base: { pid: process.pid, hostname: hostname() } }, dest);
  return { logger, format, target };
}

/** A logger that writes nowhere (library use: startRuntime without a log). */
export function silentLogger(): Logger {
  return pino({ level: "silent" });
}

const COLOUR: Record<string, string> = { fatal: "\x1b[41;97m", error: "\x1b[31m", warn: "\x1b[33m", info: "\x1b[32m", debug: "\x1b[36m", trace: "\x1b[90m" };
const RESET = "\x1b[0m";
/** Fields every line has, which `pretty` shows in its own places or not at all. */
const HIDDEN = new Set(["level", "time", "pid", "hostname", "msg", "component"]);

/**
 * One JSON line (pino's) as one human line: `HH:MM:SS.mmm LEVEL component: message key=value …`.
 * Control characters in any text are escaped (a terminal is driven by escapes); a line that is
 * not JSON is passed through escaped.
 */
export function prettyLine(json: string, colour = false): string {
  let o: Record<string, unknown>;
  try {
    o = JSON.parse(json) as Record<string, unknown>;
  } catch {
    return `${escapeForLog(json.trimEnd(), 4000)}\n`;
  }
  const t = typeof o.time === "number" ? new Date(o.time) : new Date();
  const hms = `${pad(t.getHours())}:${pad(t.getMinutes())}:${pad(t.getSeconds())}.${String(t.getMilliseconds()).padStart(3, "0")}`;
  const name = LEVEL_NAME.get(Number(o.level)) ?? String(o.level);
  const label = name.toUpperCase().padEnd(5);
  const lvl = colour ? `${COLOUR[name] ?? ""}${label}${RESET}` : label;
  const comp = typeof o.component === "string" ? `${escapeForLog(o.component)}: ` : "";
  const fields: string[] = [];
  for (const [k, v] of Object.entries(o)) {
    if (HIDDEN.has(k) || v === undefined) continue;
    if (k === "err" && v && typeof v === "object") {
      const e = v as { type?: string; message?: string; stack?: string };
      fields.push(`err=${escapeForLog(e.stack ?? `${e.type ?? "Error"}: ${e.message ?? ""}`, 4000)}`);
      continue;
    }
    const text = typeof v === "string" ? (/^[^\s"=]+$/.test(v) ? v : JSON.stringify(v)) : JSON.stringify(v);
    fields.push(`${k}=${escapeForLog(text, 500)}`);
  }
  const msg = escapeForLog(typeof o.msg === "string" ? o.msg : "", 4000);
  return `${hms} ${lvl} ${comp}${msg}${fields.length ? `  ${fields.join(" ")}` : ""}\n`;
}

function pad(n: number): string {
  return String(n).padStart(2, "0");
}

/**
 * A core's own line (its worker's stderr: the LoLA server, the upstream LoLA driver, the cycle's
 * wrapper) as a log record. Those write `LoLA server: warning: …`, `LoLA upstream: …` and
 * `bodylink: …` (a failure); the prefix names the component and the level.
 */
export function coreLineRecord(line: string): { level: "info" | "warn" | "error"; component: string; msg: string } {
  let rest = line;
  let component = "core";
  const m = /^(LoLA server|LoLA upstream|TNY-360 server|bodylink): /.exec(rest);
  if (m) {
    component = m[1] === "bodylink" ? "core" : m[1]!.toLowerCase().replace(/ /g, "-");
    rest = rest.slice(m[0].length);
  }
  if (rest.startsWith("warning: ")) return { level: "warn", component, msg: rest.slice("warning: ".length) };
  if (m?.[1] === "bodylink") return { level: "error", component, msg: rest };
  return { level: "info", component, msg: rest };
}
