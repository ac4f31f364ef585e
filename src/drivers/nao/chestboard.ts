/**
 * The NAO driver over the chest board (USB or the simulated board): preference block and motor
 * board handshake at configure, then one exchange per cycle (frame out, CRC ack, answer in).
 *
 * Perform side allocates nothing: the command frame is a template overwritten in place, the
 * answer is decoded into the state in place, the exchange callback is bound once. USB completes
 * later than `write`: its answer is kept (not decoded) until the next `read`, so the state only
 * ever changes inside the cycle (the real-time core publishes it once per cycle, seqlock).
 */
import { NaoCommands } from "../../bodies/nao/commands.js";
import { AnswerDecoder, CommandFrame } from "../../bodies/nao/frames.js";
import { LOLA_INDEX, type LolaJoint } from "../../bodies/nao/joints.js";
import { type NaoPreferences, interpretPreferences } from "../../bodies/nao/prefs.js";
import type { NaoState } from "../../bodies/nao/state.js";
import { BodylinkError } from "../../errors.js";
import { SimChestboard, type SimChestboardOptions } from "../../sim/nao/chestboard.js";
import { MujocoNaoModel, PHYSICS_START_POSE } from "../../sim/nao/physics/mujoco-nao.js";
import type { NaoBodyModel } from "../../sim/nao/model.js";
import type { ChestboardTransport } from "../../transport/chestboard.js";
import { type BoardReport, ChestboardLink, ExchangeOutcome } from "../../transport/chestboard-link.js";
import { BOARD_BY_NAME, HANDSHAKE } from "../../wire/chestboard/constants.js";
import { FRAME_FAULT_TEXT } from "../../wire/chestboard/frame.js";
import { decodePreferenceBlock } from "../../wire/chestboard/prefs.js";
import { IO } from "../driver.js";
import { NAO_IO, NAO_IO_TEXT, type NaoDriver, type NaoOutput } from "./driver.js";

export interface ChestboardDriverOptions {
  /** The link to use: a transport, or a function that opens one (called by configure, and again after close). */
  transport: ChestboardTransport | (() => ChestboardTransport | Promise<ChestboardTransport>);
  /** Accepted board configuration versions. Defaults to HAL's. */
  acceptBoardVersions?: readonly number[];
}

const OUTCOME_TO_IO: Readonly<Record<ExchangeOutcome, number>> = {
  [ExchangeOutcome.Answered]: NAO_IO.Fresh,
  [ExchangeOutcome.Unacknowledged]: NAO_IO.Unacknowledged,
  [ExchangeOutcome.NoAnswer]: NAO_IO.NoAnswer,
  [ExchangeOutcome.WriteFailed]: NAO_IO.WriteFailed,
  [ExchangeOutcome.ReadFailed]: NAO_IO.ReadFailed,
};

const BAD_FRAME_TEXT: readonly string[] = Object.values(FRAME_FAULT_TEXT).map((t) => `${NAO_IO_TEXT[NAO_IO.BadFrame]}: ${t}`);

const IDLE = new NaoCommands();

/**
 * The MuJoCo NAO under a simulated chest board (`serve --sim physics`), in its start pose. Typed
 * as the seam, so the published declarations never reach @mujoco/mujoco's (they do not pass
 * strict type-checking: a consumer with skipLibCheck off would fail on them).
 */
export function physicsNaoModel(): Promise<NaoBodyModel> {
  return MujocoNaoModel.create(PHYSICS_START_POSE);
}

/** The simulated chest board the NAO runs on by default (`bodylink serve` without --usb). */
export function simulatedChestboard(opts: SimChestboardOptions): SimChestboard {
  return new SimChestboard(opts);
}

export class ChestboardDriver implements NaoDriver {
  readonly acceptBoardVersions: readonly number[];
  prefs: NaoPreferences | null = null;
  boards: BoardReport[] = [];
  readonly jointInitialized = new Uint8Array(25);
  lastErrorText = "";
  readonly #open: () => ChestboardTransport | Promise<ChestboardTransport>;
  #transport: ChestboardTransport | null;
  #link: ChestboardLink | null;
  #decoder: AnswerDecoder | null = null;
  #frame: CommandFrame | null = null;
  /** The last output written (deactivate re-sends its positions at stiffness 0). */
  #last: NaoOutput | null = null;
  /** Outcome of the exchange that completed and was not read yet (-1: none), and its answer length. */
  #pending = -1;
  #pendingLength = 0;
  readonly #afterExchange = (outcome: ExchangeOutcome, n: number): void => {
    this.#pending = outcome;
    this.#pendingLength = n;
  };

  constructor(opts: ChestboardDriverOptions) {
    const t = opts.transport;
    this.#open = typeof t === "function" ? t : () => t;
    this.#transport = typeof t === "function" ? null : t;
    this.#link = this.#transport ? new ChestboardLink(this.#transport) : null;
    this.acceptBoardVersions = opts.acceptBoardVersions ?? HANDSHAKE.DEFAULT_ACCEPTED_VERSIONS;
  }

  get name(): string {
    return this.#transport?.name ?? "chest board (closed)";
  }

  /** The exchange state machine (null while closed). */
  get link(): ChestboardLink | null {
    return this.#link;
  }

  get busy(): boolean {
    return this.#link?.busy ?? false;
  }

  async configure(): Promise<void> {
    if (!this.#link) {
      this.#transport = await this.#open();
      this.#link = new ChestboardLink(this.#transport);
    }
    const link = this.#link;
    const read = await link.readPreferences();
    if (!read.ok) {
      const d = read.block ? decodePreferenceBlock(read.block) : null;
      if (d && !d.ok && d.storedCrc !== d.computedCrc) throw new BodylinkError("BL_ERR_PREFS_CRC", hex(d.storedCrc), hex(d.computedCrc));
      throw new BodylinkError("BL_ERR_PREFS_READ", "-", read.reason);
    }
    const decoded = decodePreferenceBlock(read.block);
    if (!decoded.ok) throw new BodylinkError("BL_ERR_PREFS_READ", "-", decoded.reason);
    const interp = interpretPreferences(decoded.entries);
    if (!interp.ok) throw new BodylinkError("BL_ERR_PREFS_READ", "-", interp.reason);
    this.prefs = interp.prefs;
    this.boards = await link.handshake(this.acceptBoardVersions, interp.prefs.serials);
    const accepted = this.boards.filter((b) => b.accepted).map((b) => BOARD_BY_NAME.get(b.name)!);
    this.jointInitialized.fill(0);
    for (const b of accepted) for (const j of b.joints) this.jointInitialized[LOLA_INDEX[j as LolaJoint]] = 1;
    this.#frame = new CommandFrame(accepted, interp.prefs);
    this.#decoder = new AnswerDecoder(interp.prefs);
    this.#pending = -1;
  }

  async activate(): Promise<void> {}

  read(_nowMs: number, into: NaoState): number {
    const outcome = this.#pending;
    if (outcome < 0) return IO.None;
    this.#pending = -1;
    const link = this.#link!;
    into.boardStatus = link.lastStatus;
    into.unacknowledgedFrames = link.counters.unacknowledged;
    into.readTimeouts = link.counters.noAnswer;
    if (outcome !== ExchangeOutcome.Answered) {
      this.lastErrorText = NAO_IO_TEXT[OUTCOME_TO_IO[outcome as ExchangeOutcome]]!;
      return OUTCOME_TO_IO[outcome as ExchangeOutcome];
    }
    if (this.#decoder!.decode(link.answer, this.#pendingLength, into)) return IO.Fresh;
    into.badFrames++;
    this.lastErrorText = BAD_FRAME_TEXT[this.#decoder!.stats.fault] ?? NAO_IO_TEXT[NAO_IO.BadFrame]!;
    return NAO_IO.BadFrame;
  }

  write(_nowMs: number, out: NaoOutput): number {
    const frame = this.#frame;
    const link = this.#link;
    if (!frame || !link) return NAO_IO.WriteFailed;
    if (link.busy) return IO.Busy;
    this.#last = out;
    frame.encode(out.commands, out.scale[0]!, out.sentStiffness);
    link.exchange(frame.template.bytes, frame.template.length, this.#afterExchange);
    return IO.Sent;
  }

  /** A last frame at stiffness 0 (the positions last sent). A USB exchange still in flight is let finish first. */
  async deactivate(): Promise<void> {
    const link = this.#link;
    const frame = this.#frame;
    if (!link || !frame) return;
    for (let i = 0; i < 40 && link.busy; i++) await new Promise((r) => setTimeout(r, 5));
    if (link.busy) return;
    const last = this.#last;
    if (last) frame.encode(last.commands, 0, last.sentStiffness);
    else frame.encode(IDLE, 0, new Float32Array(25)); // never written: positions 0 at stiffness 0
    try {
      await new Promise<void>((resolve) => link.exchange(frame.template.bytes, frame.template.length, () => resolve()));
    } catch {
      // best effort: the link may be broken (that may be why we are here)
    }
    this.#pending = -1;
  }

  /** Safe frame for a dying core: synchronous where the transport completes synchronously (the simulator). */
  deactivateNow(): boolean {
    const link = this.#link;
    const frame = this.#frame;
    const last = this.#last;
    if (!link || !frame || !last || link.busy) return false;
    frame.encode(last.commands, 0, last.sentStiffness);
    let done = false;
    try {
      link.exchange(frame.template.bytes, frame.template.length, () => {
        done = true;
      });
    } catch {
      return false;
    }
    return done;
  }

  async close(): Promise<void> {
    const t = this.#transport;
    this.#transport = null;
    this.#link = null;
    this.#frame = null;
    this.#decoder = null;
    if (t) await t.close();
  }
}

function hex(v: number): string {
  return `0x${v.toString(16).padStart(8, "0")}`;
}
