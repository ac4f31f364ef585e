/**
 * How CLI commands find running runtimes without flags: every `bodylink serve` writes one record,
 * `<name>.json`, in a per-user runtime directory and removes it on exit, so several runtimes (ten
 * simulated NAOs, a P7 beside a TNY-360) run side by side and `bodylink ls` lists them.
 *
 * The directory is `$BODYLINK_RUNTIME_DIR` (tests), else `$XDG_RUNTIME_DIR/bodylink`, else
 * `/tmp/bodylink-<uid>`. `/tmp` is shared with every local user, so the directory is created 0700
 * and refused when it is a symlink or owned by someone else (they could point our CLI at their
 * server, or make `serve` overwrite a file of ours through a planted symlink). A record is written
 * to a fresh temporary file (exclusive create, which never follows a symlink) and then linked or
 * renamed into place (which replace a name, never write through it).
 *
 * A record is stale when its process is gone, is a zombie, or is a live process that is not the
 * runtime that wrote it (the pid was reused: its start time in /proc differs). Stale records are
 * ignored and replaced by the next `serve` of that name.
 */
import { randomBytes } from "node:crypto";
import { chmodSync, closeSync, fstatSync, linkSync, lstatSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, rmSync, writeSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { BodylinkError } from "../errors.js";
import { checkName } from "../fleet/subjects.js";

export interface RuntimeRecord {
  /** Unique among this user's runtimes on this machine; also the robot's name in a fleet. */
  readonly name: string;
  readonly pid: number;
  /** The process's start time (field 22 of /proc/PID/stat, clock ticks since boot); null off Linux. */
  readonly procStart: string | null;
  readonly body: string;
  /** "sim" or "usb" (NAO), "sim" or "tny:HOST" (TNY-360). */
  readonly transport: string;
  readonly apiUrl: string | null;
  readonly lolaPath: string | null;
  readonly tnyUrl: string | null;
  /** The local e-stop socket (serve/estop-socket.ts), which `bodylink estop` tries before the API; null or absent when none. */
  readonly estopPath?: string | null;
  /** The NATS server this runtime joined (`serve --fleet`), credentials stripped; null when none. */
  readonly fleetUrl?: string | null;
  readonly startedAt: string;
}

/** What `recordStatus` says of a record's process. */
export type RecordStatus = "live" | "gone" | "zombie" | "other-process";

// Robot names are also NATS subject tokens: the rule lives with the fleet's subjects.
export { checkName, NAME_PATTERN } from "../fleet/subjects.js";

const uid = (): number | null => process.getuid?.() ?? null;

/** The directory's path (nothing is created or checked). */
export function runtimeDir(): string {
  if (process.env.BODYLINK_RUNTIME_DIR) return process.env.BODYLINK_RUNTIME_DIR;
  if (process.env.XDG_RUNTIME_DIR) return join(process.env.XDG_RUNTIME_DIR, "bodylink");
  return join(tmpdir(), `bodylink-${uid() ?? "user"}`);
}

/**
 * Check the directory (and create it, 0700, when `create`): refuse a symlink, a non-directory, or
 * one owned by another user; tighten our own to 0700. Returns the path, or null when it does not
 * exist and `create` is false.
 */
export function checkRuntimeDir(create: boolean): string | null {
  const dir = runtimeDir();
  let st = lstatOrNull(dir);
  if (!st) {
    if (!create) return null;
    try {
      // Only the bodylink directory itself is made 0700 here; BODYLINK_RUNTIME_DIR's parents are
      // the caller's business (tests point it into a fresh temporary directory).
      mkdirSync(dir, { mode: 0o700, recursive: Boolean(process.env.BODYLINK_RUNTIME_DIR) });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw new BodylinkError("BL_ERR_RUNTIME_DIR", dir, `cannot be created: ${(e as Error).message}`);
    }
    st = lstatOrNull(dir);
    if (!st) throw new BodylinkError("BL_ERR_RUNTIME_DIR", dir, "vanished while it was created");
  }
  if (st.isSymbolicLink()) throw new BodylinkError("BL_ERR_RUNTIME_DIR", dir, "is a symlink");
  if (!st.isDirectory()) throw new BodylinkError("BL_ERR_RUNTIME_DIR", dir, "is not a directory");
  const me = uid();
  if (me !== null && st.uid !== me) throw new BodylinkError("BL_ERR_RUNTIME_DIR", dir, `is owned by uid ${st.uid}, not by you (uid ${me})`);
  if ((st.mode & 0o077) !== 0) chmodSync(dir, 0o700);
  return dir;
}

function lstatOrNull(p: string) {
  try {
    return lstatSync(p);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw e;
  }
}

/** Field 3 (state) and 22 (start time) of /proc/PID/stat, or null when the process is gone. */
function procStat(pid: number): { state: string; start: string } | null | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ESRCH") return existsProc() ? null : undefined;
    return undefined;
  }
  // "pid (comm) S ppid …": comm may hold spaces and parentheses, so split after the last ")".
  const rest = text.slice(text.lastIndexOf(")") + 2).split(" ");
  return { state: rest[0] ?? "?", start: rest[19] ?? "" };
}

let procMounted: boolean | undefined;
function existsProc(): boolean {
  procMounted ??= lstatOrNull("/proc/self/stat") !== null;
  return procMounted;
}

/** This process's start time, as `procStart` records it. */
export function ownProcStart(): string | null {
  return procStat(process.pid)?.start ?? null;
}

/** Whether the record's runtime is still running: its pid alive, not a zombie, and the same process. */
export function recordStatus(r: Pick<RuntimeRecord, "pid" | "procStart">): RecordStatus {
  if (!Number.isInteger(r.pid) || r.pid <= 0) return "gone";
  const st = procStat(r.pid);
  if (st === null) return "gone";
  if (st === undefined) {
    // No /proc (macOS): signal 0 says whether the pid exists, nothing more.
    try {
      process.kill(r.pid, 0);
      return "live";
    } catch (e) {
      return (e as NodeJS.ErrnoException).code === "EPERM" ? "live" : "gone";
    }
  }
  if (st.state === "Z" || st.state === "X") return "zombie";
  if (r.procStart !== null && r.procStart !== st.start) return "other-process";
  if (r.procStart === null && !/bodylink/.test(cmdline(r.pid))) return "other-process";
  return "live";
}

function cmdline(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").replace(/\0/g, " ");
  } catch {
    return "";
  }
}

const recordFile = (dir: string, name: string) => join(dir, `${name}.json`);

function parseRecord(text: string): RuntimeRecord | null {
  try {
    const r = JSON.parse(text) as Partial<RuntimeRecord>;
    if (typeof r.name !== "string" || typeof r.pid !== "number" || typeof r.body !== "string") return null;
    return { procStart: null, transport: "?", apiUrl: null, lolaPath: null, tnyUrl: null, startedAt: "", ...r } as RuntimeRecord;
  } catch {
    return null;
  }
}

/** Read one record file without following a symlink; null when absent, unreadable or not ours. */
function readRecordFile(path: string): RuntimeRecord | null {
  const st = lstatOrNull(path);
  if (!st?.isFile()) return null;
  const me = uid();
  if (me !== null && st.uid !== me) return null;
  try {
    return parseRecord(readFileSync(path, "utf8"));
  } catch {
    return null;
  }
}

/** Every live runtime of this user on this machine, by name. Stale records are left alone. */
export function listRuntimes(): RuntimeRecord[] {
  const dir = checkRuntimeDir(false);
  if (!dir) return [];
  const out: RuntimeRecord[] = [];
  for (const f of readdirSync(dir).sort()) {
    if (!f.endsWith(".json") || f.startsWith(".")) continue;
    const r = readRecordFile(join(dir, f));
    if (r && r.name === f.slice(0, -5) && recordStatus(r) === "live") out.push(r);
  }
  return out;
}

/** The live runtime named `name`, or null. */
export function findRuntime(name: string): RuntimeRecord | null {
  return listRuntimes().find((r) => r.name === name) ?? null;
}

/**
 * The runtime a CLI command talks to: the one named by --robot, else the only one running. Throws
 * a clear error when none runs, the name is unknown, or several run and none was chosen.
 */
export function chooseRuntime(robot?: string): RuntimeRecord {
  const all = listRuntimes();
  if (robot !== undefined) {
    const r = all.find((x) => x.name === robot);
    if (r) return r;
    throw new BodylinkError("BL_ERR_CLI_NO_SUCH_ROBOT", robot, all.length ? all.map((x) => x.name).join(", ") : "none");
  }
  if (all.length === 1) return all[0]!;
  if (all.length === 0) throw new BodylinkError("BL_ERR_CLI_NOT_RUNNING");
  throw new BodylinkError("BL_ERR_CLI_WHICH_ROBOT", all.length, all.map((x) => x.name).join(", "));
}

/** Names this process recorded, so `removeRuntimeRecord()` can remove them on exit. */
const ownNames = new Set<string>();

/**
 * Record a runtime under `r.name`. Refuses (BL_ERR_RUNTIME_NAME_TAKEN) while a live runtime holds
 * the name and (BL_ERR_RUNTIME_DIR) when the record's path is a symlink or not ours; replaces a
 * stale record.
 */
export function writeRuntime(r: RuntimeRecord): void {
  const problem = checkName(r.name);
  if (problem) throw new BodylinkError("BL_ERR_CMD_INVALID", problem);
  const dir = checkRuntimeDir(true)!;
  const tmp = writeTemp(dir, r);
  try {
    claim(tmp, recordFile(dir, r.name), r.name);
  } finally {
    rmSync(tmp, { force: true });
  }
  ownNames.add(r.name);
}

/** Replace this process's own record of `r.name` (e.g. once the servers' URLs are known). */
export function updateRuntime(r: RuntimeRecord): void {
  const dir = checkRuntimeDir(true)!;
  const final = recordFile(dir, r.name);
  const cur = readRecordFile(final);
  if (!ownNames.has(r.name) || !cur || cur.pid !== process.pid) throw new BodylinkError("BL_ERR_RUNTIME_NAME_TAKEN", r.name, "its record is no longer this process's");
  const tmp = writeTemp(dir, r);
  try {
    renameSync(tmp, final); // replaces the name in one step; never writes through a symlink
  } finally {
    rmSync(tmp, { force: true });
  }
}

/** The record in a fresh file of its own, 0600. "wx" is O_CREAT|O_EXCL: it fails on any existing path, a symlink included. */
function writeTemp(dir: string, r: RuntimeRecord): string {
  const tmp = join(dir, `.${r.name}.${process.pid}.${randomBytes(6).toString("hex")}.tmp`);
  const fd = openSync(tmp, "wx", 0o600);
  try {
    writeSync(fd, `${JSON.stringify(r, null, 2)}\n`);
    if ((fstatSync(fd).mode & 0o077) !== 0) throw new BodylinkError("BL_ERR_RUNTIME_DIR", dir, "gave the record loose permissions");
  } catch (e) {
    closeSync(fd);
    rmSync(tmp, { force: true });
    throw e;
  }
  closeSync(fd);
  return tmp;
}

function claim(tmp: string, final: string, name: string): void {
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      linkSync(tmp, final); // atomic: fails when the name exists, so two runtimes cannot both take it
      return;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
    }
    const st = lstatOrNull(final);
    if (!st) continue; // removed meanwhile: try the link again
    if (st.isSymbolicLink()) throw new BodylinkError("BL_ERR_RUNTIME_DIR", final, "is a symlink; remove it (someone may have planted it)");
    if (!st.isFile()) throw new BodylinkError("BL_ERR_RUNTIME_DIR", final, "is not a regular file");
    const me = uid();
    if (me !== null && st.uid !== me) throw new BodylinkError("BL_ERR_RUNTIME_DIR", final, `is owned by uid ${st.uid}`);
    const old = readRecordFile(final);
    if (old && recordStatus(old) === "live") {
      throw new BodylinkError("BL_ERR_RUNTIME_NAME_TAKEN", name, `pid ${old.pid}, ${old.body} on ${old.transport}, API ${old.apiUrl ?? "none"}`);
    }
    renameSync(tmp, final); // stale (or unreadable): replace it in one step
    return;
  }
  throw new BodylinkError("BL_ERR_RUNTIME_DIR", final, "kept changing while the record was written");
}

/**
 * Remove this process's runtime record(s): `name`'s, or every one this process wrote. Only a
 * record that is still this process's is removed (a later runtime may have replaced a stale one).
 * Synchronous, so exit and signal handlers can call it; never throws.
 */
export function removeRuntimeRecord(name?: string): void {
  const dir = (() => {
    try {
      return checkRuntimeDir(false);
    } catch {
      return null;
    }
  })();
  const names = name === undefined ? [...ownNames] : [name];
  for (const n of names) {
    ownNames.delete(n);
    if (!dir) continue;
    const path = recordFile(dir, n);
    const r = readRecordFile(path);
    if (r && r.pid === process.pid) rmSync(path, { force: true });
  }
}

/** A name for `serve` without --name: the body and this host, with -2, -3 … while taken. */
export function defaultName(body: string, taken: ReadonlySet<string> = new Set(listRuntimes().map((r) => r.name))): string {
  const host =
    hostname()
      .split(".")[0]!
      .toLowerCase()
      .replace(/[^a-z0-9_-]/g, "-")
      .replace(/^-+/, "")
      .slice(0, 40) || "host";
  const base = `${body}-${host}`;
  if (!taken.has(base)) return base;
  for (let i = 2; ; i++) if (!taken.has(`${base}-${i}`)) return `${base}-${i}`;
}

/** What CLI commands take to choose a runtime: --url, or --robot NAME, or neither when exactly one runs. */
export interface TargetOptions {
  url?: string;
  robot?: string;
}

/**
 * The robot API base URL a CLI command talks to. With `required` false, null when no runtime runs
 * (prefs and boards then open the chest board themselves); several without --robot is an error.
 */
export function apiUrlFor(o: TargetOptions, required = true): string | null {
  if (o.url) return o.url.replace(/\/$/, "");
  if (o.robot === undefined && !required && listRuntimes().length === 0) return null;
  const r = chooseRuntime(o.robot);
  if (!r.apiUrl) throw new BodylinkError("BL_ERR_CLI_NO_RUNTIME", `${r.name} (it serves no robot API yet)`);
  return r.apiUrl;
}
