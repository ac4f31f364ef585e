/**
 * A NAO driver that plays a bodylink recording back instead of talking to a body: every server
 * (LoLA socket, robot API, dashboard) then works on recorded data.
 *
 * The recording is cut into steps, one per recorded LoLA message: a step holds the command
 * frames and answer frames recorded before that message (file order) and the message itself.
 * Each cycle plays one step the way the simulator's synchronous exchange runs:
 *
 *   write   the step's last command frame's stiffness becomes the stiffness "sent" (LoLA's
 *           `Stiffness` is what was commanded, not what a client asks for now)
 *   read    the step's answer frames are decoded, in order, with the current decoder
 *
 * so the LoLA message the server writes after the cycle is the recorded one, byte for byte,
 * whenever the current decoder agrees with the one that recorded it (`matches` counts it).
 * Commands from clients are accepted by the core as usual and move nothing.
 *
 * Prepare side: `load` reads the whole file (a minute of NAO traffic is a few MB). The cycle
 * (write/read) allocates nothing.
 */
import { AnswerDecoder, CommandStiffnessDecoder } from "../bodies/nao/frames.js";
import { LOLA_INDEX, type LolaJoint } from "../bodies/nao/joints.js";
import type { NaoPreferences } from "../bodies/nao/prefs.js";
import type { NaoState } from "../bodies/nao/state.js";
import { IO } from "../drivers/driver.js";
import { NAO_IO, type NaoDriver, type NaoOutput } from "../drivers/nao/driver.js";
import { BodylinkError } from "../errors.js";
import { PREFS_ATTACHMENT } from "../record/channels.js";
import { PreferenceAssembler } from "../record/prefs-from-frames.js";
import { notANaoRecording, readAttachments, streamRecording } from "../record/reader.js";
import type { BoardReport } from "../transport/chestboard-link.js";
import { BOARDS, BOARD_BY_NAME, BoardType } from "../wire/chestboard/constants.js";
import { preferencesFromBlock } from "../verify/verifier.js";

export interface ReplayStep {
  /** Answer frames recorded before this step's LoLA message (and after the previous one's). */
  readonly answers: readonly Uint8Array[];
  /** The last command frame among them, or null. */
  readonly command: Uint8Array | null;
  /** The LoLA sensor message recorded at the end of the step. */
  readonly lola: Uint8Array;
  readonly timeNs: bigint;
}

export class ReplayDriver implements NaoDriver {
  readonly name: string;
  readonly path: string;
  readonly steps: readonly ReplayStep[];
  readonly prefs: NaoPreferences;
  readonly boards: BoardReport[];
  readonly jointInitialized = new Uint8Array(25);
  lastErrorText = "";
  /** Cycles played. */
  played = 0;
  /** LoLA messages compared with the recording (`compare`), and how many were identical. */
  compared = 0;
  matches = 0;
  /** The first step (1-based) whose LoLA message differed, or 0. */
  firstMismatch = 0;
  readonly #decoder: AnswerDecoder;
  readonly #stiffness = new CommandStiffnessDecoder();
  #cursor = 0;
  #pending = false;
  #comparedAt = 0;
  #onEnd: (() => void) | null = null;
  readonly ended: Promise<void>;

  private constructor(path: string, steps: ReplayStep[], prefs: NaoPreferences, boards: BoardReport[]) {
    this.path = path;
    this.name = `replay:${path}`;
    this.steps = steps;
    this.prefs = prefs;
    this.boards = boards;
    this.#decoder = new AnswerDecoder(prefs);
    for (const b of boards) if (b.accepted) for (const j of BOARD_BY_NAME.get(b.name)?.joints ?? []) this.jointInitialized[LOLA_INDEX[j as LolaJoint]] = 1;
    this.ended = new Promise((resolve) => {
      this.#onEnd = resolve;
    });
  }

  /** Read a recording into steps. Throws BL_ERR_RECORD_READ / BL_ERR_REPLAY_INPUT with what is missing. */
  static async load(path: string): Promise<ReplayDriver> {
    // Another body's recording is refused before it is read through (replay drives a NAO).
    const other = await notANaoRecording(path, "replay");
    if (other) throw new BodylinkError("BL_ERR_REPLAY_INPUT", other);
    const steps: ReplayStep[] = [];
    let answers: Uint8Array[] = [];
    let command: Uint8Array | null = null;
    let lolaTopic: string | null = null;
    const assembler = new PreferenceAssembler();
    let boards: BoardReport[] | null = null;
    const td = new TextDecoder();
    for await (const m of streamRecording(path)) {
      if (m.topic === "/nao/chestboard/in") {
        answers.push(m.data);
        if (!assembler.complete) assembler.push(m.data);
      } else if (m.topic === "/nao/chestboard/out") command = m.data;
      else if (m.topic === "/lola/sensor" || m.topic === "/lola/upstream/sensor") {
        lolaTopic ??= m.topic;
        if (m.topic !== lolaTopic) continue;
        steps.push({ answers, command, lola: m.data, timeNs: m.logTimeNs });
        answers = [];
        command = null;
      } else if (m.topic === "/events" && !boards) {
        const e = JSON.parse(td.decode(m.data)) as { type?: string; boards?: Array<{ name: string; accepted: boolean; reason: string | null; version: number | null; serial: number | null }> };
        if (e.type === "handshake" && Array.isArray(e.boards)) boards = e.boards.map(boardReport);
      }
    }
    if (steps.length === 0) throw new BodylinkError("BL_ERR_REPLAY_INPUT", `${path} holds no LoLA messages to replay`);
    if (!steps.some((s) => s.answers.length > 0))
      throw new BodylinkError("BL_ERR_REPLAY_INPUT", `${path} holds no raw chest-board frames: replay needs a recording of the chest board (bodylink record), not a LoLA dump`);
    const block = assembler.result() ?? (await readAttachments(path)).get(PREFS_ATTACHMENT) ?? null;
    if (!block) throw new BodylinkError("BL_ERR_REPLAY_INPUT", `${path} holds no preference block`);
    const p = preferencesFromBlock(block);
    if (!p.ok) throw new BodylinkError("BL_ERR_REPLAY_INPUT", `${path}: preference block unusable: ${p.reason}`);
    boards ??= BOARDS.filter((b) => b.handshake).map((b) => boardReport({ name: b.name, accepted: b.type !== BoardType.Chest, reason: null, version: null, serial: null }));
    return new ReplayDriver(path, steps, p.prefs, boards);
  }

  get busy(): boolean {
    return this.#pending;
  }

  /** The step the next cycle plays (0-based); equals steps.length at the end. */
  get position(): number {
    return this.#cursor;
  }

  get done(): boolean {
    return this.#cursor >= this.steps.length;
  }

  async configure(): Promise<void> {
    this.#cursor = 0;
    this.#comparedAt = 0;
    this.#pending = false;
  }

  async activate(): Promise<void> {}

  write(_nowMs: number, out: NaoOutput): number {
    if (this.#cursor >= this.steps.length) {
      this.lastErrorText = "the recording has ended";
      return NAO_IO.WriteFailed;
    }
    const step = this.steps[this.#cursor]!;
    if (step.command) this.#stiffness.decode(step.command, step.command.length, out.sentStiffness);
    this.#pending = true;
    return IO.Sent;
  }

  read(_nowMs: number, into: NaoState): number {
    if (!this.#pending) return IO.None;
    this.#pending = false;
    const step = this.steps[this.#cursor++]!;
    this.played++;
    if (this.#cursor >= this.steps.length) this.#onEnd?.();
    if (step.answers.length === 0) {
      this.lastErrorText = "no answer in the recording for this cycle";
      return NAO_IO.NoAnswer;
    }
    let ok = false;
    for (let i = 0; i < step.answers.length; i++) {
      const a = step.answers[i]!;
      if (this.#decoder.decode(a, a.length, into)) ok = true;
    }
    if (!ok) {
      into.badFrames++;
      this.lastErrorText = "recorded answer frame unusable";
      return NAO_IO.BadFrame;
    }
    return IO.Fresh;
  }

  /**
   * Compare a LoLA message the server just wrote with the recorded one of the step just played
   * (call it from the LoLA server's tap). Perform side, no allocation.
   */
  compare(bytes: Uint8Array, length: number): boolean {
    const step = this.steps[this.#cursor - 1];
    if (!step || this.#comparedAt === this.#cursor) return false; // no step played since the last message
    this.#comparedAt = this.#cursor;
    this.compared++;
    const want = step.lola;
    let same = want.length === length;
    for (let i = 0; same && i < length; i++) if (bytes[i] !== want[i]) same = false;
    if (same) this.matches++;
    else if (this.firstMismatch === 0) this.firstMismatch = this.#cursor;
    return same;
  }

  async deactivate(): Promise<void> {}
  async close(): Promise<void> {}
}

function boardReport(b: { name: string; accepted: boolean; reason: string | null; version: number | null; serial: number | null }): BoardReport {
  const spec = BOARD_BY_NAME.get(b.name);
  return {
    name: b.name,
    bus: spec?.bus ?? 0,
    address: spec?.address ?? 0,
    type: spec ? BoardType[spec.type] : "unknown",
    accepted: b.accepted,
    reason: b.reason,
    attempts: 1,
    serial: b.serial,
    storedSerial: null,
    serialMismatch: false,
    configVersion: b.version,
    hardwareRevision: null,
    boardType: spec?.type ?? null,
    started: b.accepted,
  };
}
