/**
 * A chest-board transport that answers every frame with recorded answer frames, in a loop, and
 * acknowledges with the CRC trailer of the frame it was sent. Synchronous and allocation-free:
 * the benchmarks use it to measure the runtime's own cycle without the simulator's physics, and
 * tests use it to replay a captured exchange.
 */
import { type ChestboardTransport, TRANSFER_ERROR, TRANSFER_TIMEOUT, type TransferDone } from "./chestboard.js";
import { USB } from "../wire/chestboard/constants.js";

export class ReplayChestboard implements ChestboardTransport {
  readonly name = "replay";
  readonly #answers: readonly Uint8Array[];
  readonly #ack = new Uint8Array(USB.ACK_BYTES);
  #next = 0;
  #pending = false;

  /** `answers`: whole answer frames, replayed in order and then from the start. */
  constructor(answers: readonly Uint8Array[]) {
    if (answers.length === 0) throw new RangeError("ReplayChestboard needs at least one answer frame");
    this.#answers = answers.map((a) => a.slice());
    this.#ack[0] = USB.ACK_MAGIC;
  }

  bulkOut(data: Uint8Array, length: number, _timeoutMs: number, done: TransferDone): void {
    for (let i = 0; i < 4; i++) this.#ack[1 + i] = data[length - 4 + i]!;
    this.#pending = true;
    done(length);
  }

  vendorIn(request: number, into: Uint8Array, length: number, done: TransferDone): void {
    if (request === USB.REQ_ACK && length >= USB.ACK_BYTES) {
      for (let i = 0; i < USB.ACK_BYTES; i++) into[i] = this.#ack[i]!;
      return done(USB.ACK_BYTES);
    }
    if (request === USB.REQ_STATUS && length >= USB.STATUS_BYTES) {
      into[0] = 0;
      into[1] = 0;
      return done(USB.STATUS_BYTES);
    }
    done(TRANSFER_ERROR);
  }

  bulkIn(into: Uint8Array, _timeoutMs: number, done: TransferDone): void {
    if (!this.#pending) return done(TRANSFER_TIMEOUT);
    this.#pending = false;
    const a = this.#answers[this.#next]!;
    this.#next = (this.#next + 1) % this.#answers.length;
    const n = Math.min(a.length, into.length);
    for (let i = 0; i < n; i++) into[i] = a[i]!;
    done(n);
  }

  async close(): Promise<void> {}
}
