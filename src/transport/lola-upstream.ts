/**
 * A client of the robot's own LoLA (docs/lola.md): bodylink on a stock NAO
 * talks to the body through Aldebaran's LoLA socket (`/tmp/robocup`) instead of the chest board.
 *
 * - **Connects, and keeps connecting.** A socket that is not there yet (LoLA starts after
 *   bodylink, or restarts: `Restart=on-failure`) is waited for, with backoff from `retryMinMs`
 *   doubling to `retryMaxMs`. The backoff starts over once a connection has delivered a message.
 * - **Frames by MessagePack structure, not by 896-byte reads**, so a split or merged write never
 *   desynchronises, and bytes that are not a sensor message are recognised as such. Each complete
 *   message is decoded at once into {@link LolaUpstream.staged} (one message's values); the newest
 *   wins when several arrive together (HULKs' draining reader). The driver copies `staged` into
 *   the state inside the cycle, so the state only ever changes there.
 * - **Faults.** The upstream closing, stalling (no message for `stallMs`) or sending garbage is a
 *   fault: `onFault` is told at once, while the socket may still be writable, so the driver can
 *   send its last command (stiffness 0). Garbage closes the connection (there is no next message
 *   boundary to resume at) and reconnects. A stall keeps the connection: LoLA may resume (its
 *   "Real time broken" cycles); after `reconnectAfterStallMs` without a message it is closed and
 *   reconnected too.
 * - **Commands.** `send()` writes one command per call from its own copy of the bytes, and never
 *   queues: while the previous command has not left the socket buffer the new one is dropped and
 *   counted (LoLA applies the newest command anyway).
 * - **Tap.** Every complete sensor message exactly as received and every command exactly as sent
 *   go to `tap` (the recorder's; src/record/tap.ts `RecordTap.lolaUpstream`).
 *
 * Perform side (socket data, send) allocates nothing in steady state beyond what Node itself makes
 * per read callback and per write(2) call; connecting, faults and logging allocate. The least that
 * is safe, per message (docs/performance.md): the socket reads into this client's own buffer (Node's `onread`:
 * no Buffer, no stream machinery, no 'data' event per read; that machinery was a sixth of the
 * proxy's core thread), each message is decoded once, from that buffer, into `staged`; a command
 * leaves with one write(2) on the descriptor (`fs.writeSync`), `socket.write` only for what the
 * kernel did not take. No servers, no main-thread globals: it runs in a worker thread as well.
 */
import { writeSync } from "node:fs";
import { type NetConnectOpts, type Socket, connect } from "node:net";
import { LOLA_SOCKET_PATH } from "../wire/lola/constants.js";
import { LOLA_MAX_SENSOR_MESSAGE_BYTES, LOLA_NEED_MORE, LolaSensorError, LolaSensorReader, type LolaSensorTarget } from "../wire/lola/sensor-reader.js";
import type { LolaRobotConfig } from "../wire/lola/sensor-message.js";
import { SilenceTimer } from "./silence-timer.js";

/** What the recorder's tap takes (src/record/tap.ts `LolaTap`), structurally. Perform side. */
export interface LolaUpstreamTap {
  /** A sensor message as received from the upstream: `bytes[0, length)`. */
  sensor(bytes: Uint8Array, length: number): void;
  /** A command as sent upstream (`client` is 0: there is one upstream connection). */
  command(client: number, bytes: Uint8Array, length: number): void;
}

export type LolaUpstreamLogLevel = "info" | "warn";
export type LolaUpstreamLog = (level: LolaUpstreamLogLevel, message: string) => void;

export interface LolaUpstreamOptions {
  /** The upstream LoLA's socket. Defaults to `/tmp/robocup`. */
  path?: string;
  /** First reconnect delay, ms. Defaults to 100. */
  retryMinMs?: number;
  /** Longest reconnect delay (the backoff doubles up to it), ms. Defaults to 2000. */
  retryMaxMs?: number;
  /** No message for this long on an open connection is a stall (a fault), ms. Defaults to 60 (5 cycles, like the chest board's "lost"). */
  stallMs?: number;
  /** A stall this long closes the connection and reconnects, ms. Defaults to 1000. */
  reconnectAfterStallMs?: number;
  /** A sensor message larger than this is garbage. Defaults to 4096 (LoLA's are 896). */
  maxMessageBytes?: number;
  tap?: LolaUpstreamTap | null;
  /** Defaults to stderr, prefixed "LoLA upstream:". */
  log?: LolaUpstreamLog;
}

/** Where the link is. */
export type LolaUpstreamStatus =
  /** Not started, or closed by `close()`. */
  | "idle"
  /** Waiting for the upstream's socket (not there, or refusing), retrying with backoff. */
  | "waiting"
  /** Connected, no message yet. */
  | "connected"
  /** Messages arrive. */
  | "streaming"
  /** Connected, but no message for `stallMs`. */
  | "stalled";

export type LolaUpstreamFaultKind = "closed" | "stalled" | "garbage";

/** Told about each fault as it happens. `writable`: whether a last command can still be sent. Prepare side. */
export type LolaUpstreamFaultListener = (kind: LolaUpstreamFaultKind, reason: string, writable: boolean) => void;

/** `send()` results. */
export const SEND = { Sent: 0, Busy: 1, NotConnected: 2 } as const;
export type SendResult = (typeof SEND)[keyof typeof SEND];

/** One message's values, in LoLA's order and units (the reader's target). */
export class LolaSensorArrays implements LolaSensorTarget {
  readonly stiffness = new Float32Array(25);
  readonly position = new Float32Array(25);
  readonly temperature = new Float32Array(25);
  readonly current = new Float32Array(25);
  readonly battery = new Float32Array(4);
  readonly accelerometer = new Float32Array(3);
  readonly gyroscope = new Float32Array(3);
  readonly angles = new Float32Array(2);
  readonly sonar = new Float32Array(2);
  readonly fsr = new Float32Array(8);
  readonly status = new Uint8Array(25);
  readonly touch = new Float32Array(14);
}

export interface LolaUpstreamCounters {
  /** Connections made. */
  connects: number;
  /** Complete sensor messages decoded. */
  messages: number;
  /** Messages superseded by a newer one before the driver took them. */
  superseded: number;
  /** Commands written. */
  commandsSent: number;
  /** Commands dropped because the previous one had not left the socket buffer. */
  commandsDropped: number;
  closes: number;
  stalls: number;
  garbage: number;
}

const defaultLog: LolaUpstreamLog = (level, message) => {
  console.error(`LoLA upstream: ${level === "warn" ? "warning: " : ""}${message}`);
};

/** 1, 10, 100, …: how often a repeating event is logged. */
function isLogCount(n: number): boolean {
  while (n >= 10 && n % 10 === 0) n /= 10;
  return n === 1;
}

export class LolaUpstream {
  readonly path: string;
  /** The newest message's values. Copy them out with {@link take}. */
  readonly staged = new LolaSensorArrays();
  readonly counters: LolaUpstreamCounters = { connects: 0, messages: 0, superseded: 0, commandsSent: 0, commandsDropped: 0, closes: 0, stalls: 0, garbage: 0 };
  /** Called on the perform side after each socket read that completed at least one message. Keep it cheap. */
  onMessage: (() => void) | null = null;
  onFault: LolaUpstreamFaultListener | null = null;
  readonly #opts: Required<Omit<LolaUpstreamOptions, "tap" | "log" | "path">>;
  readonly #tap: LolaUpstreamTap | null;
  readonly #log: LolaUpstreamLog;
  readonly #reader: LolaSensorReader;
  #status: LolaUpstreamStatus = "idle";
  #socket: Socket | null = null;
  /** Bytes of an incomplete message, starting at a message boundary. */
  #buf: Uint8Array;
  #len = 0;
  /** Messages decoded into `staged` and not taken yet. */
  #fresh = 0;
  #out = new Uint8Array(1024);
  /** The socket's read buffer (onread: every read lands here; valid until the next read). */
  readonly #rx = Buffer.alloc(16 * 1024);
  /** The connection's descriptor for direct writes, or -1 (every command goes through socket.write). */
  #fd = -1;
  /** A message handed to the tap when it does not start its buffer. */
  readonly #tapBuf: Uint8Array;
  #retryMs: number;
  #retries = 0;
  #retryTimer: ReturnType<typeof setTimeout> | null = null;
  /** The stall bound: each message stamps it, and it looks at the newest stamp when it fires (no timer work per message). */
  readonly #stall: SilenceTimer;
  #reconnectTimer: ReturnType<typeof setTimeout> | null = null;
  #running = false;
  #lastFault = "";
  #waitingReason = "";

  constructor(opts: LolaUpstreamOptions = {}) {
    this.path = opts.path ?? LOLA_SOCKET_PATH;
    const o = {
      retryMinMs: opts.retryMinMs ?? 100,
      retryMaxMs: opts.retryMaxMs ?? 2000,
      stallMs: opts.stallMs ?? 60,
      reconnectAfterStallMs: opts.reconnectAfterStallMs ?? 1000,
      maxMessageBytes: opts.maxMessageBytes ?? LOLA_MAX_SENSOR_MESSAGE_BYTES,
    };
    for (const [k, v] of Object.entries(o)) if (!(Number.isFinite(v) && v > 0)) throw new RangeError(`${k} must be a positive number, got ${v}`);
    if (o.retryMaxMs < o.retryMinMs) throw new RangeError(`retryMaxMs (${o.retryMaxMs}) must be at least retryMinMs (${o.retryMinMs})`);
    this.#opts = o;
    this.#tap = opts.tap ?? null;
    this.#log = opts.log ?? defaultLog;
    this.#reader = new LolaSensorReader(this.staged, { maxMessageBytes: o.maxMessageBytes });
    this.#buf = new Uint8Array(Math.max(2048, 2 * o.maxMessageBytes));
    this.#tapBuf = new Uint8Array(o.maxMessageBytes);
    this.#retryMs = o.retryMinMs;
    this.#stall = new SilenceTimer(o.stallMs, () => this.#onStallTimer());
  }

  /** When the last message came (performance.now() ms; -Infinity before the first): the driver's fallback counts from it too. */
  get lastMessageAtMs(): number {
    return this.#stall.lastAtMs;
  }

  /** No message for this long on an open connection is a stall, ms. */
  get stallMs(): number {
    return this.#opts.stallMs;
  }
  get status(): LolaUpstreamStatus {
    return this.#status;
  }
  /** True while a connection is open (streaming, stalled or not yet streaming). */
  get connected(): boolean {
    return this.#socket !== null;
  }
  /** RobotConfig of the newest message (null before the first). */
  get robotConfig(): LolaRobotConfig | null {
    return this.#reader.robotConfig;
  }
  /** How often RobotConfig changed (a new robot behind the socket shows as a change). */
  get robotConfigChanges(): number {
    return this.#reader.robotConfigChanges;
  }
  /** Messages decoded into `staged` and not taken yet. */
  get pending(): number {
    return this.#fresh;
  }
  /** The last fault, or "" before any. */
  get lastFault(): string {
    return this.#lastFault;
  }

  /** Start connecting (and reconnecting). Never throws for link reasons; see `status`. */
  start(): void {
    if (this.#running) return;
    this.#running = true;
    this.#connect();
  }

  /**
   * Perform side: true when a message arrived since the last call (its values are in `staged`);
   * messages that arrived in between and were overwritten are counted as superseded.
   */
  take(): boolean {
    const n = this.#fresh;
    if (n === 0) return false;
    if (n > 1) this.counters.superseded += n - 1;
    this.#fresh = 0;
    return true;
  }

  /** Perform side: what `send()` would answer now (nothing is counted or written). */
  canSend(): SendResult {
    const s = this.#socket;
    if (!s?.writable) return SEND.NotConnected;
    return s.writableLength > 0 ? SEND.Busy : SEND.Sent;
  }

  /** Perform side: a command the caller dropped because `canSend()` said Busy. */
  countDropped(): void {
    this.counters.commandsDropped++;
  }

  /**
   * Perform side: send one command (`bytes[0, length)`, copied). Busy when the previous one has
   * not left the socket buffer (nothing is queued), NotConnected without a connection.
   */
  send(bytes: Uint8Array, length = bytes.length): SendResult {
    const s = this.#socket;
    if (!s?.writable) return SEND.NotConnected;
    if (s.writableLength > 0) {
      this.counters.commandsDropped++;
      return SEND.Busy;
    }
    if (this.#out.length < length) this.#out = new Uint8Array(length);
    // A socket.write keeps a reference, so the bytes are copied into #out, which is not touched
    // again until the socket buffer is empty. No view of it per command (~100 bytes each): the
    // direct write takes the range; only the rare rest that socket.write queues is a view.
    const out = this.#out;
    out.set(length === bytes.length ? bytes : bytes.subarray(0, length));
    let n = 0;
    if (this.#fd >= 0) {
      try {
        n = writeSync(this.#fd, out, 0, length);
      } catch {
        // EAGAIN (LoLA's buffer is full): socket.write below queues it. Any other error: socket.write
        // meets it too and reports it as the socket's error (a fault).
      }
    }
    if (n < length) s.write(out.subarray(n, length));
    this.counters.commandsSent++;
    this.#tap?.command(0, out, length);
    return SEND.Sent;
  }

  /** Stop: close the connection, no reconnect. Idempotent. `send()` a last command first. */
  async close(): Promise<void> {
    this.#running = false;
    this.#clearTimers();
    const s = this.#socket;
    this.#socket = null;
    this.#status = "idle";
    if (s && !s.destroyed) {
      await new Promise<void>((resolve) => {
        const t = setTimeout(() => {
          s.destroy();
          resolve();
        }, 200);
        t.unref?.();
        s.once("close", () => {
          clearTimeout(t);
          resolve();
        });
        s.end(); // what was written (the last command) goes out first
      });
    }
  }

  #connect(): void {
    if (!this.#running) return;
    let opened = false;
    // NOTE: hot path: each read lands in #rx and is framed from there (no Buffer per read).
    const s: Socket = connect({
      path: this.path,
      onread: {
        buffer: this.#rx,
        callback: (n: number): boolean => {
          if (this.#socket === s) this.#onData(this.#rx, n);
          return true;
        },
      },
    } as NetConnectOpts);
    s.once("connect", () => {
      if (!this.#running) {
        s.destroy();
        return;
      }
      opened = true;
      this.#socket = s;
      const fd = (s as unknown as { _handle?: { fd?: unknown } | null })._handle?.fd;
      this.#fd = typeof fd === "number" && fd >= 0 ? fd : -1;
      this.#len = 0;
      this.#status = "connected";
      this.counters.connects++;
      this.#waitingReason = "";
      this.#log("info", `connected to LoLA at ${this.path}${this.#retries > 0 ? ` after ${this.#retries} retries` : ""}`);
      this.#retries = 0;
      this.#stall.restart(); // the silence counts from the connection
    });
    s.on("error", (e: NodeJS.ErrnoException) => {
      if (!opened) {
        const why = `${e.code ?? "error"}: ${e.code === "ENOENT" ? "no socket there yet" : e.code === "ECONNREFUSED" ? "nothing accepts on it" : e.message}`;
        if (why !== this.#waitingReason || isLogCount(this.#retries + 1)) {
          this.#log(
            this.#waitingReason === "" ? "info" : "warn",
            `waiting for LoLA at ${this.path} (${why}); retrying every ${this.#retryMs}..${this.#opts.retryMaxMs} ms${this.#retries > 0 ? ` [${this.#retries + 1} tries]` : ""}`,
          );
          this.#waitingReason = why;
        }
      } else if (this.#socket === s) {
        this.#lastError = `${e.code ?? ""} ${e.message}`.trim();
      }
    });
    s.on("close", () => {
      if (!opened) {
        this.#status = this.#running ? "waiting" : "idle";
        this.#scheduleRetry();
        return;
      }
      if (this.#socket !== s) return; // we closed it ourselves (garbage, stall, close())
      this.#socket = null;
      this.counters.closes++;
      const reason = `LoLA closed the connection${this.#lastError ? ` (${this.#lastError})` : ""}${this.#len > 0 ? ` in the middle of a message (${this.#len} bytes)` : ""}`;
      this.#lastError = "";
      this.#fault("closed", reason, false);
      this.#status = this.#running ? "waiting" : "idle";
      this.#scheduleRetry();
    });
  }

  #lastError = "";

  #scheduleRetry(): void {
    if (!this.#running || this.#retryTimer) return;
    const delay = this.#retryMs;
    this.#retryMs = Math.min(this.#opts.retryMaxMs, this.#retryMs * 2);
    this.#retries++;
    this.#retryTimer = setTimeout(() => {
      this.#retryTimer = null;
      this.#connect();
    }, delay);
    this.#retryTimer.unref?.();
  }

  /**
   * `stallMs` passed since the last message. Timers run before socket reads in an event-loop turn,
   * so after a pause of this process (GC, a loaded machine) the timer would fire although LoLA's
   * messages are waiting: decide after the turn's reads (setImmediate), only if still nothing came
   * (a message that came meanwhile armed the timer again).
   */
  #onStallTimer(): void {
    const before = this.counters.messages;
    setImmediate(() => {
      if (this.counters.messages === before) this.#onStall();
    });
  }

  #onStall(): void {
    const s = this.#socket;
    if (!s) return;
    this.#status = "stalled";
    this.counters.stalls++;
    this.#fault("stalled", `no message from LoLA for ${this.#opts.stallMs} ms`, s.writable);
    this.#reconnectTimer = setTimeout(() => {
      this.#reconnectTimer = null;
      if (this.#socket !== s) return;
      this.#log("warn", `still no message after ${this.#opts.reconnectAfterStallMs} ms: closing the connection and reconnecting`);
      this.#drop(s);
    }, this.#opts.reconnectAfterStallMs);
    this.#reconnectTimer.unref?.();
  }

  /**
   * Perform side: frame and decode `chunk[0, length)` (what one read brought; the socket's own
   * buffer, overwritten by the next read); the newest complete message ends up in `staged`.
   */
  #onData(chunk: Uint8Array, length: number): void {
    let got = 0;
    let off = 0;
    while (off < length) {
      if (this.#len === 0) {
        // Nothing pending: decode straight from the chunk; keep only an incomplete tail.
        const pos = this.#frame(chunk, off, length);
        if (pos < 0) return;
        got += this.#framed;
        const tail = length - pos;
        // The decoder gives up on a message longer than maxMessageBytes, so a tail fits.
        if (tail > 0) this.#buf.set(chunk.subarray(pos, length), 0);
        this.#len = tail;
        break;
      }
      // Complete the pending message from as much of the chunk as the buffer takes.
      const n = Math.min(length - off, this.#buf.length - this.#len);
      this.#buf.set(chunk.subarray(off, off + n), this.#len);
      this.#len += n;
      off += n;
      const pos = this.#frame(this.#buf, 0, this.#len);
      if (pos < 0) return;
      got += this.#framed;
      if (pos > 0) this.#buf.copyWithin(0, pos, this.#len);
      this.#len -= pos;
    }
    if (got === 0) return;
    this.#fresh += got;
    if (this.#status !== "streaming") {
      if (this.#status === "stalled") this.#log("info", "LoLA is sending again");
      this.#status = "streaming";
      this.#retryMs = this.#opts.retryMinMs; // a connection that delivered resets the backoff
    }
    const stall = this.#stall;
    stall.stamp();
    if (!stall.armed) stall.arm(); // once per stall bound, or after a stall (see SilenceTimer)
    if (this.#reconnectTimer) {
      clearTimeout(this.#reconnectTimer);
      this.#reconnectTimer = null;
    }
    this.onMessage?.();
  }

  /** Messages completed by the last #frame call. */
  #framed = 0;

  /**
   * Decode every complete message in src[from, to): the offset after the last one, or -1 after
   * garbage (handled: the connection is dropped, and messages before it in the same read are not
   * handed to the driver).
   */
  #frame(src: Uint8Array, from: number, to: number): number {
    let pos = from;
    this.#framed = 0;
    while (pos < to) {
      let end: number;
      try {
        end = this.#reader.decode(src, pos, to);
      } catch (e) {
        if (!(e instanceof LolaSensorError)) throw e;
        this.#garbage(e.message);
        return -1;
      }
      if (end === LOLA_NEED_MORE) break;
      const tap = this.#tap;
      if (tap) {
        // The tap takes bytes[0, length): copy a message that does not start the buffer.
        if (pos === 0) tap.sensor(src, end);
        else {
          this.#tapBuf.set(src.subarray(pos, end), 0);
          tap.sensor(this.#tapBuf, end - pos);
        }
      }
      pos = end;
      this.#framed++;
      this.counters.messages++;
    }
    return pos;
  }

  #garbage(reason: string): void {
    const s = this.#socket;
    this.counters.garbage++;
    this.#len = 0;
    this.#fault("garbage", `LoLA sent bytes that are not a sensor message: ${reason}`, !!s?.writable);
    if (s) this.#drop(s);
  }

  /** Close a connection we gave up on; the close handler is bypassed, so reconnect here. */
  #drop(s: Socket): void {
    if (this.#socket === s) this.#socket = null;
    this.#clearConnectionTimers();
    this.counters.closes++;
    s.end(); // flush the last command, then FIN
    const t = setTimeout(() => s.destroy(), 100);
    t.unref?.();
    s.once("close", () => clearTimeout(t));
    this.#status = this.#running ? "waiting" : "idle";
    this.#scheduleRetry();
  }

  #fault(kind: LolaUpstreamFaultKind, reason: string, writable: boolean): void {
    this.#lastFault = reason;
    this.#clearConnectionTimers();
    this.#log("warn", `${reason}${kind === "stalled" ? "" : "; reconnecting"}`);
    try {
      this.onFault?.(kind, reason, writable);
    } catch (e) {
      this.#log("warn", `fault listener threw: ${(e as Error)?.stack ?? String(e)}`);
    }
  }

  #clearConnectionTimers(): void {
    this.#stall.cancel();
    if (this.#reconnectTimer) {
      clearTimeout(this.#reconnectTimer);
      this.#reconnectTimer = null;
    }
  }

  #clearTimers(): void {
    this.#clearConnectionTimers();
    if (this.#retryTimer) {
      clearTimeout(this.#retryTimer);
      this.#retryTimer = null;
    }
  }
}
