/**
 * `bodylink serve`: start one body (simulated by default) and its servers, print where they serve,
 * record the runtime for the other CLI commands, and shut down cleanly (what that means per body:
 * SHUTDOWN_ACTION; socket file removed) on SIGINT/SIGTERM. Errors leave through errors.ts.
 * Its flags and the command are in serve-command.ts, which loads this module only when it runs.
 */
import { BODIES, type BodyKind, bodyChoicesText, bodyTable, isBodyKind } from "../bodies/registry.js";
import type { CoreHost } from "../host/core-host.js";
import { startApiServer } from "../serve/api/build.js";
import type { BodyRuntime, RobotBase } from "../runtime/robot.js";
import { HANDSHAKE } from "../wire/chestboard/constants.js";
import { type Clock, MonotonicClock } from "../runtime/clock.js";
import type { Recorder } from "../record/recorder.js";
import type { RecordTap } from "../record/tap.js";
import { ByteRing } from "../shm/ring.js";
import { DEFAULT_FOXGLOVE_PORT } from "../serve/foxglove/constants.js";
import { BodylinkError } from "../errors.js";
import type { FleetBridge } from "../fleet/bridge.js";
import { DEFAULT_FLEET_URL, subject } from "../fleet/subjects.js";
import { checkName, checkRuntimeDir, defaultName, listRuntimes, ownProcStart, type RuntimeRecord, removeRuntimeRecord, updateRuntime, writeRuntime } from "./discovery.js";
import { CliError, listenError, usageError } from "./errors.js";
import { coreLineRecord, createLog, type Logger, silentLogger } from "../serve/logger.js";
import { setCoreLogSink } from "../host/core-host.js";
import { DEFAULT_HOST_TIMEOUT_MS } from "../rt/core-shm.js";
import { ESTOP_SOCKET_SUFFIX, MAX_SOCKET_PATH_BYTES, serveEstopSocket } from "../serve/estop-socket.js";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { createServer } from "node:net";
import { attachSafetyLog, type SafetyLog } from "../serve/safety-log.js";
import { requireTokenOffLoopback } from "../serve/web-access.js";
import { SERVE_ENTRIES } from "./bodies/index.js";
import { type BodyEntry, type EntryContext, type StartedBody, stallCoreMs } from "./bodies/entry.js";
import { DEFAULT_API_PORT, type ServeOptions, simKindOf, VERSION } from "./serve-options.js";
import { fleetBundleOf, fleetConnectOptions } from "./fleet-flags.js";

export { DEFAULT_API_PORT, DEFAULT_LOLA_PATH, DEFAULT_UPSTREAM_LOLA_PATH, type ServeOptions, VERSION } from "./serve-options.js";

/** What stopping does to each body, for the shutdown line. */
export const SHUTDOWN_ACTION = bodyTable((k) => BODIES[k].safeStop);

export interface RunningRuntime {
  /** The name it is recorded under (`bodylink ls`, --robot). */
  name: string;
  /** The record as `bodylink ls` shows it. */
  record: RuntimeRecord;
  /** The body as the servers use it (its host). */
  robot: BodyRuntime;
  /** The body's threaded core (null when the entry keeps its robot on this thread: replay, lockstep). */
  host: CoreHost | null;
  /** The robot when it runs on this thread (replay, the NAO's --lockstep), else null. */
  inThreadRobot: RobotBase | null;
  /** The recorder, with `record`. */
  recorder: Recorder | null;
  /** The fleet seat when serve --fleet was given. */
  fleet: FleetBridge | null;
  lines: string[];
  /** The one stop path (safeStop, then every server closed, the body stopped, the record removed). */
  close(reason?: string): Promise<void>;
}

/** A `(level, line)` or `(line)` callback (the fleet bridge's, the recorder's) onto a logger. */
function logTo(log: Logger, level: "info" | "warn" | "error" = "info"): (levelOrLine: string, line?: string) => void {
  return (a, b) => {
    if (b === undefined) log[level](a.replace(/^bodylink: /, ""));
    else log[a === "warn" || a === "error" ? a : "info"](b);
  };
}

/** Bind `host:port` and let go at once: the API server's listen fails the same way, only later. */
async function probeListen(host: string, port: number): Promise<void> {
  const s = createServer();
  await new Promise<void>((resolve, reject) => {
    s.once("error", reject);
    s.listen({ host, port }, () => resolve());
  });
  await new Promise<void>((resolve) => s.close(() => resolve()));
}

/** How long the stop path waits for the cycle that shows the safe state (LoLA clients get that frame). */
const SAFE_FRAME_WAIT_MS = 250;

/**
 * The first step of every exit (docs/security.md): an emergency stop of category 0
 * (the NAO's stiffness 0 at once, the P7 halts, the TNY-360's joints off) latched with `reason`,
 * then one more cycle, so that the body's next frame and the frame every LoLA client receives
 * before its EOF both carry stiffness 0. The servers and the body are closed after this (their
 * closers), the body's own stop writing one last stiffness-0 frame. Never throws: it runs on the
 * way out of crashes too. One function, so a body cycling in a worker thread takes the same path.
 */
export async function safeStop(robot: BodyRuntime, reason: string): Promise<void> {
  try {
    // Latched (a worker core: requested in shared memory) before this returns; its answer is not waited for.
    void Promise.resolve(robot.estop({ category: 0, source: "shutdown", reason })).catch(() => {});
    await new Promise<void>((resolve) => {
      const t = setTimeout(done, SAFE_FRAME_WAIT_MS);
      // Two cycles: the first may have started before the stop was latched.
      let n = 0;
      // The body's own cycle signal (a core in a worker thread relays it).
      const off = robot.onCycle(() => {
        if (++n >= 2) done();
      });
      function done(): void {
        clearTimeout(t);
        off();
        resolve();
      }
    });
  } catch {
    // the body may already be stopped or broken: its closer still writes the safe frame if it can
  }
}

/**
 * Start a body and its servers (used by the CLI and by integration tests): the body's serve entry
 * (SERVE_ENTRIES: its core in its worker; `entry` replaces it only for `bodylink replay`), then the
 * servers every body shares. Nothing here branches on the body.
 */
export async function startRuntime(given: ServeOptions, entry?: BodyEntry): Promise<RunningRuntime> {
  // The simulator's mechanics resolved once (--sim, $BODYLINK_SIM, physics): every body's entry reads o.sim.
  const o: ServeOptions = { ...given, sim: simKindOf(given) };
  const closers: Array<() => Promise<void>> = [];
  let fleet: FleetBridge | null = null;
  const log = o.logger ?? (o.quiet ? silentLogger() : createLog().logger);
  // Checked before anything opens: a bad --fleet URL, an unreadable creds file or bundle, or no credentials at all is one clear line.
  const bundle = o.fleet !== undefined ? fleetBundleOf(o) : null;
  if (bundle && bundle.role !== "robot") throw new BodylinkError("BL_ERR_FLEET_CONFIG", `--fleet-dir ${bundle.dir} is the ${bundle.role} ${bundle.name}'s bundle; a runtime joins with a robot's`);
  if (bundle && o.name !== undefined && o.name !== bundle.name)
    throw new BodylinkError("BL_ERR_FLEET_CONFIG", `--fleet-dir ${bundle.dir} is the robot ${bundle.name}'s identity, but --name is ${o.name}`);
  const fleetOpts = o.fleet !== undefined ? fleetConnectOptions(o, bundle) : null;
  // NATS, the recorder and the Foxglove server load only when a flag asks for them (a plain serve starts without them).
  const nats = fleetOpts ? await Promise.all([import("../fleet/connect.js"), import("../fleet/bridge.js")]) : null;
  if (fleetOpts && nats) {
    nats[0].natsOptions(fleetOpts);
    nats[0].requireFleetCredentials(fleetOpts, o.fleetInsecure === true);
  }
  const operatorKey = o.fleetOperatorDir !== undefined ? (await import("../fleet/roster.js")).loadBundle(o.fleetOperatorDir).signingKey : null;
  if (!isBodyKind(o.body)) throw usageError(`unknown body ${JSON.stringify(o.body)}; choose ${bodyChoicesText()}`, "serve");
  if (o.lolaUpstream && o.body !== LOLA_UPSTREAM_BODY) throw new CliError(`--lola-upstream runs a NAO on top of its LoLA; it does not apply to --body ${o.body}`, 2);
  // Off loopback, a token or nothing (docs/security.md); checked before anything is opened.
  const token = o.token ?? (process.env.BODYLINK_TOKEN || undefined);
  requireTokenOffLoopback(o.host, token);
  // A taken --api-port or a --host this machine does not have fails here, before the record is
  // written and before the body opens its device or its LoLA socket (which would appear and vanish).
  await probeListen(o.host, o.apiPort ?? 0).catch((e: unknown) => {
    throw listenError(e, "robot API", o.host, o.apiPort ?? DEFAULT_API_PORT, "--api-port");
  });
  // The safety log (pino's line format, stderr) is attached once the body exists; refusals before that are not logged.
  let safety: SafetyLog | null = null;
  const access: EntryContext["access"] = {
    allowHosts: o.allowHost ?? [],
    allowOrigins: o.allowOrigin ?? [],
    token: token ?? null,
    onRefused: (what, detail) => safety?.refused(what, detail),
  };
  const others = listRuntimes();
  const name = o.name ?? bundle?.name ?? defaultName(o.body, new Set(others.map((r) => r.name)));
  const bad = checkName(name);
  if (bad) throw usageError(`--name: ${bad}`, "serve");
  // The name is claimed before the body is opened, so a second runtime of the same name never touches it.
  let record: RuntimeRecord = { name, pid: process.pid, procStart: ownProcStart(), body: o.body, transport: "sim", apiUrl: null, lolaPath: null, tnyUrl: null, startedAt: new Date().toISOString() };
  writeRuntime(record);
  closers.push(async () => removeRuntimeRecord(name));
  // The local e-stop socket beside the record (serve/estop-socket.ts): served by a threaded core on its own thread.
  const estopCandidate = join(checkRuntimeDir(true)!, `${name}${ESTOP_SOCKET_SUFFIX}`);
  const estopPath = Buffer.byteLength(estopCandidate) <= MAX_SOCKET_PATH_BYTES ? estopCandidate : null;
  let recorder: Recorder | null = null;
  // Recording: the main thread's events go into `tap`'s ring; the core records its cycles into its own (`coreRing`).
  const recording = o.record !== undefined || o.foxglove !== undefined;
  const rec = recording ? await Promise.all([import("../record/recorder.js"), import("../record/tap.js")]) : null;
  let tap: RecordTap | null = null;
  const tapOn = (clock: Clock): RecordTap | null => (tap ??= rec ? new rec[1].RecordTap(ByteRing.create(rec[0].RECORD_RING_BYTES), clock) : null);
  const coreRing = rec ? ByteRing.create(rec[0].RECORD_RING_BYTES) : null;
  let started: StartedBody;
  const lines: string[] = [];
  try {
    started = await (entry ?? SERVE_ENTRIES[o.body]).start({ o, name, others, access, recordRing: coreRing?.sab ?? null, tap: tapOn, estopSocket: estopPath });
    tapOn(new MonotonicClock());
    closers.unshift(...started.closers);
    const { robot, transport, lolaPath, tnyUrl } = started;
    lines.push(...started.lines);
    const inThread = started.inThreadRobot;
    if (estopPath && inThread) {
      // A robot on this thread (replay, lockstep): the socket is served here (it still shares nothing with HTTP but the thread).
      const es = await serveEstopSocket(estopPath, inThread);
      closers.unshift(() => es.close());
    }
    lines.push(
      estopPath ? `local e-stop: ${estopPath} (\`bodylink estop\` tries it before the API)` : `local e-stop: none (${estopCandidate} is too long for a socket; set BODYLINK_RUNTIME_DIR shorter)`,
    );
    // The stop socket is live before the API: say so at once, so `bodylink estop` reaches a runtime still starting.
    if (estopPath) {
      record = { ...record, estopPath };
      updateRuntime(record);
    }
    const slog = attachSafetyLog(robot, log.child({ component: "safety" }));
    safety = slog;
    closers.push(async () => slog.close());
    if (fleetOpts && nats) {
      fleet = new nats[1].FleetBridge({
        name,
        robot,
        connect: fleetOpts,
        version: VERSION,
        ...(o.fleetRate !== undefined ? { stateRateHz: o.fleetRate } : {}),
        ...(o.fleetTtlMs !== undefined ? { presenceTtlMs: o.fleetTtlMs } : {}),
        signingKey: bundle?.signingKey ?? null,
        ...(bundle ? { operators: bundle.operators, robots: bundle.robots } : {}),
        insecure: o.fleetInsecure === true,
        operatorKey,
        log: logTo(log.child({ component: "fleet" })),
      });
    }
    // fastify logs its internal errors through the runtime's log; its e-stop warnings are the safety log's already.
    const apiOpts = {
      host: o.host,
      ...access,
      loggerInstance: log.child({ component: "api" }, { level: log.levelVal > 50 ? log.level : "error" }),
      ...(o.maxSubscribers !== undefined ? { maxSubscribers: o.maxSubscribers } : {}),
      ...(o.maxConnections !== undefined ? { maxConnections: o.maxConnections } : {}),
      ...(fleet ? { fleet } : {}),
      ...(started.lockstep ? { lockstep: started.lockstep } : {}),
    };
    const api = await startApiServer(robot, { ...apiOpts, port: o.apiPort ?? DEFAULT_API_PORT })
      .catch((e: unknown) => {
        // Without --api-port, a taken 8780 (another runtime) is no error: take a free port and print it.
        if (o.apiPort === undefined && (e as NodeJS.ErrnoException).code === "EADDRINUSE") return startApiServer(robot, { ...apiOpts, port: 0 });
        throw e;
      })
      .catch((e: unknown) => {
        throw listenError(e, "robot API", o.host, o.apiPort ?? DEFAULT_API_PORT, "--api-port");
      });
    closers.unshift(() => api.close());
    lines.unshift(`runtime: ${name} (pid ${process.pid})`);
    // Like Jupyter: the dashboard's URL carries the token, so opening it is all a user does.
    lines.push(
      `robot API: ${api.url}  (dashboard ${api.url}/${token ? `?token=${encodeURIComponent(token)}` : ""}, state stream ${api.url.replace(/^http/, "ws")}/v1/stream, OpenAPI ${api.url}/openapi.json)`,
    );
    if (tap && rec) {
      const r = await rec[0].Recorder.start(
        { tap, robot, transport, core: started.host ? coreRing : null },
        {
          ...(o.record ? { path: o.record, splitMb: o.splitMb, durationS: o.duration } : {}),
          library: "bodylink 0.1.0",
          log: logTo(log.child({ component: "record" }), "error"),
          ...(o.onRecordingStop ? { onStop: o.onRecordingStop } : {}),
        },
      );
      recorder = r;
      // After the body has stopped: its last frame (stiffness 0) is in the recording too.
      closers.push(() => r.stop());
      if (o.record) lines.push(`recording: ${r.files[0]}${o.splitMb ? ` (a new file every ${o.splitMb} MB)` : ""}${o.duration ? `, for ${o.duration} s` : ""}`);
      if (o.foxglove !== undefined) {
        const { startFoxgloveServer } = await import("../serve/foxglove/server.js");
        const fx = await startFoxgloveServer(r, { host: o.host, port: o.foxglove === true ? DEFAULT_FOXGLOVE_PORT : o.foxglove, ...access });
        closers.unshift(() => fx.close());
        lines.push(`Foxglove: ${fx.url}${token ? `?token=${encodeURIComponent(token)}` : ""}  (Foxglove: Open connection, Foxglove WebSocket)`);
      }
    }
    record = { ...record, transport, apiUrl: api.url, lolaPath, tnyUrl, estopPath, fleetUrl: fleetOpts && nats ? nats[0].redactUrl(fleetOpts.url) : null };
    updateRuntime(record);
    if (fleet && nats) {
      const f = fleet;
      f.start(api.adapter, { api: api.url, lola: lolaPath, tny: tnyUrl });
      closers.unshift(() => f.close()); // first: leave the fleet while the body still answers
      lines.push(`fleet: joining ${nats[0].redactUrl(fleetOpts!.url)} as ${name} (state ${o.fleetRate ?? 10} Hz on ${subject.state(name)}; the body runs whether or not the broker answers)`);
    }
    // Serving: from now on a main thread that stops answering for the bound stops the body.
    started.host?.watchHost(o.hostTimeoutMs ?? DEFAULT_HOST_TIMEOUT_MS);
  } catch (e) {
    for (const c of closers) await c().catch(() => {});
    throw e;
  }
  let closed = false;
  return {
    name,
    record,
    robot: started.robot,
    host: started.host,
    inThreadRobot: started.inThreadRobot,
    recorder,
    fleet,
    lines,
    async close(reason = "runtime closed") {
      if (closed) return;
      closed = true;
      await safeStop(started.robot, reason);
      for (const c of closers) await c().catch(() => {});
    },
  };
}

/** serve's options as commander parses them (runServe completes them). */
export type RawServeOptions = Omit<ServeOptions, "acceptBoardVersion"> & { acceptBoardVersion?: number[] };

/**
 * Run `serve` (or `record`) until SIGINT/SIGTERM. With a recording: progress on a terminal
 * (elapsed, messages, MB, MB/min) and, after `--duration`, a clean stop.
 */
export async function runServe(raw: RawServeOptions, opts: { exitWhenRecordingEnds?: boolean; given?: (key: string) => boolean } = {}): Promise<void> {
  // --fleet alone means the default broker (or BODYLINK_FLEET).
  const { fleet: fleetFlag, ...rest } = raw as Omit<RawServeOptions, "fleet"> & { fleet?: string | boolean };
  const o: ServeOptions = {
    ...rest,
    // --fleet-dir alone joins too, at the bundle's URL (fleetConnectOptions: --fleet URL, then BODYLINK_FLEET, then the bundle's, then the default).
    ...(fleetFlag === undefined && rest.fleetDir === undefined
      ? {}
      : { fleet: typeof fleetFlag === "string" ? fleetFlag : (process.env.BODYLINK_FLEET ?? fleetBundleOf(rest)?.url ?? DEFAULT_FLEET_URL) }),
    acceptBoardVersion: raw.acceptBoardVersion ?? [...HANDSHAKE.DEFAULT_ACCEPTED_VERSIONS],
  };
  // The one log (serve/logger.ts): opened first, so everything after, a bad flag's warning included, goes through it.
  let log: Logger;
  try {
    log = o.logger ?? createLog({ ...(o.logFormat ? { format: o.logFormat } : {}), ...(o.logLevel ? { level: o.logLevel } : {}), ...(o.logFile !== undefined ? { file: o.logFile } : {}) }).logger;
  } catch (e) {
    throw new BodylinkError("BL_ERR_LOG_FILE", o.logFile ?? "stderr", (e as Error).message);
  }
  o.logger = log;
  const cli = log.child({ component: "serve" });
  // Each core's own lines (its LoLA server, its lifecycle) as records of the same log.
  setCoreLogSink((line) => {
    const r = coreLineRecord(line);
    log[r.level]({ component: r.component }, r.msg);
  });
  // Node's own warnings (deprecations, experimental features) too, instead of its raw stderr text.
  process.removeAllListeners("warning");
  process.on("warning", (w) => log.warn({ component: "node", event: "warning", code: (w as Error & { code?: string }).code ?? w.name }, w.message));
  if (opts.given) for (const w of inapplicableFlags(o, opts.given)) cli.warn({ event: "flag_ignored" }, w);
  if ((o.splitMb || o.duration) && !o.record) throw new CliError("--split-mb and --duration need a recording (serve --record FILE, or bodylink record FILE)", 2);
  let progress: NodeJS.Timeout | null = null;
  let rt: RunningRuntime | null = null;
  // Every exit takes this one path (docs/security.md): SIGINT, SIGTERM, SIGHUP, an uncaught
  // exception, an unhandled rejection. A second signal while stopping does not cut it short; if
  // the stop hangs, the process exits anyway after STOP_DEADLINE_MS (the record and the LoLA
  // socket file are removed by their synchronous exit hooks).
  // Installed before the start, so a Ctrl-C while it starts takes the same path (the start
  // finishes, then everything it opened closes) and the record never outlives the process.
  let stopping = false;
  let starting: Promise<RunningRuntime> | null = null;
  const stop = async (sig: string, code = 0) => {
    if (stopping) return;
    stopping = true;
    setTimeout(() => process.exit(code || 1), STOP_DEADLINE_MS).unref();
    if (progress) clearInterval(progress);
    say(`${process.stdout.isTTY ? "\n" : ""}${sig}: stopping (${isBodyKind(o.body) ? SHUTDOWN_ACTION[o.body] : "body to its safe state"}) …`);
    const running = rt ?? (await starting?.catch(() => null)) ?? null;
    await running?.close(`shutdown: ${sig}`);
    const p = running?.recorder?.progress();
    // With --foxglove alone the recorder writes no file: nothing to report.
    if (p && !p.failure && p.files.length > 0) say(`recorded ${p.messages.toLocaleString("en-US")} messages, ${(p.bytes / 1e6).toFixed(2)} MB in ${p.files.join(", ")}`);
    process.exit(code);
  };
  o.onRecordingStop = (reason) => {
    if (reason === null) {
      if (opts.exitWhenRecordingEnds) void stop(`recorded for ${o.duration} s`);
      else cli.info({ event: "recording_ended" }, `recording ended after ${o.duration} s; the runtime goes on`);
    } else if (progress) {
      clearInterval(progress);
      progress = null;
    }
  };
  process.once("exit", () => removeRuntimeRecord()); // whatever ends the process, the record goes (synchronous)
  for (const sig of ["SIGINT", "SIGTERM", "SIGHUP"] as const) process.on(sig, () => void stop(sig));
  const crash = (what: string) => (e: unknown) => {
    cli.fatal({ event: "crash", err: e instanceof Error ? e : new Error(String(e)) }, `${what}; stopping the body`);
    void stop(what, 1);
  };
  process.on("uncaughtException", crash("uncaught exception"));
  process.on("unhandledRejection", crash("unhandled rejection"));
  process.stdout.on("error", () => {}); // a closed terminal (SIGHUP) must not turn into a crash
  starting = startRuntime(o);
  try {
    rt = await starting;
  } catch (e) {
    if (stopping) return; // stopped while starting: stop() exits
    throw e;
  }
  if (stopping) return; // a signal came while it started: stop() closes it and exits
  // A core that dies has already sent the body its safe state: say so in one line and exit non-zero.
  rt.host?.onDied((line) => {
    cli.fatal({ event: "core_died" }, line);
    process.exit(1);
  });
  if (process.env.BODYLINK_TEST_HOOKS === "1") {
    // Test hook (test/rt/isolation.test.ts): SIGUSR2 blocks the main thread for 1 s, synchronously
    // (BODYLINK_TEST_STALL_MAIN_MS: that long instead; test/rt/host-watchdog.test.ts); with
    // BODYLINK_TEST_CRASH_CORE=1 the core crashes instead (test/rt/core-death.test.ts). Either stall
    // (the main thread's, or the core's with BODYLINK_TEST_STALL_CORE_MS) ends early once the file
    // BODYLINK_TEST_STALL_RELEASE names exists: a test ends it when it has seen what it waits for.
    const release = process.env.BODYLINK_TEST_STALL_RELEASE || undefined;
    process.on("SIGUSR2", () => {
      if (process.env.BODYLINK_TEST_CRASH_CORE === "1" && rt.host) return void rt.host.testCrashCore();
      if (stallCoreMs() > 0 && rt.host) return void rt.host.testStallCore(stallCoreMs(), release);
      const until = performance.now() + (Number(process.env.BODYLINK_TEST_STALL_MAIN_MS) || 1000);
      while (performance.now() < until && !(release !== undefined && existsSync(release))) {
        // a stalled main thread: the worker's cycle must not notice
      }
    });
  }
  for (const l of rt.lines) console.log(l);
  console.log("Ctrl-C to stop.");
  const r = rt.record;
  cli.info(
    { event: "started", name: r.name, body: r.body, transport: r.transport, api: r.apiUrl, lola: r.lolaPath, tny: r.tnyUrl, estop: r.estopPath ?? null },
    `serving ${r.name} (${r.body}, ${r.transport})`,
  );
  const rec = rt.recorder;
  if (rec && process.stdout.isTTY) {
    progress = setInterval(() => {
      const p = rec.progress();
      if (p.stopped) return;
      const t = Math.floor(p.elapsedS);
      const hms = `${String(Math.floor(t / 3600)).padStart(2, "0")}:${String(Math.floor(t / 60) % 60).padStart(2, "0")}:${String(t % 60).padStart(2, "0")}`;
      process.stdout.write(
        `\rrecording ${p.files[p.files.length - 1]}: ${hms}, ${p.messages.toLocaleString("en-US")} messages, ${(p.bytes / 1e6).toFixed(1)} MB, ${p.mbPerMin.toFixed(1)} MB/min${p.dropped ? `, ${p.dropped} lost` : ""}   `,
      );
    }, 1000);
    progress.unref();
  }
  // Test-only: inject a fault on SIGUSR2 to check the crash path (test/exit.test.ts).
  const fault = process.env.BODYLINK_TEST_FAULT;
  if (fault === "throw" || fault === "reject") {
    process.on("SIGUSR2", () => {
      if (fault === "throw") throw new Error("injected fault (BODYLINK_TEST_FAULT)");
      void Promise.reject(new Error("injected fault (BODYLINK_TEST_FAULT)"));
    });
  }
}

/** The stop path gets this long; then the process exits regardless. */
const STOP_DEADLINE_MS = 5000;

/** A line to stdout that never throws (after SIGHUP the terminal may be gone). */
function say(line: string): void {
  try {
    process.stdout.write(`${line}\n`);
  } catch {
    // no terminal any more
  }
}

/** The body `--lola-upstream` starts (on top of a LoLA): an error with another, not a warning. */
const LOLA_UPSTREAM_BODY: BodyKind = "nao";

/** Options (commander's keys) that only one body reads. */
const BODY_FLAGS: ReadonlyArray<readonly [key: string, flag: string, body: BodyKind | readonly BodyKind[]]> = [
  ["usb", "--usb", "nao"],
  ["lola", "--no-lola", "nao"],
  ["lolaPath", "--lola-path", "nao"],
  ["lolaReaders", "--lola-readers", "nao"],
  ["lolaGraceMs", "--lola-grace-ms", "nao"],
  ["lolaGroup", "--lola-group", "nao"],
  ["acceptBoardVersion", "--accept-board-version", "nao"],
  ["sim", "--sim", ["nao", "p7", "tny360"]],
  ["tny", "--no-tny", "tny360"],
  ["tnyPort", "--tny-port", "tny360"],
  ["tnyHost", "--tny-host", "tny360"],
];

/**
 * One warning per flag the user gave (`given`) that the chosen body or the other flags make
 * pointless: `--tny-host` with p7, `--lola-readers` with `--no-lola`, `--seed` on a real body.
 */
export function inapplicableFlags(o: ServeOptions, given: (key: string) => boolean): string[] {
  const out: string[] = [];
  for (const [key, flag, body] of BODY_FLAGS) {
    const bodies: readonly string[] = typeof body === "string" ? [body] : body;
    if (given(key) && !bodies.includes(o.body)) out.push(`${flag} applies to --body ${bodies.join(" or ")} only; ignored with --body ${o.body}`);
  }
  if (isBodyKind(o.body)) out.push(...SERVE_ENTRIES[o.body].flagWarnings(o, given));
  return out;
}
