/**
 * The chest-board exchange as a state machine over a {@link ChestboardTransport} (docs/protocol/chestboard.md):
 *
 *   1. bulk OUT EP1, one frame, 20 ms timeout
 *   2. vendor IN 0x14, 5 bytes: 0x2a + CRC-32 of the frame just sent (mismatch: unacknowledged,
 *      counted and reported; the next cycle sends a fresh frame, which is the retry)
 *   3. bulk IN EP1, up to 512 bytes, 20 ms timeout: the answer frame
 *   3b. when that read times out: vendor IN 0x15, 2 bytes, the chest board's status
 *
 * The cyclic path (`exchange`) preallocates everything and binds its callbacks once. The
 * prepare-side helpers (`request`, `readPreferences`, `handshake`, chest tools) allocate.
 */
import { toHex } from "../wire/bytes.js";
import { BOARDS, BoardType, ChestMode, ControlOp, HANDSHAKE, Kind, PREFS, Register, USB } from "../wire/chestboard/constants.js";
import { type ChestMessage, decodeFrame, encodeFrame } from "../wire/chestboard/frame.js";
import { type BoardConfiguration, decodeBoardConfiguration } from "../wire/chestboard/handshake.js";
import { configRequest, controlCommand, prefReadRequest, readRegister, startCommand } from "../wire/chestboard/messages.js";
import { decodePreferenceBlock, prefPiece } from "../wire/chestboard/prefs.js";
import { type ChestboardTransport, TRANSFER_TIMEOUT } from "./chestboard.js";

export enum ExchangeOutcome {
  /** Acknowledged and answered: `answerLength` bytes in `link.answer`. */
  Answered = 0,
  /** The ack's CRC (or magic) did not match the frame sent. */
  Unacknowledged = 1,
  /** The answer read timed out; the status was asked (see `link.lastStatus`). */
  NoAnswer = 2,
  /** Bulk OUT failed or timed out. */
  WriteFailed = 3,
  /** The ack or answer transfer failed outright. */
  ReadFailed = 4,
}

export const EXCHANGE_OUTCOME_TEXT: Readonly<Record<ExchangeOutcome, string>> = {
  [ExchangeOutcome.Answered]: "answered",
  [ExchangeOutcome.Unacknowledged]: "frame not acknowledged (CRC mismatch)",
  [ExchangeOutcome.NoAnswer]: "no answer within 20 ms",
  [ExchangeOutcome.WriteFailed]: "bulk write failed",
  [ExchangeOutcome.ReadFailed]: "transfer failed",
};

export interface LinkCounters {
  exchanges: number;
  answered: number;
  unacknowledged: number;
  noAnswer: number;
  writeFailed: number;
  readFailed: number;
}

export type ExchangeDone = (outcome: ExchangeOutcome, answerLength: number) => void;

/** Boards asked per handshake frame: 8 answers of 36 bytes + table + CRC fit in 512 bytes. */
export const HANDSHAKE_BATCH = 8;

enum Step {
  Idle,
  Writing,
  Acking,
  Reading,
  Status,
}

/** Result of the motor-board handshake for one board (what `bodylink boards` prints). */
export interface BoardReport {
  readonly name: string;
  readonly bus: number;
  readonly address: number;
  readonly type: string;
  readonly accepted: boolean;
  /** Why it was rejected, or null. */
  readonly reason: string | null;
  readonly attempts: number;
  readonly serial: number | null;
  readonly storedSerial: number | null;
  /** Set when the serial differs from the stored one (foot boards send 0 and are not flagged). */
  readonly serialMismatch: boolean;
  readonly configVersion: number | null;
  readonly hardwareRevision: number | null;
  readonly boardType: number | null;
  readonly started: boolean;
}

export class ChestboardLink {
  readonly transport: ChestboardTransport;
  /** The last answer frame (valid for `answerLength` bytes after an Answered exchange). */
  readonly answer = new Uint8Array(USB.BULK_IN_MAX_BYTES);
  readonly counters: LinkCounters = { exchanges: 0, answered: 0, unacknowledged: 0, noAnswer: 0, writeFailed: 0, readFailed: 0 };
  /** Chest-board status word from the last 0x15 request, or -1. */
  lastStatus = -1;
  /** The last ack bytes received (for error reports). */
  readonly ack = new Uint8Array(USB.ACK_BYTES);

  readonly #status = new Uint8Array(USB.STATUS_BYTES);
  #step: Step = Step.Idle;
  #frame: Uint8Array = this.answer;
  #length = 0;
  #done: ExchangeDone | null = null;
  // Bound once: no closure per exchange.
  readonly #afterWrite = (r: number) => this.#onWrite(r);
  readonly #afterAck = (r: number) => this.#onAck(r);
  readonly #afterRead = (r: number) => this.#onRead(r);
  readonly #afterStatus = (r: number) => this.#onStatus(r);

  constructor(transport: ChestboardTransport) {
    this.transport = transport;
  }

  /** True while an exchange is in flight (USB completes asynchronously). */
  get busy(): boolean {
    return this.#step !== Step.Idle;
  }

  /**
   * Run one exchange for the sealed frame `frame[0, length)` (its last four bytes are its CRC-32,
   * which the ack must echo). `done` is called exactly once, synchronously for the simulator.
   * Throws only if an exchange is already in flight (a bug).
   */
  exchange(frame: Uint8Array, length: number, done: ExchangeDone): void {
    if (this.#step !== Step.Idle) throw new Error("chest-board exchange already in flight");
    this.#frame = frame;
    this.#length = length;
    this.#done = done;
    this.counters.exchanges++;
    this.#step = Step.Writing;
    try {
      this.transport.bulkOut(frame, length, USB.BULK_TIMEOUT_MS, this.#afterWrite);
    } catch {
      this.#thrown();
    }
  }

  /** A transport that throws must not wedge the state machine: the exchange fails instead. */
  #thrown(): void {
    if (this.#step !== Step.Idle) this.#finish(this.#step === Step.Writing ? ExchangeOutcome.WriteFailed : ExchangeOutcome.ReadFailed, 0);
  }

  #finish(outcome: ExchangeOutcome, answerLength: number): void {
    this.#step = Step.Idle;
    const c = this.counters;
    if (outcome === ExchangeOutcome.Answered) c.answered++;
    else if (outcome === ExchangeOutcome.Unacknowledged) c.unacknowledged++;
    else if (outcome === ExchangeOutcome.NoAnswer) c.noAnswer++;
    else if (outcome === ExchangeOutcome.WriteFailed) c.writeFailed++;
    else c.readFailed++;
    const done = this.#done!;
    this.#done = null;
    done(outcome, answerLength);
  }

  #onWrite(r: number): void {
    if (r !== this.#length) return this.#finish(ExchangeOutcome.WriteFailed, 0);
    this.#step = Step.Acking;
    try {
      this.transport.vendorIn(USB.REQ_ACK, this.ack, USB.ACK_BYTES, this.#afterAck);
    } catch {
      this.#thrown();
    }
  }

  #onAck(r: number): void {
    if (r < 0) return this.#finish(ExchangeOutcome.ReadFailed, 0);
    const a = this.ack;
    const f = this.#frame;
    const c = this.#length - 4; // the frame's own CRC trailer: compare bytes, no number needed
    if (r !== USB.ACK_BYTES || a[0] !== USB.ACK_MAGIC || a[1] !== f[c] || a[2] !== f[c + 1] || a[3] !== f[c + 2] || a[4] !== f[c + 3]) {
      return this.#finish(ExchangeOutcome.Unacknowledged, 0);
    }
    this.#step = Step.Reading;
    try {
      this.transport.bulkIn(this.answer, USB.BULK_TIMEOUT_MS, this.#afterRead);
    } catch {
      this.#thrown();
    }
  }

  #onRead(r: number): void {
    if (r >= 0) return this.#finish(ExchangeOutcome.Answered, r);
    if (r !== TRANSFER_TIMEOUT) return this.#finish(ExchangeOutcome.ReadFailed, 0);
    this.#step = Step.Status;
    try {
      this.transport.vendorIn(USB.REQ_STATUS, this.#status, USB.STATUS_BYTES, this.#afterStatus);
    } catch {
      this.#thrown();
    }
  }

  #onStatus(r: number): void {
    if (r === USB.STATUS_BYTES) this.lastStatus = this.#status[0]! | (this.#status[1]! << 8);
    this.#finish(ExchangeOutcome.NoAnswer, 0);
  }

  // ---- prepare side -------------------------------------------------------------------------

  /** One exchange with an ad-hoc frame; resolves the answer's messages (copied) or rejects with a reason. */
  request(messages: readonly ChestMessage[]): Promise<ChestMessage[]> {
    const frame = encodeFrame(messages);
    return new Promise((resolve, reject) => {
      this.exchange(frame, frame.length, (outcome, n) => {
        if (outcome !== ExchangeOutcome.Answered) {
          const extra = outcome === ExchangeOutcome.Unacknowledged ? ` (ack ${toHex(this.ack)}, frame CRC ${toHex(frame.subarray(frame.length - 4))})` : "";
          return reject(new Error(EXCHANGE_OUTCOME_TEXT[outcome] + extra));
        }
        const d = decodeFrame(this.answer.slice(0, n));
        if (!d.ok) return reject(new Error(`answer frame unusable: ${d.reason}`));
        resolve(d.messages);
      });
    });
  }

  /**
   * Read the 4,635-byte preference block in 145 pieces of 32 bytes (the last 27) and check its CRC.
   * A piece that fails is retried up to `attempts` times; a block whose CRC fails is reported.
   */
  async readPreferences(attempts = 3): Promise<{ ok: true; block: Uint8Array } | { ok: false; reason: string; block: Uint8Array | null }> {
    const block = new Uint8Array(PREFS.BLOCK_BYTES);
    for (let i = 0; i < PREFS.PIECES; i++) {
      const { offset, length } = prefPiece(i);
      let lastError = "";
      let got = false;
      for (let a = 0; a < attempts && !got; a++) {
        try {
          const answer = await this.request([prefReadRequest(offset, length)]);
          const m = answer.find((x) => x.kind === Kind.PrefData);
          if (!m) lastError = "no preference data in the answer";
          else if (m.payload.length !== 2 + length) lastError = `piece has ${m.payload.length - 2} bytes, expected ${length}`;
          else if ((m.payload[0]! | (m.payload[1]! << 8)) !== offset) lastError = `piece answered offset ${m.payload[0]! | (m.payload[1]! << 8)}, asked ${offset}`;
          else {
            block.set(m.payload.subarray(2), offset);
            got = true;
          }
        } catch (e) {
          lastError = (e as Error).message;
        }
      }
      if (!got) return { ok: false, reason: `preference piece ${i} (offset ${offset}) failed: ${lastError}`, block: null };
    }
    const d = decodePreferenceBlock(block);
    if (!d.ok) return { ok: false, reason: `preference block rejected: ${d.reason}`, block };
    return { ok: true, block };
  }

  /**
   * The motor-board handshake: ask every handshake board for its configuration, check the version
   * against `acceptedVersions`, ask rejected or silent boards again (three times in all), then send
   * each accepted board its start command. Boards left out are reported with the reason.
   */
  async handshake(acceptedVersions: readonly number[], storedSerials: ReadonlyMap<string, number>): Promise<BoardReport[]> {
    const boards = BOARDS.filter((b) => b.handshake);
    const result = new Map<string, { cfg: BoardConfiguration | null; attempts: number; reason: string | null; accepted: boolean }>();
    for (const b of boards) result.set(b.name, { cfg: null, attempts: 0, reason: "no answer", accepted: false });
    for (let attempt = 1; attempt <= HANDSHAKE.ATTEMPTS; attempt++) {
      const pending = boards.filter((b) => !result.get(b.name)!.accepted);
      if (pending.length === 0) break;
      for (const b of pending) result.get(b.name)!.attempts = attempt;
      const answer: ChestMessage[] = [];
      // 32-byte answers: batch the requests so each answer frame fits the 512-byte bulk read.
      for (let i = 0; i < pending.length; i += HANDSHAKE_BATCH) {
        const batch = pending.slice(i, i + HANDSHAKE_BATCH);
        try {
          answer.push(...(await this.request(batch.map(configRequest))));
        } catch (e) {
          for (const b of batch) result.get(b.name)!.reason = `exchange failed: ${(e as Error).message}`;
        }
      }
      for (const b of pending) {
        const r = result.get(b.name)!;
        const m = answer.find((x) => x.kind === Kind.ReadReply && x.bus === b.bus && x.address === b.address && x.payload[0] === Register.Configuration);
        if (!m) {
          if (!r.reason?.startsWith("exchange failed")) r.reason = "no answer";
          continue;
        }
        const cfg = decodeBoardConfiguration(m.payload.subarray(1));
        if (!cfg) {
          r.reason = `answer of ${m.payload.length - 1} bytes, expected 32`;
          continue;
        }
        r.cfg = cfg;
        if (acceptedVersions.includes(cfg.configVersion)) {
          r.accepted = true;
          r.reason = null;
        } else {
          r.reason = `configuration version ${cfg.configVersion} not in accepted [${acceptedVersions.join(", ")}]`;
        }
      }
    }
    const accepted = boards.filter((b) => result.get(b.name)!.accepted);
    const started = new Set<string>();
    if (accepted.length) {
      try {
        const answer = await this.request(accepted.map(startCommand));
        for (const b of accepted) {
          const m = answer.find((x) => x.kind === Kind.ControlReply && x.bus === b.bus && x.address === b.address);
          if (m && m.payload[1] === 0) started.add(b.name);
        }
      } catch {
        // Reported per board below: accepted but not started.
      }
    }
    return boards.map((b) => {
      const r = result.get(b.name)!;
      const stored = storedSerials.get(b.name) ?? null;
      const serial = r.cfg?.serial ?? null;
      const isFoot = b.type === BoardType.Foot;
      const ok = r.accepted && started.has(b.name);
      return {
        name: b.name,
        bus: b.bus,
        address: b.address,
        type: BoardType[b.type],
        accepted: ok,
        reason: r.accepted && !started.has(b.name) ? "start command not confirmed" : r.reason,
        attempts: r.attempts,
        serial,
        storedSerial: stored,
        serialMismatch: serial !== null && stored !== null && !(isFoot && serial === 0) && serial !== stored,
        configVersion: r.cfg?.configVersion ?? null,
        hardwareRevision: r.cfg?.hardwareRevision ?? null,
        boardType: r.cfg?.boardType ?? null,
        started: started.has(b.name),
      };
    });
  }

  // ---- the chest-board tools (chest-version, chest-mode, chest-harakiri) -----------------------

  async readFirmwareVersion(): Promise<string> {
    const chest = BOARDS[0]!;
    const answer = await this.request([readRegister(chest.bus, chest.address, Register.FirmwareVersion)]);
    const m = answer.find((x) => x.kind === Kind.ReadReply && x.payload[0] === Register.FirmwareVersion);
    if (m?.payload.length !== 5) throw new Error("chest board did not report its firmware version");
    return `${m.payload[1]}.${m.payload[2]}.${m.payload[3]! | (m.payload[4]! << 8)}`;
  }

  async readMode(): Promise<{ code: number; name: string }> {
    const chest = BOARDS[0]!;
    const answer = await this.request([readRegister(chest.bus, chest.address, Register.Mode)]);
    const m = answer.find((x) => x.kind === Kind.ReadReply && x.payload[0] === Register.Mode);
    if (m?.payload.length !== 2) throw new Error("chest board did not report its mode");
    const code = m.payload[1]!;
    return { code, name: ChestMode[code] ?? `unknown (${code})` };
  }

  /** chest-harakiri: power off (or reboot with `reboot`). Does not enter the boot loader. */
  async harakiri(reboot: boolean): Promise<void> {
    const chest = BOARDS[0]!;
    const op = reboot ? ControlOp.Reboot : ControlOp.PowerOff;
    const answer = await this.request([controlCommand(chest.bus, chest.address, op)]);
    const m = answer.find((x) => x.kind === Kind.ControlReply && x.payload[0] === op);
    if (m?.payload[1] !== 0) throw new Error("chest board refused the power command");
  }
}
