/**
 * The robot API's state stream: one JSON text message per 50 ms (20 Hz) to every subscriber.
 *
 * Nothing runs for nobody: the stream listens to the body only while it has subscribers. Pacing:
 * - a body with a sampler (BodyRuntime.onSample: a host whose core cycles in another thread) is
 *   sampled at the stream's rate by this thread's timer, so this thread wakes 20 times a second,
 *   not once per body cycle (83 Hz on the NAO), and reads the newest state when it sends;
 * - a body on this thread (an in-thread robot, simulated time in tests) paces it by its cycles:
 *   the cycle listener compares the cycle's time with the next deadline and, when due, advances
 *   the deadline by one period (no drift; after a stall it restarts from now instead of bursting).
 * Either way one broadcast is scheduled with setImmediate, so it runs after the cycle, never inside
 * it: the cycle's own work is not delayed by JSON or sockets.
 *
 * Slow clients: the message is encoded once and the same bytes go to every socket. A socket that
 * still holds unsent bytes from earlier messages (`bufferedAmount` above the bound, default 0) is
 * skipped for this tick and counted; it gets the newest state when it has caught up, never a
 * backlog from user space. (Bytes already handed to the kernel stay there; the SDK keeps only the
 * newest message and applies its staleness bound, so it never acts on an old state.)
 *
 * Subscribers that do not read are dropped, not kept (state is lossy by design: a subscriber only
 * ever needs the newest message): one skipped `dropAfterSkipped` times in a row (2 s), one with
 * more than `dropBufferedBytes` unsent, and one that does not answer a ping within
 * `pingIntervalMs` are closed with 1008 and a reason. At most `maxSubscribers` (256) at once.
 *
 * Sending to many subscribers is done in slices of at most `sliceMs` (default 0.1 ms of the
 * runtime clock), yielding to the event loop between slices, so that a broadcast to hundreds of
 * sockets never delays the next cycle's timer by more than one slice.
 *
 * How long each slice held the event loop is recorded (a ring of the last 1,024 slices): it is the
 * most the stream can delay the next cycle's wake-up, and /v1/health reports it, so the bound above
 * is a measurement and not only a design.
 *
 * Prepare side: allocates one string, one buffer and one socket list per broadcast. The cycle
 * listener does not allocate except the one setImmediate per period. Encoding the message is a
 * slice of its own; the sends start after a yield.
 */
import type { WebSocket } from "ws";
import { quantileOfSorted } from "../../runtime/timing.js";
import type { BodyAdapter } from "./adapter.js";
import { API_VERSION } from "./schemas.js";

export interface StreamOptions {
  /** Messages per second. Defaults to 20. */
  rateHz?: number;
  /** Skip a subscriber whose unsent bytes exceed this. Defaults to 0: skip while anything is pending. */
  maxBufferedBytes?: number;
  /** Longest stretch of sending before yielding to the event loop, ms. Defaults to 0.1 (checked after every send). */
  sliceMs?: number;
  /** Most subscribers at once; the next upgrade is refused with 503. Defaults to 256. */
  maxSubscribers?: number;
  /**
   * A subscriber skipped this many messages in a row (it reads nothing; its kernel buffer stays full)
   * is closed with 1008 and a reason. Defaults to 40 (2 s at 20 Hz).
   */
  dropAfterSkipped?: number;
  /** A subscriber whose unsent bytes (user space) exceed this is closed with 1008. Defaults to 1 MiB. */
  dropBufferedBytes?: number;
  /** Ping every subscriber this often; one that has not answered the previous ping is dropped. Defaults to 10000 ms; 0 disables. */
  pingIntervalMs?: number;
}

/** Close code for a subscriber the server drops (policy violation: it does not read). */
export const STREAM_DROP_CODE = 1008;

const OPEN = 1;

export class StateStream {
  readonly #adapter: BodyAdapter;
  readonly #periodMs: number;
  readonly #maxBuffered: number;
  readonly #sockets = new Set<WebSocket>();
  readonly #maxSubscribers: number;
  readonly #dropAfterSkipped: number;
  readonly #dropBufferedBytes: number;
  /** Messages skipped in a row, per subscriber; and whether it answered the last ping. */
  readonly #skippedInRow = new WeakMap<WebSocket, number>();
  readonly #alive = new WeakMap<WebSocket, boolean>();
  readonly #pingMs: number;
  /** The ping timer, running only while there are subscribers (an idle stream has no timer). */
  #pingTimer: ReturnType<typeof setInterval> | null = null;
  /** Subscribers dropped for not reading (skips, unsent bytes) or not answering pings. */
  subscribersDropped = 0;
  /** Listening to the body (while there are subscribers), or null. */
  #unsubscribe: (() => void) | null = null;
  readonly #sliceMs: number;
  #nextDueMs = Number.NaN;
  #scheduled = false;
  // The broadcast in progress: its bytes, its socket list and how far it got.
  #bytes: Buffer | null = null;
  #targets: WebSocket[] = [];
  #next = 0;
  messagesSent = 0;
  messagesSkipped = 0;
  // Durations of the most recent send slices, ms (ring), and the longest since the last reset.
  readonly #slices = new Float64Array(1024);
  #sliceCount = 0;
  #sliceMaxMs = 0;
  #sliceScheduled = false;

  constructor(adapter: BodyAdapter, opts: StreamOptions = {}) {
    const rate = opts.rateHz ?? 20;
    if (!(rate > 0 && rate <= 1000)) throw new RangeError(`stream rate must be in (0, 1000] Hz, got ${rate}`);
    this.#adapter = adapter;
    this.#periodMs = 1000 / rate;
    this.#maxBuffered = opts.maxBufferedBytes ?? 0;
    this.#sliceMs = opts.sliceMs ?? 0.1;
    this.#maxSubscribers = opts.maxSubscribers ?? 256;
    this.#dropAfterSkipped = opts.dropAfterSkipped ?? 40;
    this.#dropBufferedBytes = opts.dropBufferedBytes ?? 1 << 20;
    const ping = opts.pingIntervalMs ?? 10_000;
    // Wall-clock timer on the server's side, never in the cycle: pings find dead peers (#listen starts it).
    this.#pingMs = ping;
  }

  /** Listen to the body from the first subscriber on (sampled at the stream's rate where the body can). */
  #listen(): void {
    if (this.#unsubscribe) return;
    this.#nextDueMs = Number.NaN;
    if (this.#pingMs > 0 && !this.#pingTimer) {
      this.#pingTimer = setInterval(this.#pingAll, this.#pingMs);
      this.#pingTimer.unref();
    }
    this.#unsubscribe = this.#adapter.onSample(this.#periodMs, this.#onSample) ?? this.#adapter.onCycle(this.#onCycle);
  }

  /** The last subscriber left: nothing listens to the body for the stream any more. */
  #quiet(): void {
    if (this.#sockets.size > 0 || !this.#unsubscribe) return;
    this.#unsubscribe();
    this.#unsubscribe = null;
    if (this.#pingTimer) clearInterval(this.#pingTimer);
    this.#pingTimer = null;
  }

  #remove(s: WebSocket): void {
    this.#sockets.delete(s);
    this.#quiet();
  }

  /** True when one more subscriber would exceed the cap (the route answers 503 before upgrading). */
  get full(): boolean {
    return this.#sockets.size >= this.#maxSubscribers;
  }
  get maxSubscribers(): number {
    return this.#maxSubscribers;
  }

  /** Close a subscriber that does not read, with a reason it can show (and count it). */
  #drop(s: WebSocket, reason: string): void {
    this.subscribersDropped++;
    this.#remove(s);
    s.close(STREAM_DROP_CODE, reason);
    // A peer that reads nothing may never complete the closing handshake either.
    setTimeout(() => s.terminate(), 2000).unref();
  }

  readonly #pingAll = (): void => {
    for (const s of this.#sockets) {
      if (this.#alive.get(s) === false) {
        this.#drop(s, "no answer to ping");
        continue;
      }
      this.#alive.set(s, false);
      s.ping();
    }
  };

  get rateHz(): number {
    return 1000 / this.#periodMs;
  }
  get subscribers(): number {
    return this.#sockets.size;
  }

  /** A new subscriber: hello now, then the current state at once (if any), then every period. */
  add(socket: WebSocket): void {
    // The route refuses upgrades once full; two upgrades racing past that check end here.
    if (this.full) {
      socket.close(1013, `at most ${this.#maxSubscribers} subscribers; try again later`);
      return;
    }
    this.#sockets.add(socket);
    this.#listen();
    this.#alive.set(socket, true);
    socket.on("pong", () => this.#alive.set(socket, true));
    socket.on("close", () => this.#remove(socket));
    socket.on("error", () => this.#remove(socket));
    // Messages from clients carry no meaning yet; ignore them rather than fail.
    const a = this.#adapter;
    socket.send(
      JSON.stringify({
        type: "hello",
        body: a.kind,
        api_version: API_VERSION,
        joint_names: a.jointNames,
        rate_hz: this.rateHz,
        epoch_ms: a.robot.clock.epochMs(),
      }),
    );
    // The current state at once, unless a broadcast of it is already scheduled (no duplicate seq).
    if (!this.#scheduled) {
      const now = this.encode();
      if (now) socket.send(now, { binary: false });
    }
  }

  /**
   * How long one send slice held the event loop, ms: the 99th percentile over the last 1,024
   * slices and the longest since the last reset (prepare side: sorts a copy).
   */
  sliceStats(): { p99Ms: number; maxMs: number; slices: number } {
    const n = Math.min(this.#sliceCount, this.#slices.length);
    return { p99Ms: quantileOfSorted(this.#slices.slice(0, n).sort(), 0.99), maxMs: this.#sliceMaxMs, slices: this.#sliceCount };
  }

  /** Forget the slice figures (benchmarks measure windows). */
  resetSliceStats(): void {
    this.#sliceCount = 0;
    this.#sliceMaxMs = 0;
  }

  /** The current state as the stream's message bytes, or null when there is no state yet. */
  encode(): Buffer | null {
    const a = this.#adapter;
    const src = a.source();
    if (!src) return null;
    const fields = a.read("stream");
    if (!fields) return null;
    const msg = { type: "state", body: a.kind, seq: src.seq, timestamp_ms: src.timestampMs, epoch_ms: src.epochMs, link: src.link, ...fields };
    // (A test checks that no adapter's fields reuse an envelope name, so nothing is overwritten.)
    return Buffer.from(JSON.stringify(msg));
  }

  /** Stop pacing and close every subscriber (server shutdown). */
  close(code = 1001, reason = "server shutting down"): void {
    this.#unsubscribe?.();
    this.#unsubscribe = null;
    if (this.#pingTimer) clearInterval(this.#pingTimer);
    this.#pingTimer = null;
    for (const s of this.#sockets) s.close(code, reason);
    this.#sockets.clear();
  }

  /** A sample at the stream's rate (the body's sampler): one broadcast. */
  readonly #onSample = (): void => {
    if (this.#sockets.size === 0) return;
    if (!this.#scheduled) {
      this.#scheduled = true;
      setImmediate(this.#broadcast);
    }
  };

  /** Perform side, after every cycle: a comparison, and one setImmediate per period. */
  readonly #onCycle = (_seq: number, nowMs: number): void => {
    if (this.#sockets.size === 0) {
      this.#nextDueMs = Number.NaN;
      return;
    }
    if (nowMs < this.#nextDueMs) return;
    const p = this.#periodMs;
    // Keep the deadline grid (exact 20 Hz on average); after a stall, restart from now.
    this.#nextDueMs = Number.isNaN(this.#nextDueMs) || nowMs - this.#nextDueMs >= p ? nowMs + p : this.#nextDueMs + p;
    if (!this.#scheduled) {
      this.#scheduled = true;
      setImmediate(this.#broadcast);
    }
  };

  readonly #broadcast = (): void => {
    this.#scheduled = false;
    if (this.#sockets.size === 0) return;
    // Encoding holds the event loop too (40–85 µs): it is a slice of its own, and the sends
    // start after a yield.
    const clock = this.#adapter.robot.clock;
    const t0 = clock.nowMs();
    const bytes = this.encode();
    this.#recordSlice(clock.nowMs() - t0);
    if (!bytes) return;
    // A broadcast still in progress is superseded: the sockets it did not reach get this newer one.
    this.#bytes = bytes;
    this.#targets = [...this.#sockets];
    this.#next = 0;
    this.#scheduleSlice();
  };

  /** One chain of slices at a time: a broadcast that supersedes another reuses its pending slice. */
  #scheduleSlice(): void {
    if (this.#sliceScheduled) return;
    this.#sliceScheduled = true;
    setImmediate(this.#sendSlice);
  }

  readonly #sendSlice = (): void => {
    this.#sliceScheduled = false;
    const bytes = this.#bytes;
    if (!bytes) return;
    const clock = this.#adapter.robot.clock;
    const t0 = clock.nowMs();
    const targets = this.#targets;
    while (this.#next < targets.length) {
      const s = targets[this.#next++]!;
      if (s.readyState !== OPEN) continue;
      if (s.bufferedAmount > this.#maxBuffered) {
        this.messagesSkipped++;
        const n = (this.#skippedInRow.get(s) ?? 0) + 1;
        this.#skippedInRow.set(s, n);
        if (n >= this.#dropAfterSkipped) this.#drop(s, `not reading: ${n} messages skipped in a row`);
        else if (s.bufferedAmount > this.#dropBufferedBytes) this.#drop(s, `not reading: ${s.bufferedAmount} bytes unsent`);
        continue;
      }
      if (this.#skippedInRow.get(s)) this.#skippedInRow.set(s, 0);
      s.send(bytes, { binary: false });
      this.messagesSent++;
      if (clock.nowMs() - t0 > this.#sliceMs && this.#next < targets.length) {
        this.#recordSlice(clock.nowMs() - t0);
        this.#scheduleSlice();
        return;
      }
    }
    this.#recordSlice(clock.nowMs() - t0);
    this.#bytes = null;
    this.#targets = [];
  };

  #recordSlice(ms: number): void {
    this.#slices[this.#sliceCount++ % this.#slices.length] = ms;
    if (ms > this.#sliceMaxMs) this.#sliceMaxMs = ms;
  }
}
