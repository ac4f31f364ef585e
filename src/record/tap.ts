/**
 * The recording tap: what the real-time side (and the LoLA servers) call to put bytes into the
 * recording ring. Every method is perform side: it copies into the {@link ByteRing} and
 * returns; nothing waits, nothing allocates. A full ring refuses the record and counts it
 * (`ring.dropped`); the recorder turns that into a `recording_gap` event.
 *
 * - {@link TappedChestboard} wraps a chest-board transport and records every transfer: command
 *   frames (bulk OUT) and answer frames (bulk IN) on their own channels, vendor requests and
 *   failed transfers on `/nao/chestboard/transfer`. Installed before `configure()`, so the
 *   preference reads and the handshake are in the recording too.
 * - `lolaSensor`/`lolaCommand`: the LoLA server's messages as sent and received.
 * - `lolaUpstreamSensor`/`lolaUpstreamCommand`: for a LoLA-upstream link (bodylink as a client of
 *   Aldebaran's LoLA): the bytes exactly as received from and sent to it. This is the LoLA half
 *   of `bodylink verify`'s robot recipe (docs/recordings.md).
 *
 * Times are the clock's epoch milliseconds (MCAP log times are nanoseconds since the epoch).
 */
import type { NaoState } from "../bodies/nao/state.js";
import type { Clock } from "../runtime/clock.js";
import { type ByteRing, RING_TIME_BEFORE_PAYLOAD } from "../shm/ring.js";
import type { ChestboardTransport, TransferDone } from "../transport/chestboard.js";
import { RING_CHANNEL, TRANSFER_HEADER_BYTES, TRANSFER_OP } from "./channels.js";
import { NAO_STATE_RECORD_BYTES, writeNaoStateRecord } from "./nao-state-record.js";
// The mirrors' types from their layouts, not through body-state-record.ts: its schemas are TypeBox's,
// and this file's declarations (the LoLA and TNY-360 servers' options) are published.
import { p7StateRecordWriter, tny360StateRecordWriter, reserveP7Command } from "./body-state-record.js";
import type { P7Mirror } from "../shm/p7-state.js";
import type { Tny360Mirror } from "../shm/tny360-state.js";

/** What a LoLA server (ours, or an upstream link) calls for each message. Perform side. */
export interface LolaTap {
  /** A sensor message as written to (or read from) the socket: `bytes[0, length)`. */
  sensor(bytes: Uint8Array, length: number): void;
  /** Bytes a client sent (or bytes sent upstream), as one chunk; `client` numbers the connection. */
  command(client: number, bytes: Uint8Array, length: number): void;
}

/** What the TNY-360 API server calls for each frame (src/serve/tny/server.ts). */
export interface TnyFrameTap {
  /** A binary frame a client sent, as received; `connection` numbers the connection. */
  request(connection: number, bytes: Uint8Array, length: number): void;
  /** A reply the server sent to `connection`, as sent: `bytes[offset, offset + length)` (offset 0 by default). */
  reply(connection: number, bytes: Uint8Array, length: number, offset?: number): void;
}

const eventEncoder = new TextEncoder();

export class RecordTap {
  readonly ring: ByteRing;
  readonly clock: Clock;
  /** The LoLA server's own messages. */
  readonly lola: LolaTap;
  /** An upstream LoLA's messages (bodylink as LoLA's client). */
  readonly lolaUpstream: LolaTap;
  /** The TNY-360 API server's frames. */
  readonly tny: TnyFrameTap;
  // Made on first use (a NAO's tap never needs them); each owns a scratch buffer, then writes allocate nothing.
  #p7: ReturnType<typeof p7StateRecordWriter> | null = null;
  #tny360: ReturnType<typeof tny360StateRecordWriter> | null = null;
  #lateSeen = 0;
  #p7Seq = -1;
  /** The time of the last P7/TNY-360 state record (a command between two cycles is timed by it). */
  readonly #cycleMs = new Float64Array(1);
  #tny360Seq = -1;

  constructor(ring: ByteRing, clock: Clock) {
    this.ring = ring;
    this.clock = clock;
    this.lola = {
      sensor: (b, n) => this.bytes(RING_CHANNEL.lolaSensor, 0, b, n),
      command: (c, b, n) => this.bytes(RING_CHANNEL.lolaCommand, c & 0xffff, b, n),
    };
    this.lolaUpstream = {
      sensor: (b, n) => this.bytes(RING_CHANNEL.lolaUpstreamSensor, 0, b, n),
      command: (c, b, n) => this.bytes(RING_CHANNEL.lolaUpstreamCommand, c & 0xffff, b, n),
    };
    this.tny = {
      request: (c, b, n) => this.bytes(RING_CHANNEL.tnyRequest, c & 0xffff, b, n),
      reply: (c, b, n, o = 0) => this.ring.write(RING_CHANNEL.tnyReply, c & 0xffff, this.clock.epochMs(), b, o, n),
    };
  }

  /** Record `bytes[0, length)` on ring channel `channel`. */
  bytes(channel: number, flags: number, bytes: ArrayLike<number>, length: number): boolean {
    return this.ring.write(channel, flags, this.clock.epochMs(), bytes, 0, length);
  }

  /**
   * A runtime event (lease, link, late cycle …) as the JSON the event channel carries. Prepare
   * side: it allocates, so the real-time side calls it only on a change.
   */
  event(type: string, seq: number, text: string, extra: Record<string, unknown> = {}): boolean {
    const b = eventEncoder.encode(JSON.stringify({ type, seq, text, ...extra }));
    return this.bytes(RING_CHANNEL.event, 0, b, b.length);
  }

  /** A chest-board transfer other than a frame (or a failed one): op, request, result, bytes. */
  transfer(op: number, request: number, result: number, bytes: ArrayLike<number> | null, length: number): boolean {
    const n = bytes && length > 0 ? length : 0;
    const at = this.ring.reserve(RING_CHANNEL.chestTransfer, 0, this.clock.epochMs(), TRANSFER_HEADER_BYTES + n);
    if (at < 0) return false;
    const v = this.ring.view;
    v.setUint8(at, op);
    v.setUint8(at + 1, request);
    v.setInt32(at + 2, result, true);
    const b = this.ring.bytes;
    for (let i = 0; i < n; i++) b[at + TRANSFER_HEADER_BYTES + i] = bytes![i]!;
    this.ring.commit();
    return true;
  }

  /**
   * The P7's state after loop cycle `cycle` (its state layout: body-state-record.ts), timed by the
   * state's own stamp when the cycle brought data (the time the API serves as epoch_ms; and no
   * clock read: performance.now() boxes its number), else by the clock (a cycle without data).
   */
  p7State(cycle: number, m: P7Mirror): boolean {
    this.#p7 ??= p7StateRecordWriter();
    const s = m.state;
    const fresh = s.seq !== this.#p7Seq;
    this.#p7Seq = s.seq;
    return this.#stamp(this.#p7.reserve(this.ring, cycle, m), fresh, s);
  }

  /**
   * A command the P7 took after loop cycle `cycle` (P7Robot.onCommand's arguments), timed by that
   * cycle's state record (no clock read; the clock before the first one).
   */
  p7Command(cycle: number, kind: number, targetsRad: ArrayLike<number>, speedRadS: ArrayLike<number>, joint: number): boolean {
    const at = reserveP7Command(this.ring, cycle, kind, targetsRad, speedRadS, joint);
    if (at < 0) return false;
    const t = this.#cycleMs[0]!;
    this.ring.view.setFloat64(at - RING_TIME_BEFORE_PAYLOAD, t > 0 ? t : this.clock.epochMs(), true);
    this.ring.commit();
    return true;
  }

  /** The TNY-360's state after loop cycle `cycle` (timed as p7State's). */
  tny360State(cycle: number, m: Tny360Mirror): boolean {
    this.#tny360 ??= tny360StateRecordWriter();
    const s = m.state;
    const fresh = s.seq !== this.#tny360Seq;
    this.#tny360Seq = s.seq;
    return this.#stamp(this.#tny360.reserve(this.ring, cycle, m), fresh, s);
  }

  /**
   * Time the state record reserved at `at` (-1: refused) and publish it. The time is read here
   * from the state object, not passed down: a number handed to a call V8 does not inline is boxed (16 B).
   */
  #stamp(at: number, fresh: boolean, s: { readonly epochMs: number }): boolean {
    if (at < 0) return false;
    const t = fresh ? s.epochMs : this.clock.epochMs();
    this.#cycleMs[0] = t;
    this.ring.view.setFloat64(at - RING_TIME_BEFORE_PAYLOAD, t, true);
    this.ring.commit();
    return true;
  }

  /**
   * After each cycle, with the loop's late-cycle count: a `late_cycle` event when it grew (the
   * event allocates, but only then: a late cycle is no steady state).
   */
  lateCycles(seq: number, late: number): void {
    if (late === this.#lateSeen) return;
    this.#lateSeen = late;
    this.event("late_cycle", seq, `cycle started late (${late} so far)`, { late_cycles: late });
  }

  /** The decoded NAO state of this cycle. */
  naoState(s: NaoState): boolean {
    const at = this.ring.reserve(RING_CHANNEL.naoState, 0, this.clock.epochMs(), NAO_STATE_RECORD_BYTES);
    if (at < 0) return false;
    writeNaoStateRecord(this.ring.view, at, s);
    this.ring.commit();
    return true;
  }
}

/**
 * A chest-board transport that records every transfer through `tap` and otherwise behaves exactly
 * like `inner` (same results, same timing: one copy per transfer). Allocation-free per transfer.
 */
export class TappedChestboard implements ChestboardTransport {
  readonly name: string;
  readonly #inner: ChestboardTransport;
  readonly #tap: RecordTap;
  // The transfer in flight of each kind (the link runs one exchange at a time).
  #outLength = 0;
  #outDone: TransferDone | null = null;
  #vendorRequest = 0;
  #vendorInto: Uint8Array | null = null;
  #vendorDone: TransferDone | null = null;
  #inInto: Uint8Array | null = null;
  #inDone: TransferDone | null = null;
  readonly #afterOut = (r: number) => {
    const done = this.#outDone!;
    this.#outDone = null;
    if (r !== this.#outLength) this.#tap.transfer(TRANSFER_OP.bulkOut, 0, r, null, 0);
    done(r);
  };
  readonly #afterVendor = (r: number) => {
    const done = this.#vendorDone!;
    this.#vendorDone = null;
    this.#tap.transfer(TRANSFER_OP.vendorIn, this.#vendorRequest, r, this.#vendorInto, r);
    this.#vendorInto = null;
    done(r);
  };
  readonly #afterIn = (r: number) => {
    const done = this.#inDone!;
    this.#inDone = null;
    if (r >= 0) this.#tap.bytes(RING_CHANNEL.chestIn, 0, this.#inInto!, r);
    else this.#tap.transfer(TRANSFER_OP.bulkIn, 0, r, null, 0);
    this.#inInto = null;
    done(r);
  };

  constructor(inner: ChestboardTransport, tap: RecordTap) {
    this.#inner = inner;
    this.#tap = tap;
    this.name = inner.name;
  }

  bulkOut(data: Uint8Array, length: number, timeoutMs: number, done: TransferDone): void {
    // Recorded when handed over, not when USB completes: a cycle's LoLA message is written
    // between the two and carries this frame's stiffness, so verify pairs them by this order.
    // A write that then fails is marked by a bulk_out transfer record with its result.
    this.#tap.bytes(RING_CHANNEL.chestOut, 0, data, length);
    this.#outLength = length;
    this.#outDone = done;
    this.#inner.bulkOut(data, length, timeoutMs, this.#afterOut);
  }

  vendorIn(request: number, into: Uint8Array, length: number, done: TransferDone): void {
    this.#vendorRequest = request;
    this.#vendorInto = into;
    this.#vendorDone = done;
    this.#inner.vendorIn(request, into, length, this.#afterVendor);
  }

  bulkIn(into: Uint8Array, timeoutMs: number, done: TransferDone): void {
    this.#inInto = into;
    this.#inDone = done;
    this.#inner.bulkIn(into, timeoutMs, this.#afterIn);
  }

  close(): Promise<void> {
    return this.#inner.close();
  }
}
