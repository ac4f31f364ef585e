/**
 * bodylink's TNY-360 API server: the robot's binary WebSocket API (tny360.md §2–§3) in front of a
 * `Tny360Robot` (simulated, or a real robot behind the driver), so the upstream SDKs, the web
 * portal and bodylink's own client talk to it as to a TNY-360.
 *
 * - WebSocket on 127.0.0.1:5621 by default (any path; the robot uses `/`), binary frames, one
 *   message per frame, exactly one reply per request with its msg_id (see dispatch.ts for every
 *   status); replies to RPC actions come after a control tick, so they may overtake.
 * - At most 3 connections (like the robot's `max_open_sockets`). When all are taken, a new
 *   connection takes the slot of one that holds no control and sent no request the robot
 *   understood for `yieldSlotAfterMs` (5 s; the stalest such one, closed 1008); only when there
 *   is none does it get HTTP 503. A connection that sends nothing for `idleTimeoutMs` (30 s) is
 *   closed too. So neither idle sockets nor junk every 20 s hold the slots and lock everyone out.
 * - Upgrades pass the Host, token and Origin checks first (web-access.ts, docs/security.md):
 *   421 / 401 / 403. The vendor SDKs send no Origin from Node; a browser page may connect only
 *   from an `--allow-origin` origin; the token, when set, goes in `?token=`.
 * - A flood waits its turn: at most BURST_FRAMES (32) frames a millisecond are served on average,
 *   every connection together, and at most 32 in one go; the rest wait in arrival order, their
 *   sockets unread, none dropped (and, with `mayServe`, none just before the TNY-360 core's deadline).
 * - Text frames close the connection with 1003 (unsupported data). Frames over 64 KiB are closed
 *   by `ws` with 1009 before they reach the dispatcher; 257 B – 64 KiB get OutOfMemory (6).
 * - Control: a connection acquires the runtime's lease (source "tny", owner
 *   `tny:<address>:<port>#<n>`) when it first sends a command, and renews it (`leaseMs`, default
 *   2000 ms) with each command. While another client holds control, commands answer UnknownError
 *   (4) and the reason is written to the robot's log ring (system.getLogLine). Closing the
 *   connection releases its lease, and the runtime then clears the velocity it commanded.
 * - Emergency stop (latched in the runtime's Authority): every command answers EmergencyStop (7,
 *   bodylink's extension) until the reset. A connection whose control was revoked by the stop, or
 *   that commanded while it was latched, never gets control implicitly again: after the reset a
 *   client regains control by opening a NEW connection and commanding (the vendor SDKs reconnect).
 *   The vendor firmware has no e-stop, so this is where we differ from it: an e-stop must not be
 *   undone by a client that simply keeps sending setVelocity.
 *
 * - Recording (`tap`): every binary frame a client sent and every reply, as on the wire, with the
 *   connection's number (a recording's /tny360/api/request and /reply).
 *
 * Uses `ws` directly (no HTTP framework): the only HTTP answer is 426 for plain requests.
 */
import { createServer, type IncomingMessage } from "node:http";
import { Socket } from "node:net";
import type { Duplex } from "node:stream";
import { WebSocket, WebSocketServer } from "ws";
import type { Tny360Robot } from "../../runtime/tny360-robot.js";
import type { Awaitable, ControlAuthority, LeaseInfo } from "../../runtime/authority.js";
import { MonotonicClock } from "../../runtime/clock.js";
import type { TnyFrameTap } from "../../record/tap.js";
import { LogLevel, TNY_DEFAULT_PORT, TNY_HEADER_BYTES, TNY_MAX_CONNECTIONS } from "../../wire/tny/constants.js";
import { type DispatchStats, dispatchTnyFrame, newDispatchStats, type ReplyAlloc, replyAlloc, type TnyDispatchTarget } from "./dispatch.js";
import { requireTokenOffLoopback, WebAccess, type WebAccessOptions } from "../web-access.js";

/** A connection that sends no frame for this long is closed (idle sockets must not hold the 3 slots). */
export const DEFAULT_TNY_IDLE_MS = 30_000;
/** With every slot taken, a connection without control that sent nothing useful for this long gives its slot to a new one. */
export const DEFAULT_TNY_YIELD_SLOT_MS = 5_000;

export interface TnyServerOptions extends WebAccessOptions {
  /**
   * Close a connection that sent no frame for this long, ms (1000 "idle"), so that idle sockets
   * cannot hold every slot and lock others out. Defaults to 30000; 0 disables.
   */
  idleTimeoutMs?: number;
  /** Called for every refused upgrade (access checks, the connection limit): the safety log. */
  onRefused?: (what: string, detail: string) => void;
  /** Defaults to 127.0.0.1 (loopback only). Use 0.0.0.0 to serve the network. */
  host?: string;
  /** Defaults to 5621; 0 picks a free port. */
  port?: number;
  /** Defaults to 3, as the robot. */
  maxConnections?: number;
  /**
   * With every slot taken, a new connection takes the slot of one that holds no control and sent no
   * request the robot understood for this long, ms. Defaults to 5000; 0 never (then only the idle timeout frees a slot).
   */
  yieldSlotAfterMs?: number;
  /** Lease length per connection, renewed by each command. Defaults to 2000 ms. */
  leaseMs?: number;
  /** Recording: every request frame and reply, as on the wire (src/record/tap.ts). */
  tap?: TnyFrameTap;
  /**
   * Called before each frame is dispatched (the server in a threaded core's thread: take an e-stop
   * the host requested since the last cycle first, so the frame sees the latch).
   */
  beforeFrame?: () => void;
  /**
   * Whether a frame that arrived at `nowMs` may be served now (the server in a threaded core's
   * thread: not just before the core's next deadline). When not, it waits with the frames over the
   * budget, its socket unread, and a later millisecond serves it.
   */
  mayServe?: (nowMs: number) => boolean;
  /** Frames served a millisecond on average, every connection together, and at most in one go, before the rest wait (BURST_FRAMES; tests lower it). */
  burstFrames?: number;
}

export interface TnyServerStats {
  readonly connections: number;
  readonly accepted: number;
  readonly refusedConnections: number;
  /** Upgrades refused by the Host, token or Origin check (web-access.ts). */
  readonly refusedAccess: number;
  /** Connections closed for sending nothing for idleTimeoutMs. */
  readonly idleClosed: number;
  /** Connections that gave their slot to a new one (no control, nothing understood for yieldSlotAfterMs). */
  readonly slotsYielded: number;
  readonly requests: number;
  readonly ignoredFrames: number;
  /** Replies by status code 0..6. */
  readonly repliesByStatus: readonly number[];
  /** Frames that came over the budget (BURST_FRAMES a millisecond) and waited for a later one (a flood). */
  readonly framesWaited: number;
}

export interface TnyServer {
  readonly host: string;
  readonly port: number;
  stats(): TnyServerStats;
  /** Request frames so far (stats().requests without building the stats: cheap enough to ask every cycle). */
  requestCount(): number;
  /** Close every connection (1001), release their leases, stop listening. */
  close(): Promise<void>;
}

/**
 * The robot surface the server uses: the dispatcher's, plus control and the log ring. The
 * authority may answer later (a threaded core's host): the lease path then awaits it.
 */
type ServedRobot = TnyDispatchTarget & Pick<Tny360Robot, "logLine" | "clock"> & { readonly authority: ControlAuthority };

/** `f(v)` now, or once `v` resolves. */
function then<T, U>(v: Awaitable<T>, f: (t: T) => Awaitable<U>): Awaitable<U> {
  return v instanceof Promise ? v.then(f) : f(v);
}

/**
 * At most BURST_FRAMES frames a millisecond on average, every connection together (a token bucket
 * that holds BURST_WINDOWS milliseconds' worth: at most that many in one go); the rest wait, their sockets unread, for the next
 * millisecond. A client flooding the server (a 64 KiB read holds ~3,000 setVelocity frames, which
 * `ws` hands over in one go) must neither hold the thread for long at a time nor take all of it:
 * the TNY-360 core's cycle runs between turns of this thread's event loop, at SCHED_FIFO where
 * allowed, and the kernel stops a real-time thread that runs 95 % of a second (measured: `npm run
 * bench -- isolation`, the TNY-360 flood). A closed-loop client sends one frame per round trip
 * and, on average, fewer than BURST_FRAMES a millisecond, but a millisecond of quick round trips
 * held 33 or more: a fixed 32-a-millisecond window made such a client wait out a timer (≥ 1 ms)
 * ~0.4 % of its requests and deferred its messages for good, which took ~12 % off the in-thread
 * bench's round trips at load 3 (`npm run bench -- tny`, 2026-12-04); the bucket lets those through.
 */
const BURST_FRAMES = 32;
const BURST_MS = 1;
/** The bucket's depth, in milliseconds of BURST_FRAMES: the most served in one go, from a rested server (as many as a window of the fixed budget held). */
const BURST_WINDOWS = 1;

/**
 * From its first frame over the budget on, a connection gets its messages from `ws` one per turn
 * of the event loop (`ws`'s `allowSynchronousEvents: false`, on its receiver alone): `ws` parses a
 * whole read (64 KiB: ~3,000 setVelocity frames) and hands every message over in one go, paused or
 * not, which held the TNY-360 core's thread for milliseconds (late cycles under a flood). Every
 * connection deferred (the server's option) cost a closed-loop client 4-10 % more CPU per round
 * trip (measured, same run), so only a flooding one pays. NOTE: `ws` has no public way to change
 * this after the upgrade; its Receiver reads the field per message (ws 8.17 on; a test pins it).
 */
export function deferMessages(ws: WebSocket): boolean {
  const receiver = (ws as unknown as { _receiver?: { _allowSynchronousEvents?: unknown } })._receiver;
  if (typeof receiver?._allowSynchronousEvents !== "boolean") return false;
  receiver._allowSynchronousEvents = false;
  return true;
}

/** A frame that waits its turn (a flood only), with its connection's handler and its arrival. */
interface Waiting {
  readonly conn: Connection;
  readonly serve: (frame: Uint8Array, nowMs: number, robotNowMs: number) => void;
  readonly frame: Uint8Array;
  readonly nowMs: number;
}

/**
 * A reply as one unmasked, final, binary WebSocket frame (RFC 6455 §5.2): the frame header, then the
 * reply in the buffer's last `n` bytes (dispatch.ts's ReplyAlloc), so it goes to the socket as one
 * buffer in one write. A header-only reply (every command answered Ok, every error) comes from
 * Node's pool unzeroed: every byte is written; a longer one zeroed.
 */
const framedReply: ReplyAlloc = (n) => {
  const head = n <= 125 ? 2 : n <= 0xffff ? 4 : 10;
  const out = n === TNY_HEADER_BYTES ? Buffer.allocUnsafe(head + n) : Buffer.alloc(head + n);
  out[0] = 0x82; // FIN, opcode 2 (binary)
  if (head === 2) {
    out[1] = n; // 7-bit length, no mask bit
  } else if (head === 4) {
    out[1] = 126; // 16-bit length follows
    out.writeUInt16BE(n, 2);
  } else {
    out[1] = 127; // 64-bit length follows (zeroed above: a reply is far under 2^32 bytes)
    out.writeUInt32BE(n, 6);
  }
  return out;
};

/** Where the reply starts in a framedReply buffer (after its header). */
const framedReplyStart = (frame: Uint8Array): number => {
  const len7 = frame[1]! & 0x7f;
  return len7 < 126 ? 2 : len7 === 126 ? 4 : 10;
};

/** The `ws` internals the one-write reply relies on (ws 8.17 on; a test pins them). */
interface WsInternals {
  readonly _socket?: unknown;
  readonly _sender?: { readonly _state?: unknown };
}

/**
 * The socket under `ws`, when its replies can be written to it as whole frames, else null (`ws`
 * changed: its own `send` then frames them). NOTE: `ws.send` frames a reply as two buffers (a header
 * it allocates, then the data: a `writev`) through two option objects, cork and uncork: a closed-loop
 * echo spent ~6 % less CPU per round trip written as one buffer (measured, same run: docs/performance.md).
 * Only while `ws`'s sender is idle (its state DEFAULT: it queues nothing, which it does only to
 * compress or to read a Blob, neither of which this server does), so a close or pong `ws` writes
 * itself never interleaves with a reply; the bound on unsent replies reads the socket's `writableLength`
 * (`ws`'s `bufferedAmount` is that plus what its sender holds, which is nothing while it is idle).
 */
export function directReplySocket(ws: WebSocket): { readonly socket: Socket; readonly sender: { readonly _state?: unknown } } | null {
  const w = ws as unknown as WsInternals;
  const socket = w._socket;
  const sender = w._sender;
  if (!(socket instanceof Socket) || typeof sender !== "object" || sender === null || sender._state !== SENDER_IDLE) return null;
  return { socket, sender };
}
/** `ws`'s Sender state DEFAULT: nothing queued. */
const SENDER_IDLE = 0;

/** `ws.send`'s options for every reply (made once: the hot path). */
const BINARY = { binary: true } as const;

/** Per-socket send queue bound: a client that stops reading is disconnected, not buffered forever. */
const MAX_BUFFERED_BYTES = 1 << 20;

interface Connection {
  readonly id: number;
  readonly owner: string;
  leaseId: string | null;
  /** Lost control to an emergency stop, or commanded while it was latched: no implicit control again. */
  latchedOut: boolean;
  /** The log ring has been told why (once per connection: the ring holds 32 lines). */
  latchedOutNoted: boolean;
  /** An acquire the authority has not answered yet. */
  acquiring: Promise<string | null> | null;
  /** When it last sent a request the robot understood (or connected), performance.now(). */
  lastUsefulMs: number;
  /** When it last sent a frame, performance.now() (a field: a double kept in a closure's variable is boxed anew on every write). */
  lastFrameMs: number;
  /** Closing after giving its slot away: no longer counted against the limit. */
  yielded: boolean;
  /** Closed: its frames still waiting are dropped (a command must not take control for a gone client). */
  closed: boolean;
  /** Not reading its socket while its frames wait (backpressure to the client). */
  paused: boolean;
  /** Flooded once: `ws` hands its messages over one per turn from then on (deferMessages). */
  deferred: boolean;
  readonly ws: WebSocket;
}

export async function startTnyServer(robot: ServedRobot, opts: TnyServerOptions = {}): Promise<TnyServer> {
  const host = opts.host ?? "127.0.0.1";
  requireTokenOffLoopback(host, opts.token);
  const access = new WebAccess(host, opts);
  const idleMs = opts.idleTimeoutMs ?? DEFAULT_TNY_IDLE_MS;
  const yieldAfterMs = opts.yieldSlotAfterMs ?? DEFAULT_TNY_YIELD_SLOT_MS;
  let refusedAccess = 0;
  let idleClosed = 0;
  let slotsYielded = 0;
  /** Connections closing after giving their slot away (still in `sockets` until closed). */
  let yielding = 0;
  const maxConnections = opts.maxConnections ?? TNY_MAX_CONNECTIONS;
  const leaseMs = opts.leaseMs ?? 2000;
  const tap = opts.tap ?? null;
  const beforeFrame = opts.beforeFrame ?? null;
  const mayServe = opts.mayServe ?? null;
  const burstBudget = opts.burstFrames ?? BURST_FRAMES;
  // One clock read per frame: the server's own timing (the budget, the deadline guard, the idle
  // timer) is on performance.now(), which is the robot's clock too unless a test gave it a SimClock;
  // then the lease and the body read the robot's own.
  const robotClock = robot.clock;
  const wallIsRobotClock = robotClock instanceof MonotonicClock;
  const stats: DispatchStats = newDispatchStats();
  const sockets = new Set<WebSocket>();
  /** Upgrade sockets still in their handshake. */
  const pending = new Set<Duplex>();
  let accepted = 0;
  let refusedConnections = 0;
  let nextId = 1;
  const connections = new Set<Connection>();
  // A lease revoked (by the emergency stop) marks its connection: it must reconnect to command again.
  const onReleased = (info: LeaseInfo, why: "released" | "expired" | "revoked"): void => {
    if (why !== "revoked") return;
    for (const c of connections) {
      if (c.leaseId === info.id) {
        c.leaseId = null;
        c.latchedOut = true;
      }
    }
  };
  robot.authority.on("released", onReleased);
  const noteLatchedOut = (c: Connection): void => {
    if (c.latchedOutNoted) return;
    c.latchedOutNoted = true;
    robot.logLine(LogLevel.Warning, "control", `${c.owner}: lost control to an emergency stop; open a new connection to take control again`);
  };

  const http = createServer((_req, res) => {
    res.writeHead(426, { "content-type": "text/plain", upgrade: "websocket" });
    res.end("TNY-360 binary API: connect with a WebSocket client (ws://host:port/)\n");
  });
  // 64 KiB cap in ws; everything over 256 bytes below it is answered OutOfMemory by the dispatcher
  const wss = new WebSocketServer({ noServer: true, maxPayload: 64 * 1024, perMessageDeflate: false });

  http.on("upgrade", (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    // Every upgrade socket gets an error listener first: Node removes its own from upgrade
    // sockets, and a reset (even of a socket we are refusing) must never crash the runtime.
    socket.on("error", () => socket.destroy());
    // Host, token and Origin (docs/security.md): a web page from another origin must not command the robot.
    const refused = access.check(req, { upgrade: true });
    if (refused) {
      refusedAccess++;
      opts.onRefused?.(`TNY-360 connection (${refused.code})`, `from ${req.socket.remoteAddress ?? "?"}: ${refused.message}`);
      const body = `${refused.message}\n`;
      socket.end(
        `HTTP/1.1 ${refused.status} ${STATUS_TEXT[refused.status] ?? "Refused"}\r\nConnection: close\r\nContent-Type: text/plain\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      );
      return;
    }
    if (sockets.size - yielding + pending.size >= maxConnections && !yieldSlot()) {
      refusedConnections++;
      opts.onRefused?.("TNY-360 connection (limit)", `from ${req.socket.remoteAddress ?? "?"}: ${maxConnections} connections open`);
      const body = `at most ${maxConnections} connections; close one first\n`;
      socket.end(`HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nContent-Type: text/plain\r\nContent-Length: ${body.length}\r\n\r\n${body}`);
      return;
    }
    // A handshake ws rejects (bad key, version, method) or a socket closed mid-handshake never
    // reaches the callback: count it pending until it either upgrades or closes.
    pending.add(socket);
    socket.once("close", () => pending.delete(socket));
    wss.handleUpgrade(req, socket, head, (ws) => {
      pending.delete(socket);
      onConnection(ws, req);
    });
  });

  // The burst budget (BURST_FRAMES per BURST_MS on average, every connection together) and the frames over it.
  // [tokens, when they were counted (performance.now())]: typed slots, as doubles kept in closure variables are boxed per write
  const bucket = new Float64Array([burstBudget * BURST_WINDOWS, Number.NEGATIVE_INFINITY]);
  const bucketDepth = burstBudget * BURST_WINDOWS;
  const tokensPerMs = burstBudget / BURST_MS;
  const waiting: (Waiting | null)[] = [];
  let waitingAt = 0;
  let drainQueued = false;
  let waited = 0;
  const inBurst = (now: number): boolean => {
    const tokens = Math.min(bucketDepth, bucket[0]! + (now - bucket[1]!) * tokensPerMs);
    bucket[1] = now;
    if (tokens >= 1) {
      bucket[0] = tokens - 1;
      return true;
    }
    bucket[0] = tokens;
    return false;
  };
  /**
   * The frame waits (in arrival order), its socket unread until none waits. Over the budget: the
   * next millisecond serves it, and its connection's messages come one per turn from then on; held
   * back for the deadline (mayServe) or behind others: the first turn after it.
   */
  const wait = (conn: Connection, serve: Waiting["serve"], frame: Uint8Array, now: number, overBudget: boolean): void => {
    waiting.push({ conn, serve, frame, nowMs: now });
    waited++;
    if (!conn.paused) {
      conn.paused = true;
      conn.ws.pause();
    }
    if (overBudget && !conn.deferred) conn.deferred = deferMessages(conn.ws);
    scheduleDrain(overBudget);
  };
  const scheduleDrain = (overBudget: boolean): void => {
    if (drainQueued) return;
    drainQueued = true;
    // over the budget: once its window is over; held back for the deadline: the next turn
    if (overBudget) setTimeout(drain, BURST_MS);
    else setImmediate(drain);
  };
  /** The waiting frames, within the budget and what mayServe allows; once none wait, the sockets are read again. */
  const drain = (): void => {
    drainQueued = false;
    const now = performance.now();
    const robotNow = wallIsRobotClock ? now : robotClock.nowMs();
    while (waitingAt < waiting.length) {
      if (mayServe !== null && !mayServe(performance.now())) return scheduleDrain(false);
      if (!inBurst(now)) return scheduleDrain(true);
      const w = waiting[waitingAt]!;
      waiting[waitingAt++] = null; // served: let it go
      if (w.conn.closed) {
        bucket[0] = bucket[0]! + 1; // a gone client's frame costs nothing
        continue;
      }
      w.serve(w.frame, w.nowMs, robotNow);
    }
    waiting.length = 0;
    waitingAt = 0;
    for (const c of connections) {
      if (c.paused) {
        c.paused = false;
        c.ws.resume();
      }
    }
  };

  /** Every slot is taken: close the stalest connection that holds no control and did nothing useful for yieldAfterMs; false when there is none. */
  function yieldSlot(): boolean {
    if (yieldAfterMs <= 0) return false;
    const now = performance.now();
    let stalest: Connection | null = null;
    for (const c of connections) {
      if (c.yielded || c.leaseId !== null || c.acquiring || now - c.lastUsefulMs < yieldAfterMs) continue;
      if (!stalest || c.lastUsefulMs < stalest.lastUsefulMs) stalest = c;
    }
    if (!stalest) return false;
    stalest.yielded = true;
    yielding++;
    slotsYielded++;
    stalest.ws.close(1008, `slot given to a new connection: no control and no request for ${Math.round(now - stalest.lastUsefulMs)} ms`);
    setTimeout(() => stalest.ws.terminate(), 1000).unref(); // a peer that never answers the close frame
    return true;
  }

  function onConnection(ws: WebSocket, req: IncomingMessage): void {
    sockets.add(ws);
    accepted++;
    const conn: Connection = {
      id: nextId++,
      owner: `tny:${req.socket.remoteAddress ?? "?"}:${req.socket.remotePort ?? "?"}#${nextId - 1}`,
      leaseId: null,
      latchedOut: false,
      latchedOutNoted: false,
      acquiring: null,
      lastUsefulMs: performance.now(),
      lastFrameMs: performance.now(),
      yielded: false,
      closed: false,
      paused: false,
      deferred: false,
      ws,
    };
    connections.add(conn);
    // NOTE: hot path (every command frame): the closures are made once per connection, not per frame.
    const take = (): Awaitable<string | null> => {
      if (conn.latchedOut) {
        noteLatchedOut(conn);
        return null;
      }
      if (robot.authority.holder() !== null) return null; // someone else holds it: refused without building a reason here
      const got = then(robot.authority.acquire(conn.owner, "tny", leaseMs), (r) => {
        conn.acquiring = null;
        if (!r.ok) return null; // held by someone else: the robot refuses and logs who holds it
        conn.leaseId = r.lease.id;
        return conn.leaseId;
      });
      if (got instanceof Promise) conn.acquiring = got.finally(() => (conn.acquiring = null));
      return got;
    };
    const renewed = (ok: boolean): Awaitable<string | null> => (ok && conn.leaseId !== null ? conn.leaseId : take());
    const lease = (nowMs?: number): Awaitable<string | null> => {
      if (robot.authority.latched) {
        conn.latchedOut = true; // the robot answers EmergencyStop (7)
        return null;
      }
      // An acquire on its way (an authority that answers later): the next frame waits for it, never races it.
      if (conn.acquiring) return conn.acquiring.then(() => lease());
      const id = conn.leaseId;
      if (id === null) return take();
      const ok = robot.authority.renew(id, leaseMs, nowMs);
      return ok instanceof Promise ? ok.then(renewed) : ok ? id : take();
    };
    // Replies go to the socket as whole frames in one write when `ws` lets us (directReplySocket).
    const direct = directReplySocket(ws);
    const alloc = direct ? framedReply : replyAlloc;
    const send = (bytes: Uint8Array): void => {
      if (tap !== null) {
        const start = direct ? framedReplyStart(bytes) : 0;
        tap.reply(conn.id, bytes, bytes.length - start, start);
      }
      if (ws.readyState !== WebSocket.OPEN) return;
      if ((direct === null ? ws.bufferedAmount : direct.socket.writableLength) > MAX_BUFFERED_BYTES) {
        ws.close(1008, "replies are not being read");
        return;
      }
      if (direct === null) ws.send(bytes, BINARY);
      else if (direct.sender._state === SENDER_IDLE) direct.socket.write(bytes);
      else ws.send(bytes.subarray(framedReplyStart(bytes)), BINARY); // ws queues (it never does here): keep its order
    };
    // Idle timeout: every frame the client sends moves its start. NOTE: hot path: a frame only
    // stamps the time; the one timer looks at the stamp when it fires and waits out the rest.
    let idleTimer: ReturnType<typeof setTimeout> | null = null;
    const onIdle = (): void => {
      const quietMs = performance.now() - conn.lastFrameMs;
      if (quietMs < idleMs) {
        idleTimer = setTimeout(onIdle, idleMs - quietMs);
        return;
      }
      idleClosed++;
      ws.close(1000, `idle for ${idleMs} ms`);
    };
    if (idleMs > 0) idleTimer = setTimeout(onIdle, idleMs);
    const serve = (frame: Uint8Array, now: number, robotNow: number): void => {
      let out: Uint8Array | Promise<Uint8Array> | null;
      const understood = stats.understood;
      try {
        beforeFrame?.();
        out = dispatchTnyFrame(frame, robot, lease, stats, robotNow, alloc);
      } catch {
        return; // dispatchTnyFrame answers every request itself; this is a last guard
      } finally {
        if (stats.understood !== understood) conn.lastUsefulMs = now;
      }
      if (out === null) return;
      if (out instanceof Promise) out.then(send, () => undefined);
      else send(out);
    };
    ws.on("message", (data, isBinary) => {
      const now = performance.now();
      conn.lastFrameMs = now;
      if (!isBinary) {
        ws.close(1003, "binary frames only");
        return;
      }
      const frame = toBytes(data);
      tap?.request(conn.id, frame, frame.length);
      if (waiting.length > 0 || (mayServe !== null && !mayServe(now))) wait(conn, serve, frame, now, false);
      else if (inBurst(now)) serve(frame, now, wallIsRobotClock ? now : robotClock.nowMs());
      else wait(conn, serve, frame, now, true);
    });
    ws.on("error", () => undefined); // ws closes the socket; the close handler cleans up
    ws.on("close", () => {
      conn.closed = true;
      if (idleTimer) clearTimeout(idleTimer);
      if (conn.yielded) yielding--;
      sockets.delete(ws);
      connections.delete(conn);
      if (conn.leaseId) void Promise.resolve(robot.authority.release(conn.leaseId)).catch(() => {}); // the runtime then clears this client's velocity
      conn.leaseId = null;
    });
  }

  await new Promise<void>((resolve, reject) => {
    http.once("error", reject);
    http.listen(opts.port ?? TNY_DEFAULT_PORT, host, () => {
      http.off("error", reject);
      resolve();
    });
  });
  const address = http.address();
  const port = typeof address === "object" && address ? address.port : (opts.port ?? TNY_DEFAULT_PORT);

  return {
    host,
    port,
    stats: () => ({
      connections: sockets.size,
      accepted,
      refusedConnections,
      refusedAccess,
      idleClosed,
      slotsYielded,
      requests: stats.requests,
      ignoredFrames: stats.ignored,
      repliesByStatus: [...stats.byStatus],
      framesWaited: waited,
    }),
    requestCount: () => stats.requests,
    close: async () => {
      robot.authority.off("released", onReleased);
      for (const ws of sockets) ws.close(1001, "server closing");
      await new Promise<void>((resolve) => {
        const t = setTimeout(() => {
          for (const ws of sockets) ws.terminate();
          resolve();
        }, 500);
        const check = (): void => {
          if (sockets.size === 0) {
            clearTimeout(t);
            resolve();
          } else setTimeout(check, 5);
        };
        check();
      });
      wss.close();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

const STATUS_TEXT: Readonly<Record<number, string>> = { 401: "Unauthorized", 403: "Forbidden", 415: "Unsupported Media Type", 421: "Misdirected Request" };

function toBytes(data: WebSocket.RawData): Uint8Array {
  if (Array.isArray(data)) return new Uint8Array(Buffer.concat(data));
  if (data instanceof ArrayBuffer) return new Uint8Array(data);
  return data; // a Buffer is a Uint8Array: no view per frame
}
