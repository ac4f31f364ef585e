/**
 * The LoLA-compatible socket server (docs/lola.md): existing
 * RoboCup software (B-Human, HULKs/HULA, nidhogg, nao_lola) connects to bodylink instead of LoLA.
 *
 * - A Unix stream socket, `/tmp/robocup` by default. A stale socket file (nobody accepting on it)
 *   is replaced; a live one, or a path that is not a socket, is a clear start-up error. The file
 *   is removed on close (and on process exit as a last resort).
 * - Every client gets the first 896-byte sensor message right after accept, then one per cycle
 *   (`robot.onCycle`). A client that does not read fast enough loses frames: a frame is written
 *   only when nothing is pending for that client, so the runtime never waits and never queues.
 * - ONE controlling client, like LoLA: the first to connect while the slot is free. Its commands
 *   go through the runtime's shared {@link Authority} as source "lola", owner "lola:client#N". Each
 *   command acquires the lease if nobody holds it, or renews it; the lease lasts `graceMs`. A
 *   silent client therefore keeps its last command for `graceMs`, then the lease expires and the
 *   runtime ramps stiffness to 0 (NaoRobot's safety rule). A disconnect releases the lease at
 *   once (same ramp). When commands resume, control is re-acquired if nobody else took it; after
 *   a revocation (emergency stop) only a new connection takes control again.
 * - Optional read-only clients (`readers`), which LoLA cannot do: they get every sensor message;
 *   bytes they send are ignored (logged once). Roles are fixed at accept: a reader is never
 *   promoted; after the controller leaves, the next new connection controls. While the
 *   controlling slot is taken, a new connection's role is decided 25 ms after accept, so a
 *   client that hangs up and reconnects at once is not refused because its old connection's
 *   close had not been processed yet.
 * - A client beyond those slots is refused: it receives one MessagePack map `{"Error": reason}`
 *   (shorter than 896 bytes, so `read_exact(896)` clients see an EOF) and the connection is
 *   closed; the server logs the same reason.
 * - Undecodable command bytes drop that client with one log line (see LolaCommandReader);
 *   per-key problems are logged once per distinct reason per client. Nothing a client sends
 *   throws into the runtime.
 *
 * Prepare side: accept, close, logging, bad input (allocate freely). Perform side, allocation-free
 * in steady state where Node allows (the server runs on the real-time core's thread; measured by
 * `npm run bench -- core-gc`):
 * - the per-cycle listener writes the sensor message in place and copies it into each client's
 *   own 896-byte buffer (a pending write must not see the next cycle's values), written with one
 *   `write(2)` on the socket's descriptor (`fs.writeSync`, ~60 bytes of JS garbage, against ~220
 *   for `socket.write` and its request object); a frame the kernel does not take whole goes to
 *   `socket.write`, which queues the rest, and frames are dropped until it is flushed;
 * - a client's bytes are read into its own 16 KiB buffer (`onread`: no Buffer, no external memory,
 *   no stream machinery per read; Node 20's server has no such option for accepted connections,
 *   so a `net.Socket` is built on each accepted handle) and decoded in place
 *   (`LolaCommandReader` with `reuseUpdate`);
 * - with `pollCommands` (the NAO's core always: on the simulated chest board, USB or an upstream
 *   LoLA), the controlling client's socket is not watched by the event loop at all:
 *   `pollCommands()` reads it with one read(2) at the start of each cycle, so its answer costs the
 *   thread no wake-up or event-loop turn of its own (it lands in the same cycle either way: the
 *   cycle after the message it answers). A controller that sends nothing costs that read an
 *   EAGAIN (a thrown error) per cycle; LoLA clients answer every message.
 */
import { lstat, stat, unlink } from "node:fs/promises";
import { chmodSync, chownSync, mkdtempSync, readFileSync, readSync, renameSync, rmdirSync, rmSync, unlinkSync, writeSync } from "node:fs";
import { dirname, join } from "node:path";
import { isMainThread } from "node:worker_threads";
import { type Server, Socket, connect, createServer } from "node:net";
import { pack } from "msgpackr";
import type { NaoRobot } from "../../runtime/nao-robot.js";
import type { Lease, LeaseInfo } from "../../runtime/authority.js";
import { MAX_LEASE_MS, MIN_LEASE_MS } from "../../runtime/authority.js";
import { BodylinkError } from "../../errors.js";
import { escapeForLog } from "../log.js";
import { LolaCommandReader, type LolaCommandProblem, type LolaCommandUpdate } from "../../wire/lola/command-reader.js";
import { LOLA_SENSOR_MESSAGE_BYTES, LOLA_SOCKET_PATH } from "../../wire/lola/constants.js";
import type { LolaTap } from "../../record/tap.js";
import { LolaConfigError, type LolaRobotConfig, LolaSensorWriter, normalizeLolaRobotConfig } from "../../wire/lola/sensor-message.js";

/** Default grace period: about 8 cycles of 12 ms. Long enough for a GC pause, short enough to be safe. */
export const DEFAULT_LOLA_GRACE_MS = 100;
/** At most this many distinct problem messages are remembered (and logged) per client. */
const MAX_DISTINCT_PROBLEMS = 32;
/** When the controlling slot is taken at accept, the decision (reader or refused) waits this long. */
const ADMIT_RECHECK_MS = 25;
/** On close, a client is given this long to take its last sensor message before its socket is destroyed. */
const FINAL_FRAME_LINGER_MS = 200;
/**
 * A dying core (sendFinalFrame) gives a client whose socket is full, or whose previous message is
 * still queued, this long to take its last sensor message: the body is already in its safe state,
 * only the thread's exit (and serve's one line) waits. Longer than the close's linger: a dying core
 * has nothing else to do, and the message is the one that says what the body was left in.
 */
export const FINAL_FRAME_WAIT_MS = 1000;
/** A refused client is given this long to read its error and close, then it is closed. */
const REFUSE_LINGER_MS = 1000;
/**
 * With pollCommands: when no cycle polled the controlling client for this long (the body's loop is
 * stopped, or stalls), a timer reads it instead, so a client is never left blocked on a full socket.
 */
const POLL_FALLBACK_MS = 250;
/** Each client's read buffer: a read takes at most this much (a full command is 786 bytes; the reader reassembles). */
const READ_BUFFER_BYTES = 16 * 1024;

/** What the LoLA server needs from the runtime. `NaoRobot` satisfies it. */
export type LolaRobot = Pick<NaoRobot, "state" | "authority" | "clock" | "command" | "onCycle" | "prefs">;

export type LolaLogLevel = "info" | "warn";
export type LolaLog = (level: LolaLogLevel, message: string) => void;

/** {@link readNow}: nothing to read now (EAGAIN). */
const READ_AGAIN = -1;
/** {@link readNow}: the read failed; the error is in `readError`. */
const READ_FAILED = -2;
let readError: NodeJS.ErrnoException | null = null;

/**
 * One non-blocking read(2) of a polled client's socket: the bytes read, 0 at its end, READ_AGAIN
 * or READ_FAILED. Node says "nothing there" only by throwing, so the throw stays in this small
 * function: each IC a first catch initialises restarts V8's count towards optimising the function
 * that holds it, and `poll` (every cycle, large) stayed in baseline code in the proxy's core
 * (docs/performance.md, 2026-12-04). The Error is made without a stack: a controller that skips
 * frames would pay a stack capture per cycle.
 */
function readNow(fd: number, into: Buffer): number {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    return readSync(fd, into, 0, into.length, null);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === "EAGAIN" || code === "EWOULDBLOCK") return READ_AGAIN;
    readError = e as NodeJS.ErrnoException;
    return READ_FAILED;
  } finally {
    Error.stackTraceLimit = limit;
  }
}

export interface LolaServerOptions {
  /** Socket path. Defaults to `/tmp/robocup`, where LoLA clients look. */
  path?: string;
  /** Read-only clients allowed besides the controlling one. Defaults to 0 (LoLA serves one client). */
  readers?: number;
  /**
   * Grace period, ms: how long a silent controlling client keeps its last command in force (its
   * lease duration, renewed by every command). Defaults to 100 (about 8 cycles); 50..60000.
   */
  graceMs?: number;
  /**
   * RobotConfig strings. Defaults: body id and body version from the robot's preference block
   * (`robot.prefs`, so start the robot first), head id "P0000000000000000000" and head version
   * "6.0.0" (the head's own ids are not in the body's preferences). Given fields win.
   */
  robotConfig?: Partial<LolaRobotConfig>;
  /**
   * Where RobotConfig comes from when the robot is identified only later (an upstream LoLA's
   * messages): polled every cycle; a different object rewrites the strings in place (same lengths,
   * so the layout never changes; short strings padded as below). Fields given in `robotConfig` win.
   * Defaults to none.
   */
  robotConfigSource?: () => Partial<LolaRobotConfig> | null;
  /**
   * Send sensor messages only while the state is valid (the body link delivers): before the body's
   * first state, and while the link is lost, clients receive nothing, as from a LoLA that stalls,
   * rather than zeros or stale values. Defaults to false (a message every cycle, from accept on).
   */
  holdUntilValid?: boolean;
  /**
   * Read the controlling client's commands only when `LolaServer.pollCommands()` is called (the
   * caller calls it at the start of every cycle), not as they arrive: its socket is not watched by
   * the event loop, so the thread does not wake or turn its loop for it. For a runtime that reads
   * its inputs at the start of every cycle (the NAO's core): a command then lands in the same
   * cycle as it would have. Defaults to false (read as it arrives).
   */
  pollCommands?: boolean;
  /**
   * Called for every command the controlling client sends, after it is applied (lockstep: its
   * answer lets simulated time run the next cycle; runtime/lockstep.ts). Defaults to none.
   */
  onControllerCommand?: () => void;
  /** Pad RobotConfig strings shorter than 20/5 characters with spaces (logged). Defaults to true; false fails instead. */
  padRobotConfig?: boolean;
  /** Where log lines go. Defaults to stderr, prefixed "LoLA server:". */
  log?: LolaLog;
  /**
   * Sees every sensor message as written (once per cycle, whether or not a client is connected)
   * and every chunk of bytes a client sent, as received (the recorder's tap). Defaults to none.
   */
  tap?: LolaTap;
  /**
   * A group (name from /etc/group, or a numeric gid) that may use the socket too: mode 0660 and that
   * group. Default: none, mode 0600 (this user only), whatever the umask.
   */
  group?: string | number;
}

export type LolaClientRole = "controller" | "reader";

export interface LolaClientInfo {
  /** "lola:client#N", also the lease owner of a controller. */
  readonly name: string;
  readonly role: LolaClientRole;
  /** Runtime clock, ms. */
  readonly connectedAtMs: number;
  readonly framesSent: number;
  /** Frames skipped because the client had not taken the previous one yet. */
  readonly framesDropped: number;
  readonly commands: number;
  /** Commands that arrived while control was held by someone else (not applied). */
  readonly commandsIgnored: number;
  /** Keys rejected so far (wrong length, wrong type, NaN, unknown). */
  readonly keyProblems: number;
  /** True while this client holds the control lease. */
  readonly hasControl: boolean;
}

export interface LolaServer {
  /** The socket path actually served. */
  readonly path: string;
  /** The RobotConfig strings every message carries (they change when `robotConfigSource` does). */
  readonly robotConfig: LolaRobotConfig;
  readonly graceMs: number;
  readonly readers: number;
  /** Connected clients, controller first. */
  clients(): LolaClientInfo[];
  /** Stop accepting, release control, close every client, remove the socket file. Idempotent. */
  close(): Promise<void>;
  /**
   * A dying core's last words (src/rt/core-worker.ts), after the body's safe frame went out: every
   * client gets a sensor message of the state as it is now (stiffness 0), so that it is the last
   * one before the client's EOF. Written synchronously where the client's socket takes it whole;
   * behind a message still queued, or into a full socket (EAGAIN), it is queued and waited for,
   * up to `waitMs` (default FINAL_FRAME_WAIT_MS), since the thread's exit would drop what Node
   * still holds. Resolves with how many clients it reached whole (in the kernel's buffer).
   */
  sendFinalFrame(waitMs?: number): Promise<number>;
  /**
   * Perform side, with the `pollCommands` option: read what the controlling client sent since the
   * last call (one read(2) on its descriptor; more only while the buffer fills) and apply it now.
   * Nothing without that option.
   */
  pollCommands(): void;
}

const EMPTY = Buffer.alloc(0);

const defaultLog: LolaLog = (level, message) => {
  console.error(`LoLA server: ${level === "warn" ? "warning: " : ""}${message}`);
};

class Client {
  readonly name: string;
  readonly out = Buffer.alloc(LOLA_SENSOR_MESSAGE_BYTES);
  /** Its read buffer (what a read brought is valid until the next read). */
  inbox: Buffer = EMPTY;
  /** Read by `pollCommands()`, not by the event loop. */
  polled = false;
  readonly reader: LolaCommandReader | null;
  /** The socket's descriptor for direct writes, or -1 (none: every frame goes through socket.write). */
  readonly fd: number;
  /** Bound once: the reader's per-message listener (no closure per read). */
  onMessage: (update: LolaCommandUpdate, problems: LolaCommandProblem[]) => void = () => {};
  lease: Lease | null = null;
  framesSent = 0;
  framesDropped = 0;
  /** Frames dropped since the last one that went out (to log the start and end of a stall once). */
  dropRun = 0;
  commands = 0;
  commandsIgnored = 0;
  keyProblems = 0;
  ignoredBytesLogged = false;
  /** Times control expired for silence, and times it was (re)gained: logged at 1, 10, 100, … */
  expiries = 0;
  grants = 0;
  /** Control was revoked (emergency stop): this connection does not take it again. */
  revoked = false;
  readonly problemsSeen = new Map<string, number>();
  closed = false;

  constructor(
    readonly id: number,
    readonly role: LolaClientRole,
    readonly socket: Socket,
    readonly connectedAtMs: number,
  ) {
    this.name = `lola:client#${id}`;
    this.reader = role === "controller" ? new LolaCommandReader({ reuseUpdate: true }) : null;
    const fd = (socket as unknown as { _handle?: { fd?: unknown } | null })._handle?.fd;
    this.fd = typeof fd === "number" && fd >= 0 ? fd : -1;
  }
}

/**
 * Start serving LoLA for `robot`. Resolves once the socket is listening. Throws a
 * {@link BodylinkError} (`BL_ERR_LOLA_SOCKET`, `BL_ERR_LOLA_CONFIG`) with what to change.
 */
export async function startLolaServer(robot: LolaRobot, opts: LolaServerOptions = {}): Promise<LolaServer> {
  const path = opts.path ?? LOLA_SOCKET_PATH;
  const readers = opts.readers ?? 0;
  const graceMs = opts.graceMs ?? DEFAULT_LOLA_GRACE_MS;
  const log = opts.log ?? defaultLog;
  if (!Number.isInteger(readers) || readers < 0 || readers > 64) {
    throw new BodylinkError("BL_ERR_LOLA_SOCKET", path, `readers must be an integer 0..64, got ${readers}`);
  }
  if (!Number.isFinite(graceMs) || graceMs < MIN_LEASE_MS || graceMs > MAX_LEASE_MS) {
    throw new BodylinkError("BL_ERR_LOLA_SOCKET", path, `graceMs must be ${MIN_LEASE_MS}..${MAX_LEASE_MS} ms, got ${graceMs}`);
  }

  let writer: LolaSensorWriter;
  try {
    const { config, notes } = normalizeLolaRobotConfig(
      { bodyId: robot.prefs?.bodyId, bodyVersion: robot.prefs?.bodyVersion, ...definedOnly(opts.robotConfig) },
      { padShort: opts.padRobotConfig ?? true },
    );
    for (const n of notes) log("warn", n);
    if (opts.robotConfigSource) log("info", "RobotConfig follows the body link (an upstream LoLA's own) once it names the robot");
    else if (!robot.prefs && !opts.robotConfig?.bodyId) log("warn", "the robot's preferences are not read yet (start the robot first): RobotConfig carries the default body id");
    writer = new LolaSensorWriter(config);
  } catch (e) {
    if (e instanceof LolaConfigError) throw new BodylinkError("BL_ERR_LOLA_CONFIG", `${e.message} (set it with the robotConfig option)`);
    throw e;
  }

  await checkSocketPath(path);
  const gid = opts.group === undefined ? null : groupId(opts.group, path);
  const mode = gid === null ? 0o600 : 0o660;
  await clearStaleSocket(path);
  // Paused: nothing is read into a stream buffer before a connection's role is decided and its
  // socket rebuilt with its own read buffer (#admit).
  const server = createServer({ allowHalfOpen: false, pauseOnConnect: true });
  const state = new ServerState(robot, server, writer, path, readers, graceMs, log, opts.tap ?? null);
  state.holdUntilValid = opts.holdUntilValid ?? false;
  state.pollCommands = opts.pollCommands ?? false;
  state.onControllerCommand = opts.onControllerCommand ?? null;
  if (opts.robotConfigSource) {
    const source = opts.robotConfigSource;
    const overrides = definedOnly(opts.robotConfig);
    const pad = opts.padRobotConfig ?? true;
    state.followRobotConfig(source, (c) => normalizeLolaRobotConfig({ ...definedOnly(c), ...overrides }, { padShort: pad }));
  }
  // A worker thread (the threaded real-time core) cannot set the umask: there the socket is bound
  // in a fresh 0700 directory beside `path`, given its mode, and renamed into place, so it never
  // exists at `path` with a wider mode either.
  const staging = isMainThread ? null : mkdtempSync(join(dirname(path), ".bodylink-lola-"));
  const bindPath = staging ? join(staging, "s") : path;
  await new Promise<void>((resolve, reject) => {
    const onError = (e: NodeJS.ErrnoException) => {
      const why = e.code === "EACCES" ? `no permission to create a socket in ${dirname(path)}` : `${e.code ?? ""} ${e.message}`.trim();
      reject(new BodylinkError("BL_ERR_LOLA_SOCKET", path, `${why}; choose another path (--lola-path)`));
    };
    server.once("error", onError);
    // The bind is synchronous inside listen(): a umask around it means the socket never exists with
    // a wider mode, even for a moment; chmod/chown below then set it exactly (docs/security.md).
    const umask = staging ? -1 : process.umask(0o777 & ~mode);
    try {
      server.listen(bindPath, () => {
        server.off("error", onError);
        resolve();
      });
    } finally {
      if (!staging) process.umask(umask);
    }
  }).catch((e: unknown) => {
    if (staging) rmSync(staging, { recursive: true, force: true });
    throw e;
  });
  try {
    if (gid !== null) chownSync(bindPath, -1, gid);
    chmodSync(bindPath, mode);
    if (staging) {
      renameSync(bindPath, path);
      rmdirSync(staging);
    }
  } catch (e) {
    server.close();
    if (staging) rmSync(staging, { recursive: true, force: true });
    throw new BodylinkError("BL_ERR_LOLA_SOCKET", path, `cannot set its mode ${mode.toString(8)}${gid !== null ? ` and group ${opts.group}` : ""}: ${(e as Error).message}`);
  }
  state.attach();
  log(
    "info",
    `serving LoLA on ${path} (1 controlling client, ${readers} read-only; grace ${graceMs} ms; RobotConfig ${writer.robotConfig.bodyId} ${writer.robotConfig.bodyVersion} ${writer.robotConfig.headId} ${writer.robotConfig.headVersion})`,
  );
  return {
    path,
    get robotConfig() {
      return writer.robotConfig;
    },
    graceMs,
    readers,
    clients: () => state.info(),
    close: () => state.close(),
    sendFinalFrame: (waitMs) => state.sendFinalFrame(waitMs),
    pollCommands: () => state.poll(),
  };
}

/**
 * `accepted` rebuilt to read into `buffer` (Node's `onread`: `onRead(n)` gets each read's length,
 * no Buffer is made), or null if it is gone. Node 20's `net.Server` has no `onread` for the
 * connections it accepts, so a `net.Socket` is built on the accepted handle (`new net.Socket({
 * handle, onread })`, how Node builds its own sockets); the accepted socket object is dropped
 * without closing the handle it gave away, and the new one is counted as the server's connection
 * (its close decrements it, so `server.close()` still waits for it). The server accepts paused, so
 * nothing was read before. test/lola/server.test.ts checks the bytes both ways.
 */
function withReadBuffer(accepted: Socket, server: Server, buffer: Buffer, onRead: (n: number) => void, paused = false): Socket | null {
  const internals = accepted as unknown as { _handle: object | null; _server: Server | null };
  const handle = internals._handle;
  if (!handle || accepted.destroyed) return null;
  accepted.removeAllListeners();
  internals._handle = null;
  internals._server = null;
  // `paused` (pollCommands): the handle never starts reading; the caller reads the descriptor itself.
  const s = new Socket({ handle, allowHalfOpen: false, pauseOnCreate: paused, onread: { buffer, callback: (n: number) => void onRead(n) } } as ConstructorParameters<typeof Socket>[0]);
  const own = s as unknown as { _server: Server | null; server: Server | null };
  own._server = server;
  own.server = server;
  return s;
}

/** A group's id from a number or a name in /etc/group. */
function groupId(group: string | number, path: string): number {
  if (typeof group === "number" || /^\d+$/.test(group)) return Number(group);
  let text = "";
  try {
    text = readFileSync("/etc/group", "utf8");
  } catch {
    // no /etc/group: only numeric gids work
  }
  for (const line of text.split("\n")) {
    const [name, , gid] = line.split(":");
    if (name === group && gid !== undefined && /^\d+$/.test(gid)) return Number(gid);
  }
  throw new BodylinkError("BL_ERR_LOLA_SOCKET", path, `no group ${JSON.stringify(group)} in /etc/group; give its name or gid (--lola-group)`);
}

/** 1, 10, 100, …: how often a repeating event is logged. */
function isLogCount(n: number): boolean {
  while (n >= 10 && n % 10 === 0) n /= 10;
  return n === 1;
}

function definedOnly(c: Partial<LolaRobotConfig> | undefined): Partial<LolaRobotConfig> {
  const out: Partial<Record<keyof LolaRobotConfig, string>> = {};
  if (!c) return out;
  for (const k of ["bodyId", "bodyVersion", "headId", "headVersion"] as const) if (c[k] !== undefined) out[k] = c[k];
  return out;
}

/**
 * The longest Unix socket path the kernel takes, in bytes: sun_path holds 108 on Linux (104 on
 * the BSDs and macOS) with the terminating NUL. Node cuts a longer path silently and serves on the
 * cut one, so it is refused here instead.
 */
export const MAX_SOCKET_PATH_BYTES = process.platform === "linux" ? 107 : 103;

/** Refuse a path the kernel would cut, or whose directory is missing (listen says EACCES for that). */
async function checkSocketPath(path: string): Promise<void> {
  const bytes = Buffer.byteLength(path);
  if (bytes > MAX_SOCKET_PATH_BYTES) {
    throw new BodylinkError("BL_ERR_LOLA_SOCKET", path, `the path is ${bytes} bytes, longer than a Unix socket path can be (${MAX_SOCKET_PATH_BYTES}); choose a shorter one (--lola-path)`);
  }
  const dir = dirname(path);
  let why: string | null = null;
  try {
    if (!(await stat(dir)).isDirectory()) why = `${dir} is not a directory`;
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === "ENOENT") why = `the directory ${dir} does not exist`;
    else if (code === "ENOTDIR") why = `${dir} is not a directory`;
    // anything else (EACCES on a parent): listen reports it
  }
  if (why) throw new BodylinkError("BL_ERR_LOLA_SOCKET", path, `${why}; create it or choose another path (--lola-path)`);
}

/** Remove a socket file nobody accepts on; refuse to touch a live socket or a non-socket. */
async function clearStaleSocket(path: string): Promise<void> {
  let st: Awaited<ReturnType<typeof lstat>>;
  try {
    st = await lstat(path);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return;
    throw new BodylinkError("BL_ERR_LOLA_SOCKET", path, (e as Error).message);
  }
  if (!st.isSocket()) {
    throw new BodylinkError("BL_ERR_LOLA_SOCKET", path, "the path exists and is not a socket; remove it or choose another path (--lola-path)");
  }
  const live = await new Promise<boolean>((resolve) => {
    const probe = connect(path);
    probe.once("connect", () => {
      probe.destroy();
      resolve(true);
    });
    probe.once("error", () => resolve(false));
  });
  if (live) {
    throw new BodylinkError(
      "BL_ERR_LOLA_SOCKET",
      path,
      "another server (LoLA itself, or another bodylink) is accepting on it; stop it (`systemctl stop lola` on a robot) or choose another path (--lola-path)",
    );
  }
  try {
    await unlink(path);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "ENOENT") throw new BodylinkError("BL_ERR_LOLA_SOCKET", path, `stale socket file cannot be removed: ${(e as Error).message}`);
  }
}

class ServerState {
  /** Controller first (when there is one), then readers. Iterated every cycle without allocation. */
  readonly #clients: Client[] = [];
  /** Sockets not (or no longer) clients: waiting for a role, or refused and closing. */
  readonly #lingering = new Set<Socket>();
  #controller: Client | null = null;
  #nextId = 1;
  #closing: Promise<void> | null = null;
  #unsubscribe: (() => void) | null = null;
  #listenerErrors = 0;
  /** See LolaServerOptions.holdUntilValid. */
  holdUntilValid = false;
  /** See LolaServerOptions.onControllerCommand. */
  onControllerCommand: (() => void) | null = null;
  /** See LolaServerOptions.pollCommands. */
  pollCommands = false;
  /** When a cycle (or the fallback) last polled, performance.now() ms: wall time, whatever the robot's clock. */
  readonly #polledAtMs = Float64Array.of(0);
  #pollFallback: ReturnType<typeof setInterval> | null = null;
  #configSource: (() => Partial<LolaRobotConfig> | null) | null = null;
  #configNormalize: ((c: Partial<LolaRobotConfig>) => { config: LolaRobotConfig; notes: string[] }) | null = null;
  #configSeen: Partial<LolaRobotConfig> | null = null;

  constructor(
    readonly robot: LolaRobot,
    readonly server: Server,
    readonly writer: LolaSensorWriter,
    readonly path: string,
    readonly maxReaders: number,
    readonly graceMs: number,
    readonly log: LolaLog,
    readonly tap: LolaTap | null,
  ) {}

  readonly #onExit = (): void => {
    try {
      unlinkSync(this.path);
    } catch {
      // already gone
    }
  };

  readonly #onReleased = (info: LeaseInfo, why: "released" | "expired" | "revoked"): void => {
    const c = this.#controller;
    if (c?.lease?.id !== info.id) return;
    c.lease = null;
    if (why === "expired") {
      if (isLogCount(++c.expiries)) {
        this.log(
          "warn",
          `${c.name} sent no command for ${this.graceMs} ms: its control expired, stiffness ramps to 0 (control returns with its next command)${c.expiries > 1 ? ` [${c.expiries} times]` : ""}`,
        );
      }
    } else if (why === "revoked") {
      // An emergency stop must not be undone by the next command 12 ms later: this connection
      // stays without control; reconnecting takes it again.
      c.revoked = true;
      this.log("warn", `${c.name} lost control: revoked (emergency stop or shutdown); its commands are ignored until it reconnects`);
    }
  };

  followRobotConfig(source: () => Partial<LolaRobotConfig> | null, normalize: (c: Partial<LolaRobotConfig>) => { config: LolaRobotConfig; notes: string[] }): void {
    this.#configSource = source;
    this.#configNormalize = normalize;
  }

  /** Perform side, except when RobotConfig changed (rare): rewrite its strings in place. */
  #syncRobotConfig(): void {
    const c = this.#configSource!();
    if (!c || c === this.#configSeen) return;
    this.#configSeen = c;
    try {
      const { config, notes } = this.#configNormalize!(c);
      for (const n of notes) this.log("warn", n);
      const was = this.writer.robotConfig;
      this.writer.setRobotConfig(config);
      if (was.bodyId !== config.bodyId || was.bodyVersion !== config.bodyVersion || was.headId !== config.headId || was.headVersion !== config.headVersion) {
        this.log("info", `RobotConfig now ${config.bodyId} ${config.bodyVersion} ${config.headId} ${config.headVersion}`);
      }
    } catch (e) {
      this.log("warn", `RobotConfig ${JSON.stringify(c)} kept out of the messages: ${(e as Error).message}`);
    }
  }

  /** Perform side: one sensor message per cycle to every client. Never throws into the loop. */
  readonly #onCycle = (): void => {
    try {
      if (this.#configSource) this.#syncRobotConfig();
      if (this.holdUntilValid && !this.robot.state.valid) return;
      // Nobody to send it to and no recording: no message (a client that connects gets one at once: #admit).
      const cs = this.#clients;
      if (cs.length === 0 && !this.tap) return;
      const frame = this.writer.write(this.robot.state);
      this.tap?.sensor(frame, frame.length);
      for (let i = 0; i < cs.length; i++) this.#send(cs[i]!, frame);
    } catch (e) {
      // A bug here must not stop the runtime's loop; say so once in a while.
      if (this.#listenerErrors++ % 1000 === 0) this.log("warn", `sending sensor messages failed: ${(e as Error)?.stack ?? String(e)}`);
    }
  };

  attach(): void {
    this.server.on("connection", (s) => this.#accept(s));
    this.server.on("error", (e) => this.log("warn", `socket server error: ${e.message}`));
    this.robot.authority.on("released", this.#onReleased);
    this.#unsubscribe = this.robot.onCycle(this.#onCycle);
    process.on("exit", this.#onExit);
  }

  info(): LolaClientInfo[] {
    return this.#clients.map((c) => ({
      name: c.name,
      role: c.role,
      connectedAtMs: c.connectedAtMs,
      framesSent: c.framesSent,
      framesDropped: c.framesDropped,
      commands: c.commands,
      commandsIgnored: c.commandsIgnored,
      keyProblems: c.keyProblems,
      hasControl: c.lease !== null && this.robot.authority.isHeld(c.lease.id),
    }));
  }

  #accept(socket: Socket): void {
    if (this.#closing) {
      socket.destroy();
      return;
    }
    const id = this.#nextId++;
    if (!this.#controller) {
      this.#admit(socket, id, "controller");
      return;
    }
    // The slot is taken. A client that hangs up and reconnects at once can be accepted before its
    // old connection's close is processed; look again once pending I/O has run, so it is not
    // refused (or made a reader for good) because of that ordering. Bytes it sends meanwhile wait
    // in the socket's buffer.
    this.#lingering.add(socket);
    socket.on("error", () => socket.destroy());
    setTimeout(() => {
      this.#lingering.delete(socket);
      if (this.#closing || socket.destroyed) socket.destroy();
      else if (!this.#controller) this.#admit(socket, id, "controller");
      else if (this.#clients.length - 1 < this.maxReaders) this.#admit(socket, id, "reader");
      else this.#refuse(socket, id);
    }, ADMIT_RECHECK_MS).unref();
  }

  #admit(accepted: Socket, id: number, role: LolaClientRole): void {
    const inbox = Buffer.alloc(READ_BUFFER_BYTES);
    let client: Client | null = null;
    const polled = this.pollCommands && role === "controller";
    const socket = withReadBuffer(
      accepted,
      this.server,
      inbox,
      (n) => {
        if (client) this.#onData(client, inbox, n);
      },
      polled,
    );
    if (!socket) return; // gone meanwhile
    const c = new Client(id, role, socket, this.robot.clock.nowMs());
    client = c;
    c.inbox = inbox;
    c.polled = polled && c.fd >= 0;
    if (polled && !c.polled) socket.resume(); // no descriptor to read: the event loop reads it after all
    if (c.polled && !this.#pollFallback) {
      // Prepare side: a net under the cycle's polls (a stopped loop polls nothing), 4 ticks a second.
      this.#polledAtMs[0] = performance.now();
      this.#pollFallback = setInterval(() => {
        if (performance.now() - this.#polledAtMs[0]! >= POLL_FALLBACK_MS) this.poll();
      }, POLL_FALLBACK_MS);
      this.#pollFallback.unref();
    }
    c.onMessage = (update, problems) => this.#onCommand(c, update, problems);
    if (role === "controller") {
      this.#controller = c;
      this.#clients.unshift(c);
    } else {
      this.#clients.push(c);
    }
    socket.on("error", (e: NodeJS.ErrnoException) => {
      if (!c.closed) this.log("warn", `${c.name}: socket error ${e.code ?? ""} ${e.message}; closing it`);
      socket.destroy();
    });
    socket.on("close", () => this.#onClose(c));
    this.log("info", `${c.name} connected as the ${role === "controller" ? "controlling client" : "read-only client"}`);
    // LoLA clients start with a read: the first message goes out now, not at the next cycle
    // (unless there is no valid state to send yet: then with the first valid cycle).
    if (!this.holdUntilValid || this.robot.state.valid) this.#send(c, this.writer.write(this.robot.state));
  }

  #refuse(socket: Socket, id: number): void {
    const holder = this.#controller!;
    const reason =
      `client#${id} refused: ${holder.name} is the controlling client and ` +
      (this.maxReaders === 0
        ? "this server allows no read-only clients (LoLA serves one client; start bodylink with --lola-readers N to allow N)"
        : `all ${this.maxReaders} read-only slots are taken`);
    this.log("warn", reason);
    this.#lingering.add(socket);
    socket.on("error", () => socket.destroy());
    socket.on("data", () => {}); // discard; we only wait for the client to close
    socket.resume(); // accepted paused (createServer's pauseOnConnect)
    socket.on("close", () => this.#lingering.delete(socket));
    socket.end(pack({ Error: `bodylink LoLA: ${reason}` }));
    setTimeout(() => socket.destroy(), REFUSE_LINGER_MS).unref();
  }

  /**
   * See LolaServer.pollCommands. Perform side: one read(2) when the client sent something (its
   * bytes decoded and applied as they would be on arrival), one that fails with EAGAIN when it did
   * not (a thrown error: a client that answers every message never costs it); end of file or an
   * error closes the client as the event loop would have.
   */
  poll(): void {
    const c = this.#controller;
    if (!c?.polled || c.closed) return;
    this.#polledAtMs[0] = performance.now();
    for (;;) {
      const n = readNow(c.fd, c.inbox);
      if (n === READ_AGAIN) return;
      if (n === READ_FAILED) {
        const e = readError;
        readError = null;
        if (!c.closed) this.log("warn", `${c.name}: socket error ${e?.code ?? ""} ${e?.message ?? ""}; closing it`);
        this.#drop(c);
        return;
      }
      if (n === 0) {
        this.#drop(c); // end of file: the client closed
        return;
      }
      this.#onData(c, c.inbox, n);
      if (n < c.inbox.length || c.closed) return;
    }
  }

  /** See LolaServer.sendFinalFrame. Prepare side (on the way out). */
  async sendFinalFrame(waitMs = FINAL_FRAME_WAIT_MS): Promise<number> {
    const frame = this.writer.write(this.robot.state);
    let whole = 0;
    const queued: Array<{ name: string; flushed: Promise<boolean> }> = [];
    for (const c of this.#clients) {
      const s = c.socket;
      if (c.closed || s.destroyed) continue;
      let n = 0;
      if (s.writableLength === 0 && c.fd >= 0) {
        try {
          n = writeSync(c.fd, frame, 0, frame.length);
        } catch {
          // EAGAIN: its buffer is full, queued below. Another error: the queued write meets it too.
        }
        if (n === frame.length) {
          whole++;
          continue;
        }
      }
      // Behind a message still queued, or the kernel took part of it or none: the rest is queued,
      // and its write callback says when everything before it and it reached the kernel.
      const rest = Buffer.from(frame.subarray(n));
      const flushed = new Promise<boolean>((resolve) => {
        s.once("close", () => resolve(false));
        s.write(rest, (e) => resolve(!e));
      });
      queued.push({ name: c.name, flushed });
    }
    if (queued.length === 0) return whole;
    this.log("warn", `dying: waiting up to ${waitMs} ms for ${queued.map((q) => q.name).join(", ")} to take the last sensor message (queued behind messages not yet read)`);
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), waitMs);
    });
    const reached = await Promise.all(queued.map((q) => Promise.race([q.flushed, late])));
    clearTimeout(timer);
    const missed = queued.filter((_, i) => !reached[i]).map((q) => q.name);
    if (missed.length) this.log("warn", `dying: ${missed.join(", ")} did not take the last sensor message within ${waitMs} ms`);
    return whole + queued.length - missed.length;
  }

  #send(c: Client, frame: Uint8Array): void {
    const s = c.socket;
    if (c.closed || !s.writable) return;
    if (s.writableLength > 0) {
      // The previous frame is still queued: drop this one rather than queue (and never wait).
      c.framesDropped++;
      if (c.dropRun++ === 0) this.log("warn", `${c.name} is not reading fast enough: dropping sensor messages until it catches up`);
      return;
    }
    if (c.dropRun > 0) {
      this.log("info", `${c.name} caught up after ${c.dropRun} dropped sensor message(s)`);
      c.dropRun = 0;
    }
    c.framesSent++;
    if (c.fd >= 0 && !s.destroyed) {
      let n = 0;
      try {
        n = writeSync(c.fd, frame, 0, frame.length);
      } catch {
        // EAGAIN (the client's buffer is full): socket.write below queues the frame. Any other
        // error: socket.write meets it too and reports it as the socket's error (closed below).
      }
      if (n === frame.length) return;
      // Queued: from the client's own copy (the writer's frame is rewritten next cycle).
      c.out.set(frame);
      s.write(n > 0 ? c.out.subarray(n) : c.out);
      return;
    }
    c.out.set(frame);
    s.write(c.out);
  }

  /** Perform side: `n` new bytes in the client's read buffer `chunk` (valid until the next read). */
  #onData(c: Client, chunk: Buffer, n: number): void {
    if (c.closed) return;
    this.tap?.command(c.id, chunk, n);
    if (!c.reader) {
      if (!c.ignoredBytesLogged) {
        c.ignoredBytesLogged = true;
        this.log("warn", `${c.name} is read-only: the commands it sends are ignored (${this.#controller?.name ?? "the next client to connect"} controls)`);
      }
      return;
    }
    const err = c.reader.push(chunk, c.onMessage, n);
    if (err) {
      this.log("warn", `${c.name} dropped: ${err.message}`);
      this.#drop(c);
    }
  }

  #onCommand(c: Client, update: LolaCommandUpdate, problems: LolaCommandProblem[]): void {
    if (c.closed) return;
    try {
      this.#applyCommand(c, update, problems);
    } finally {
      if (c === this.#controller) this.onControllerCommand?.();
    }
  }

  #applyCommand(c: Client, update: LolaCommandUpdate, problems: LolaCommandProblem[]): void {
    c.commands++;
    const lease = this.#ensureLease(c);
    if (!lease) {
      c.commandsIgnored++;
      return;
    }
    const r = this.robot.command(lease.id, update);
    if (!r.ok) {
      c.commandsIgnored++;
      this.#problem(c, "command", r.error.message);
      return;
    }
    for (let i = 0; i < problems.length; i++) this.#problem(c, problems[i]!.key, problems[i]!.reason);
    for (let i = 0; i < r.problems.length; i++) this.#problem(c, r.problems[i]!.key, r.problems[i]!.reason);
  }

  /** Renew this client's lease, or acquire one if nobody holds control. Null if someone else does. */
  #ensureLease(c: Client): Lease | null {
    const a = this.robot.authority;
    if (c.revoked) {
      this.#problem(c, "control", "commands ignored: control was revoked (emergency stop); reconnect to take control again");
      return null;
    }
    if (c.lease?.renew(this.graceMs)) return c.lease;
    c.lease = null;
    const r = a.acquire(c.name, "lola", this.graceMs);
    if (r.ok) {
      c.lease = r.lease;
      if (isLogCount(++c.grants)) {
        this.log("info", `${c.name} has control (grace period ${this.graceMs} ms, renewed by every command)${c.grants > 1 ? ` [${c.grants} times]` : ""}`);
      }
      return r.lease;
    }
    this.#problem(c, "control", `commands ignored: ${r.reason}`);
    return null;
  }

  /** Log each distinct problem once per client; count all of them. */
  #problem(c: Client, key: string, reason: string): void {
    if (key !== "control" && key !== "command") c.keyProblems++;
    const text = `${key}: ${reason}`;
    const seen = c.problemsSeen.get(text);
    if (seen !== undefined) {
      c.problemsSeen.set(text, seen + 1);
      return;
    }
    if (c.problemsSeen.size >= MAX_DISTINCT_PROBLEMS) return;
    c.problemsSeen.set(text, 1);
    // `text` may name a key the client sent: escaped, so it cannot forge a log line (docs/security.md).
    this.log("warn", `${c.name}: ${escapeForLog(text)}${key === "control" || key === "command" ? "" : " (key ignored, the rest applied; logged once)"}`);
  }

  #drop(c: Client): void {
    c.socket.destroy();
    this.#onClose(c);
  }

  #onClose(c: Client): void {
    if (c.closed) return;
    c.closed = true;
    const i = this.#clients.indexOf(c);
    if (i >= 0) this.#clients.splice(i, 1);
    if (this.#controller === c) {
      this.#controller = null;
      const lease = c.lease;
      c.lease = null;
      if (lease && this.robot.authority.isHeld(lease.id)) {
        lease.release();
        // LoLA has no release: a controller that ends its connection is LoLA's normal end, not a fault.
        if (!this.#closing) this.log("info", `${c.name} disconnected while in control: control released, stiffness ramps to 0`);
      }
    }
    const repeats = [...c.problemsSeen.values()].reduce((a, b) => a + b, 0) - c.problemsSeen.size;
    this.log(
      "info",
      `${c.name} disconnected (${c.framesSent} sensor messages sent, ${c.framesDropped} dropped, ${c.commands} commands${c.commandsIgnored ? `, ${c.commandsIgnored} ignored` : ""}${repeats > 0 ? `, ${repeats} repeated problems not logged` : ""})`,
    );
  }

  close(): Promise<void> {
    if (this.#closing) return this.#closing;
    this.#closing = (async () => {
      this.#unsubscribe?.();
      if (this.#pollFallback) clearInterval(this.#pollFallback);
      this.robot.authority.off("released", this.#onReleased);
      const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
      // end(), not destroy(): the last sensor message written (after the stop path's safe cycle:
      // stiffness 0) reaches the client before its EOF. A client that reads nothing is cut after
      // a moment.
      for (const c of [...this.#clients]) {
        const sock = c.socket;
        sock.end();
        setTimeout(() => sock.destroy(), FINAL_FRAME_LINGER_MS).unref();
        this.#onClose(c);
      }
      for (const s of this.#lingering) s.destroy();
      this.#lingering.clear();
      await closed;
      try {
        const st = await lstat(this.path);
        if (st.isSocket()) await unlink(this.path);
      } catch {
        // already removed (libuv unlinks a listening pipe's path on close)
      }
      process.off("exit", this.#onExit);
      this.log("info", `stopped serving LoLA on ${this.path}`);
    })();
    return this.#closing;
  }
}
