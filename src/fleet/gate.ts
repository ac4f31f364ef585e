/**
 * The fleet bridge's admission control for requests (`bodylink.NAME.cmd.*`, resets): a token
 * bucket per sender, one for every sender together, and a bound on requests being worked on, so
 * that a flood (one client at 64–93k `cmd.health` a second, docs/fleet.md) costs the runtime a map
 * lookup per message instead of a health computation and an answer. E-stops never pass here: they
 * ride a connection of their own (docs/fleet.md, "A stop no queue can hold").
 *
 * The sender is the request's reply subject without its last token: nats.js's requests share one
 * inbox per connection (`_INBOX.<nuid>.<n>`), and a broker with per-user inbox prefixes (the
 * setup `bodylink fleet init` writes) gives each user its own. nats-server 2.9 does not tell a
 * subscriber who published, so a client can choose its key: the per-sender bucket keeps one
 * honest client from starving the others, the total bucket holds against a client that invents a
 * new key per request, and the table of senders is bounded (past `maxSenders`, new keys share one
 * overflow bucket until idle ones are swept).
 *
 * Serving side (allocates a little per new sender; nothing per admitted request).
 */

export interface RequestLimits {
  /** Requests a second one sender may make, sustained (default 200: a 100 Hz command stream and its renewals fit). */
  readonly perSenderHz: number;
  /** Requests one sender may make at once after being idle (default 400). */
  readonly perSenderBurst: number;
  /** Requests a second from every sender together (default 2000). */
  readonly totalHz: number;
  readonly totalBurst: number;
  /** Requests being worked on (awaiting the core, the buckets) at once (default 64); past it, refused as busy. */
  readonly maxInFlight: number;
  /** Senders tracked one by one (default 1024); past it, new senders share one bucket. */
  readonly maxSenders: number;
  /** Refusals answered a second (default 100); past it, refused requests are dropped unanswered and counted. */
  readonly refusalsHz: number;
  /**
   * Refusals within one 250 ms window that make it a flood (default 500, i.e. 2,000 a second past
   * the limits): the bridge then stops taking requests for a while and drops what the broker had
   * queued for it (see {@link RequestGate.flooded}).
   */
  readonly floodRefusals: number;
}

export const DEFAULT_REQUEST_LIMITS: RequestLimits = Object.freeze({
  perSenderHz: 200,
  perSenderBurst: 400,
  totalHz: 2000,
  totalBurst: 4000,
  maxInFlight: 64,
  maxSenders: 1024,
  refusalsHz: 100,
  floodRefusals: 500,
});

const FLOOD_WINDOW_MS = 250;

/** "ok": go on (call `done()` when answered); "rate": over a bucket (429); "busy": too many in flight (503). */
export type Admission = "ok" | "rate" | "busy";

/** What the gate did, for `/v1/health` (`fleet.requests`). */
export interface GateCounters {
  admitted: number;
  /** Refused and answered (429 or 503). */
  refused: number;
  /** Refused and not answered (past `refusalsHz`), or requests without a reply subject refused. */
  dropped: number;
}

class Bucket {
  tokens: number;
  atMs: number;
  constructor(
    readonly rateHz: number,
    readonly burst: number,
    nowMs: number,
  ) {
    this.tokens = burst;
    this.atMs = nowMs;
  }
  refill(nowMs: number): void {
    const dt = nowMs - this.atMs;
    if (dt > 0) {
      this.tokens = Math.min(this.burst, this.tokens + (dt * this.rateHz) / 1000);
      this.atMs = nowMs;
    }
  }
  /** Whether a token is there now (and take it when `take`). */
  has(nowMs: number): boolean {
    this.refill(nowMs);
    return this.tokens >= 1;
  }
  take(): void {
    this.tokens -= 1;
  }
  /** Full again: it holds nothing worth keeping. */
  idle(nowMs: number): boolean {
    this.refill(nowMs);
    return this.tokens >= this.burst;
  }
}

const SWEEP_EVERY_MS = 100;
const KEY_MAX = 128;

/** The sender's key: the reply subject without its last token (bounded), or "-" without one. */
export function senderOf(reply: string | undefined): string {
  if (!reply) return "-";
  const i = reply.lastIndexOf(".");
  const k = i > 0 ? reply.slice(0, i) : reply;
  return k.length > KEY_MAX ? k.slice(0, KEY_MAX) : k;
}

export class RequestGate {
  readonly limits: RequestLimits;
  readonly counters: GateCounters = { admitted: 0, refused: 0, dropped: 0 };
  readonly #senders = new Map<string, Bucket>();
  readonly #total: Bucket;
  readonly #overflow: Bucket;
  readonly #refusals: Bucket;
  #inFlight = 0;
  #sweptAtMs = -Infinity;
  #windowAtMs = -Infinity;
  #windowRefused = 0;

  constructor(limits: Partial<RequestLimits> = {}, nowMs = performance.now()) {
    this.limits = { ...DEFAULT_REQUEST_LIMITS, ...limits };
    const l = this.limits;
    this.#total = new Bucket(l.totalHz, l.totalBurst, nowMs);
    this.#overflow = new Bucket(l.perSenderHz, l.perSenderBurst, nowMs);
    this.#refusals = new Bucket(l.refusalsHz, l.refusalsHz, nowMs);
  }

  get inFlight(): number {
    return this.#inFlight;
  }
  /** Senders tracked one by one now. */
  get senders(): number {
    return this.#senders.size;
  }

  /** Decide one request from `sender` (see {@link senderOf}). "ok" counts it in flight until `done()`. */
  admit(sender: string, nowMs = performance.now()): Admission {
    const b = this.#bucketOf(sender, nowMs);
    // The sender's own bucket first: a flooder spends its own tokens, not everyone's.
    if (!b.has(nowMs) || !this.#total.has(nowMs)) return "rate";
    if (this.#inFlight >= this.limits.maxInFlight) return "busy";
    b.take();
    this.#total.take();
    this.#inFlight++;
    this.counters.admitted++;
    return "ok";
  }

  /** An admitted request was answered (or failed). */
  done(): void {
    if (this.#inFlight > 0) this.#inFlight--;
  }

  /**
   * A refused request: whether to answer it (true: counted as refused) or drop it (counted as
   * dropped). Also counts it towards {@link flooded}.
   */
  answerRefusal(hasReply: boolean, nowMs = performance.now()): boolean {
    if (nowMs - this.#windowAtMs >= FLOOD_WINDOW_MS) {
      this.#windowAtMs = nowMs;
      this.#windowRefused = 0;
    }
    this.#windowRefused++;
    if (hasReply && this.#refusals.has(nowMs)) {
      this.#refusals.take();
      this.counters.refused++;
      return true;
    }
    this.counters.dropped++;
    return false;
  }

  /** True once `floodRefusals` refusals fell in one 250 ms window (and until the window is reset by {@link calm}). */
  get flooded(): boolean {
    return this.#windowRefused >= this.limits.floodRefusals;
  }

  /** Start counting afresh (after the bridge shed a flood). */
  calm(): void {
    this.#windowRefused = 0;
    this.#windowAtMs = -Infinity;
  }

  #bucketOf(sender: string, nowMs: number): Bucket {
    let b = this.#senders.get(sender);
    if (b) return b;
    if (this.#senders.size >= this.limits.maxSenders) {
      // Sweep the full (idle) buckets at most every 100 ms: a flood of new keys costs a lookup, not a scan.
      if (nowMs - this.#sweptAtMs < SWEEP_EVERY_MS) return this.#overflow;
      this.#sweptAtMs = nowMs;
      for (const [k, v] of this.#senders) if (v.idle(nowMs)) this.#senders.delete(k);
      if (this.#senders.size >= this.limits.maxSenders) return this.#overflow;
    }
    b = new Bucket(this.limits.perSenderHz, this.limits.perSenderBurst, nowMs);
    this.#senders.set(sender, b);
    return b;
  }
}
