/**
 * Every threaded core's shared buffer, whatever the body, laid out as data:
 *
 *   control words (Int32, CTL) │ state (seqlock) │ lease mirror (seqlock) │ e-stop request │ body region
 *
 * - control words, updated with Atomics: the cycle count (the host's watchdog), the host's
 *   heartbeat and its bound (host → core: the core's watchdog, src/rt/host-watch.ts), the lease
 *   generation, whether a lease is held and its deadline in cycles, the e-stop latch and category
 *   (core → host, after every change), and the e-stop requests (host → core: a counter the core
 *   compares at the start of every cycle, so an e-stop takes effect at the next cycle whatever the
 *   host does after it);
 * - state: the body's layout table (src/bodies/<body>/layout.ts) under the seqlock CTL.stateSeq;
 * - lease mirror: the holder, for the host's reads without asking (src/shm/lease-mirror.ts);
 * - e-stop request: the source and reason texts of the host's latest request (ESTOP_REQUEST_LAYOUT);
 * - body region: the body's own host → core channel: its command mailbox (src/shm/mailbox.ts over
 *   the body's command layout table: NAO_COMMAND_LAYOUT, P7_COMMAND_LAYOUT, TNY360_COMMAND_LAYOUT).
 * - the wake word (CTL.wake): the host bumps it after posting a request, which ends the core's
 *   blocking wait early (its clock's interrupt), so a request is not held until the next cycle.
 * Requests and their answers cross as messages, never through this buffer: nothing here is waited on
 * by the host.
 *
 * Written by the core (src/rt/core-worker.ts), read by its host (src/host/core-host.ts), except
 * the e-stop request and the body region, which only the host writes. Pure data.
 */
import type { AuthorityEvents } from "../runtime/authority.js";
import type { WakeMode } from "../runtime/clock.js";
import type { EstopState } from "../runtime/estop.js";
import { ESTOP_REQUEST_LAYOUT } from "../shm/control-layout.js";
import { layoutBytes } from "../shm/layout.js";
import { LEASE_MIRROR_BYTES } from "../shm/lease-mirror.js";

export const CTL = {
  /** Seqlock sequence of the state region (odd while the core writes). */
  stateSeq: 0,
  /** Cycles the core has run (the host's watchdog compares it over time; the host runs its cycle listeners when it moves). */
  cycles: 1,
  /**
   * Host → core: the host's heartbeat, bumped by a timer on the host's event loop (CoreHost), so it
   * moves only while the serving side can act. The core watches it (src/rt/host-watch.ts).
   */
  hostBeat: 2,
  /**
   * Host → core: how long the core lets the heartbeat stand still before it latches a category-1
   * e-stop itself ("host unresponsive"), ms; 0: not watched. The host writes a start-up bound at
   * boot and the serving bound once it serves (CoreHost.watchHost).
   */
  hostTimeoutMs: 3,
  /** Seqlock sequence of the lease mirror. */
  leaseSeq: 4,
  /** Core → host: the Authority's generation (changes with every change of holder). */
  leaseGeneration: 5,
  /** Core → host: 1 while a lease is held. */
  leaseHeld: 6,
  /** Core → host: the cycle count the lease lasts until (its wall time must pass too). */
  leaseDeadlineCycle: 7,
  /** Core → host: 0 not latched, 1 latched category 0, 2 latched category 1. */
  estopLatched: 8,
  /** Host → core: e-stop requests made (the core engages when it differs from estopTaken). */
  estopRequests: 9,
  /** Host → core: the latest request's category + 1 (0: the body's default). */
  estopCategory: 10,
  /** Core → host: the e-stop requests engaged so far (Atomics.notify on change). */
  estopTaken: 11,
  /** Seqlock sequence of the e-stop request texts (the host writes them). */
  estopTextSeq: 12,
  /**
   * Host → core: bumped and notified after every message the host posts to the core
   * (runtime/clock.ts wakeInterrupt), so a core asleep in its futex wait serves it at once.
   */
  wake: 13,
  /**
   * Core → host: the loop's late cycles so far, stored when the count moves, and bumped when the
   * body's link status changes (CoreBody.link): the safety log's once-a-second look reads these
   * two words and asks the core for its health only when the link changed.
   */
  lateCycles: 14,
  linkChanges: 15,
  /**
   * Host → core: nonzero while the host waits for each new state (CoreHost's follower, with cycle
   * listeners); the core's state publish notifies only then (SeqLockNotify), not every cycle.
   */
  stateFollowers: 16,
  /** Words in all, even: the state region after them starts 8-byte aligned (STATE_START). Word 17 is spare. */
  words: 18,
} as const;

export const STATE_START = CTL.words * 4;

// The host's heartbeat (CTL.hostBeat, CTL.hostTimeoutMs; the core's side: src/rt/host-watch.ts).
/** The serving bound: the heartbeat may stand still this long, ms (serve --host-timeout-ms). */
export const DEFAULT_HOST_TIMEOUT_MS = 1000;
/** The bound from boot until the host serves (CoreHost.watchHost): start-up compiles schemas and opens servers synchronously. */
export const STARTUP_HOST_TIMEOUT_MS = 10_000;
/** Shortest and longest bound `serve --host-timeout-ms` accepts, ms. */
export const HOST_TIMEOUT_RANGE_MS = [100, 60_000] as const;
/**
 * The host's beat: a sixth of the bound, at most every 200 ms (at the 1 s default: every 166 ms,
 * six beats per bound). Each beat is a wake-up of an otherwise idle main thread (~0.15 ms of CPU
 * on the development VM: at a tenth of the bound they were ~9 % of the LoLA proxy's process CPU);
 * a sixth keeps the silence between two beats under a quarter of the bound, below which the core
 * never reads the main thread's scheduler figures (src/rt/host-watch.ts).
 */
export function hostBeatEveryMs(timeoutMs: number): number {
  return Math.max(10, Math.min(200, Math.floor(timeoutMs / 6)));
}

const align8 = (n: number) => Math.ceil(n / 8) * 8;

export interface CoreRegions {
  readonly leaseStart: number;
  readonly estopStart: number;
  /** The body's own region (`bodyBytes` long), e.g. the NAO's command mailbox. */
  readonly bodyStart: number;
  readonly totalBytes: number;
}

/** Where each region starts and how big the whole buffer is, for a state region of `stateBytes` and a body region of `bodyBytes`. */
export function coreRegions(stateBytes: number, bodyBytes = 0): CoreRegions {
  const leaseStart = align8(STATE_START + stateBytes);
  const estopStart = align8(leaseStart + LEASE_MIRROR_BYTES);
  const bodyStart = align8(estopStart + layoutBytes(ESTOP_REQUEST_LAYOUT));
  return { leaseStart, estopStart, bodyStart, totalBytes: align8(bodyStart + bodyBytes) };
}

/** What every core takes, besides its body's own options. */
export interface CoreBaseOptions {
  /** Collect V8's young generation between cycles at most this often, ms (0: V8 decides). */
  gcEveryMs: number;
  /** How the core's thread waits for its next cycle; defaults to the body's (WORKER_WAKE_DEFAULT, runtime/clock.ts; the TNY-360 "wait"). */
  wake?: WakeMode;
  /** The blocking wake-up's lead, ms, or "auto" (learned, runtime/clock.ts WakeLead); the default: the body's (the NAO's 0, NAO_CORE_SPIN_MS; the others' "auto"). */
  spinMs?: number | "auto";
  /** SCHED_FIFO priority the core's thread asks for (0: none). Defaults to 20. */
  fifoPriority?: number;
  /** Nice value the core's thread asks for when it gets no SCHED_FIFO (per thread on Linux; lowering it needs privileges). Defaults to -10. */
  nice?: number;
  /** The body region's size (coreRegions), bytes: the host sizes the buffer, the core finds its region. */
  bodyBytes?: number;
  /**
   * Recording: the core's ByteRing (src/shm/ring.ts). The core is its one producer (the state of
   * every cycle, late cycles, the body's raw traffic); the recorder drains it on the main thread.
   */
  recordRing?: SharedArrayBuffer | null;
  /**
   * The local e-stop socket's path (src/serve/estop-socket.ts): served on the core's thread, so
   * nothing on the main thread (HTTP load, a blocked event loop) holds a stop back. None when null.
   */
  estopSocket?: string | null;
  /** Test hook: the request "testStall" blocks the core's thread for that many ms (a stalled core). */
  testStalls?: boolean;
  /** Test hook: the driver can be told to throw in read or write (request "testFault"), and the core to crash ("testCrash"). */
  testFaults?: boolean;
}

export type CoreError = { code: string; status: number; message: string; errno?: string };
export type CoreReply = { ok: true; value: unknown } | { ok: false; error: CoreError };

/** The core's `ready`: what every core says, and its body's own facts (`Y`: NaoReady, P7Ready, Tny360Ready). */
export interface CoreReady<Y> {
  readonly type: "ready";
  readonly defaultStopCategory: 0 | 1;
  readonly transport: string;
  readonly scheduling: string;
  /** The local e-stop socket the core serves, or null. */
  readonly estopSocket: string | null;
  readonly body: Y;
}

/** An Authority event relayed from the core (its arguments as the core's Authority emitted them). */
export interface AuthorityEventMessage {
  readonly type: "event";
  readonly event: keyof AuthorityEvents;
  readonly args: AuthorityEvents[keyof AuthorityEvents];
}

/** Every message but `ready` (what the body's servers and the test hooks post). */
export type CoreNotice = Exclude<CoreMessage, CoreReady<unknown>>;

/** Messages the core posts to its host. */
export type CoreMessage<Y = unknown> =
  | CoreReady<Y>
  | { type: "failed"; error: CoreError }
  | AuthorityEventMessage
  | { type: "reply"; id: number; reply: CoreReply }
  | { type: "died"; message: string; detail: string }
  /** The core engaged the host's e-stop requests up to `n`; the latch as it is now. */
  | { type: "estopTaken"; n: number; state: EstopState }
  /** A server in the core's thread refused a client (access checks, limits): for the safety log. */
  | { type: "refused"; what: string; detail: string }
  /** Test hook: the core's thread is blocked from now on (the "testStall" request). */
  | { type: "testStalling" };
