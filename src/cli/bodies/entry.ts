/**
 * What a body's serve entry is (src/cli/bodies/<body>.ts): the one way `bodylink serve` starts a
 * body. An entry turns serve's options into its host's (src/host/<body>-host.ts), starts the body's
 * real-time core in its worker and says what it opened; serve.ts runs the entry of `--body` from
 * SERVE_ENTRIES (src/cli/bodies/index.ts, a registry-typed table) and adds the servers every body
 * shares (robot API, recording, Foxglove, fleet). Prepare side only.
 */
import type { RuntimeRecord } from "../discovery.js";
import type { ServeOptions } from "../serve-options.js";
import type { ApiRobot } from "../../serve/api/build.js";
import type { CoreHost } from "../../host/core-host.js";
import type { WebAccessOptions } from "../../serve/web-access.js";
import type { Clock, WakeMode } from "../../runtime/clock.js";
import type { RecordTap } from "../../record/tap.js";
import type { RobotBase } from "../../runtime/robot.js";
import type { LockstepClock } from "../../runtime/lockstep.js";

/** What serve hands an entry. */
export interface EntryContext {
  readonly o: ServeOptions;
  /** The runtime's name (claimed before the entry runs). */
  readonly name: string;
  /** The other runtimes on this machine (an entry picks socket paths and ports they do not use). */
  readonly others: readonly RuntimeRecord[];
  /** The access rules every server of the runtime applies (token, hosts, origins, refusals to the safety log). */
  readonly access: WebAccessOptions & { onRefused: (what: string, detail: string) => void };
  /** With a recording: the ring the core records its cycles into (the recorder drains it). */
  readonly recordRing: SharedArrayBuffer | null;
  /**
   * With a recording: the main thread's tap, made on first call with that clock (an entry whose
   * robot runs on this thread records its frames through it, on its own clock); null without one.
   */
  tap(clock: Clock): RecordTap | null;
  /** The local e-stop socket's path (serve/estop-socket.ts; the core serves it on its thread), or null when the path is too long. */
  readonly estopSocket: string | null;
}

/** What an entry started. */
export interface StartedBody {
  /** The body as the servers use it. */
  readonly robot: ApiRobot;
  /** Its threaded core's host; null for an entry that keeps its robot on this thread. */
  readonly host: CoreHost | null;
  /**
   * The robot, when it runs on this thread instead: `bodylink replay` (a recording drives it) and
   * a `--lockstep` simulation (its clients' answers or step requests drive the clock); else null.
   */
  readonly inThreadRobot: RobotBase | null;
  /** With --lockstep: the clock the robot runs on (the robot API's POST /v1/sim/step moves it). */
  readonly lockstep?: LockstepClock;
  /** "sim", "usb", "lola:PATH", "tny:HOST", "replay", … (the runtime record, the recording's metadata). */
  readonly transport: string;
  readonly lolaPath: string | null;
  readonly tnyUrl: string | null;
  /** What to print, one line each. */
  readonly lines: readonly string[];
  /** Run in order on close (the body's own last: its core writes the safe frame). */
  readonly closers: ReadonlyArray<() => Promise<void>>;
}

/** One body's way to start. */
export interface BodyEntry {
  start(ctx: EntryContext): Promise<StartedBody>;
  /**
   * One warning per flag of this body's own that the user gave (`given`) and its other flags make
   * pointless (`--lola-path` with `--no-lola`, `--seed` with a real robot). Flags of other bodies
   * are serve's (BODY_FLAGS).
   */
  flagWarnings(o: ServeOptions, given: (key: string) => boolean): string[];
}

/** The simulator's flags, pointless with a real robot (`how`: the flag that chose it). */
export function realRobotWarnings(how: string, given: (key: string) => boolean): string[] {
  const out: string[] = [];
  if (given("sim")) out.push(`--sim chooses the simulator's mechanics; ignored with ${how} (a real robot)`);
  if (given("seed")) out.push(`--seed sets the simulator's noise; ignored with ${how} (a real robot)`);
  return out;
}

/**
 * Test hooks for a threaded core (BODYLINK_TEST_HOOKS=1): BODYLINK_TEST_FAULTS=1 gives it the fault
 * hooks (driver faults, a P7's link loss, a crash: with BODYLINK_TEST_CRASH_CORE=1, SIGUSR2 to serve
 * makes the core throw, uncaught).
 */
export function testCoreHooks(): { testStalls?: boolean; testFaults?: boolean } {
  if (process.env.BODYLINK_TEST_HOOKS !== "1") return {};
  return {
    ...(stallCoreMs() > 0 ? { testStalls: true } : {}),
    ...(process.env.BODYLINK_TEST_FAULTS === "1" ? { testFaults: true } : {}),
  };
}

/** Test hook: with BODYLINK_TEST_STALL_CORE_MS=N, SIGUSR2 blocks the core's thread for N ms instead of the main thread. */
export function stallCoreMs(): number {
  const ms = Number(process.env.BODYLINK_TEST_STALL_CORE_MS);
  return process.env.BODYLINK_TEST_HOOKS === "1" && ms > 0 ? ms : 0;
}

/** A core's wake-up and the options every host takes from serve's flags (each unset one keeps the core's default). */
export function coreOptions(o: Pick<ServeOptions, "coreWake" | "coreSpinMs" | "gcEveryMs" | "seed">): {
  seed: number;
  gcEveryMs: number;
  wake?: WakeMode;
  spinMs?: number | "auto";
  testStalls?: boolean;
  testFaults?: boolean;
} {
  return {
    seed: o.seed,
    gcEveryMs: o.gcEveryMs ?? 100,
    ...(o.coreWake ? { wake: o.coreWake } : {}),
    ...(o.coreSpinMs !== undefined ? { spinMs: o.coreSpinMs } : {}),
    ...testCoreHooks(),
  };
}
