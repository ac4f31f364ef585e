/**
 * A simulated NAO v6 chest board behind the same {@link ChestboardTransport} as USB. It speaks
 * bytes, not objects: it decodes the host's frames with the same codec, answers acknowledgements
 * with the CRC it computed, answers handshake, preference and tool requests, and every command
 * frame with an answer frame of raw counts quantized from the physical body in body.ts.
 *
 * Completes transfers synchronously (no allocation on the cyclic path) unless a delay fault is set.
 * Fault hooks for tests: drop, delay or corrupt answers, corrupt acks, reject a board (version),
 * fail a preference piece, power off.
 */
import { LED_GROUPS, type LedGroup } from "../../bodies/nao/commands.js";
import { preferenceEntries } from "../../bodies/nao/prefs.js";
import { LOLA_INDEX, type LolaJoint, isHand } from "../../bodies/nao/joints.js";
import * as U from "../../bodies/nao/units.js";
import { type ChestboardTransport, TRANSFER_ERROR, TRANSFER_NO_DEVICE, TRANSFER_TIMEOUT, type TransferDone } from "../../transport/chestboard.js";
import type { Clock } from "../../runtime/clock.js";
import { crc32 } from "../../wire/crc32.js";
import { BOARDS, type BoardSpec, BoardType, ChestMode, ControlOp, HEAD_BUS, HEAD_FLAG_TMP100_VALID, Kind, LED_GROUP_IDS, PAYLOAD, PREFS, Register, USB } from "../../wire/chestboard/constants.js";
import { type ChestMessage, encodeFrameInto, FrameFault, frameSize, FrameIndex, FrameTemplate, indexFrame } from "../../wire/chestboard/frame.js";
import { encodeBoardConfiguration } from "../../wire/chestboard/handshake.js";
import { encodePreferenceBlock, type PrefEntry, PrefType } from "../../wire/chestboard/prefs.js";
import { Rng } from "../random.js";
import { SimNaoBody } from "./body.js";
import type { NaoBodyModel } from "./model.js";

export interface SimChestboardOptions {
  /** Seed for the body's noise and the generated preferences. Defaults to 1. */
  seed?: number;
  /** Configuration version each board reports; defaults to 11 (NAOqi 2.8.7) for all. */
  boardVersions?: Partial<Record<string, number>>;
  /** Clock that advances the physical body; without one the body advances 12 ms per command frame. */
  clock?: Clock;
  /** Override preference entries (tests); defaults to values generated from the seed. */
  preferences?: PrefEntry[];
  /** Body id (20 characters) stored in the preferences. */
  bodyId?: string;
  /** The mechanics under the board (model.ts); defaults to the kinematic puppet. */
  model?: NaoBodyModel;
}

/** Per LED group id: first index in SimNaoBody.leds and the group's size. */
const LED_SIZE: readonly number[] = Object.entries(LED_GROUP_IDS)
  .sort((a, b) => a[1] - b[1])
  .map(([g]) => LED_GROUPS[g as LedGroup]);
const LED_BASE: readonly number[] = LED_SIZE.map((_, i) => LED_SIZE.slice(0, i).reduce((a, b) => a + b, 0));

export const SIM_FIRMWARE_VERSION = { major: 3, minor: 4, build: 1207 } as const;
/** Status word bits (vendor request 0x15), inferred: low byte mode, bit 8 boards running. */
export const STATUS_BOARDS_RUNNING = 0x0100;

type Writer = (b: Uint8Array, v: DataView, offset: number, board: SimBoard | null) => void;

interface SimBoard {
  spec: BoardSpec;
  joints: Int8Array;
  version: number;
  serial: number;
  started: boolean;
  /** A left-side hand or foot board (its touch and FSR slots): worked out once, not per cycle. */
  left: boolean;
}

export class SimChestboard implements ChestboardTransport {
  readonly name = "sim";
  readonly body: SimNaoBody;
  /** The 4,635-byte preference flash image. */
  readonly flash: Uint8Array;
  readonly preferenceEntries: PrefEntry[];
  mode: ChestMode = ChestMode.Normal;
  poweredOff = false;
  rebooted = 0;

  // Fault hooks: counts of the next transfers to affect.
  dropAnswers = 0;
  corruptAnswers = 0;
  corruptAcks = 0;
  delayAnswers = 0;
  delayMs = 30;
  /** Preference pieces that answer with damaged bytes (the block CRC then fails). */
  readonly corruptPrefPieces = new Set<number>();
  /** Preference pieces that get no answer at all. */
  readonly silentPrefPieces = new Set<number>();

  readonly #boards: SimBoard[];
  readonly #byAddr = new Map<number, SimBoard>();
  readonly #clock: Clock | undefined;
  /** Clock time of the last physics step, ms (NaN before the first); a typed slot, never boxed. */
  readonly #lastStepMs = new Float64Array([Number.NaN]);
  readonly #in = new FrameIndex();
  readonly #answer = new Uint8Array(USB.BULK_IN_MAX_BYTES);
  #answerLength = -1;
  /** CRC-32 of the last frame received, little-endian, as the ack returns it. */
  readonly #lastCrc = new Uint8Array(4);
  readonly #replies: ChestMessage[] = [];
  #powerOffAfterAnswer = false;
  #cycleTemplate: FrameTemplate | null = null;
  #cycleView: DataView | null = null;
  #cycleLayout: Array<{ offset: number; board: SimBoard | null; kind: Kind }> = [];
  readonly #zero: Int32Array;
  readonly #fsrGain: Float64Array;
  readonly #fsrOffset: Float64Array;
  readonly #angleOffset: Float64Array;

  constructor(opts: SimChestboardOptions = {}) {
    const seed = opts.seed ?? 1;
    this.body = new SimNaoBody(seed, opts.model);
    this.#clock = opts.clock;
    const rng = new Rng(seed ^ 0x5eed);
    const serials = new Map(BOARDS.map((b) => [b.name, 0x10000000 + rng.int(0, 0x0fffffff)]));
    this.preferenceEntries =
      opts.preferences ??
      preferenceEntries((s) => {
        const k = s.key;
        if (k === "Body/BodyId") return opts.bodyId ?? "P0000073A07S94700012";
        if (k === "Body/BodyVersion") return "6.0.0";
        if (k.startsWith("Board/")) return serials.get(k.split("/")[1]!)!;
        if (k.startsWith("Joint/")) return 8192 + rng.int(-400, 400);
        if (k.startsWith("FSR/") && k.endsWith("/Gain")) return Math.fround(0.001 * (1 + rng.range(-0.05, 0.05)));
        if (k.startsWith("FSR/")) return Math.fround(rng.range(-0.02, 0.02));
        if (k.includes("AngleOffset")) return Math.fround(rng.range(-0.01, 0.01));
        if (k.includes("Gain")) return 1;
        return 0; // gyroscope and accelerometer offsets (the seed leaves open whether they are ever nonzero)
      });
    this.flash = encodePreferenceBlock(this.preferenceEntries);
    const val = (k: string) => this.preferenceEntries.find((e) => e.key === k)!.value as number;
    const lolaNames = Object.keys(LOLA_INDEX) as LolaJoint[];
    this.#zero = Int32Array.from(lolaNames, (n) => val(`Joint/${n}/ZeroPosition`));
    const fsrNames = ["LFoot/FrontLeft", "LFoot/FrontRight", "LFoot/RearLeft", "LFoot/RearRight", "RFoot/FrontLeft", "RFoot/FrontRight", "RFoot/RearLeft", "RFoot/RearRight"];
    this.#fsrGain = Float64Array.from(fsrNames, (n) => val(`FSR/${n}/Gain`));
    this.#fsrOffset = Float64Array.from(fsrNames, (n) => val(`FSR/${n}/Offset`));
    this.#angleOffset = Float64Array.from(["X", "Y"], (a) => val(`InertialUnit/AngleOffset/${a}`));
    const storedSerial = (name: string) => {
      const e = this.preferenceEntries.find((x) => x.key === `Board/${name}/Serial` && x.type === PrefType.U32);
      return (e?.value as number | undefined) ?? 0;
    };
    this.#boards = BOARDS.map((spec) => ({
      spec,
      joints: Int8Array.from(spec.joints, (n) => LOLA_INDEX[n as LolaJoint]),
      version: opts.boardVersions?.[spec.name] ?? 11,
      serial: spec.type === BoardType.Foot ? 0 : storedSerial(spec.name),
      started: !spec.handshake,
      left: spec.name.startsWith("Left"),
    }));
    for (const b of this.#boards) this.#byAddr.set((b.spec.bus << 8) | b.spec.address, b);
  }

  /** Change the configuration version a board reports (fault hook: reject a board). */
  setBoardVersion(name: string, version: number): void {
    const b = this.#boards.find((x) => x.spec.name === name);
    if (!b) throw new Error(`no board named ${name}`);
    b.version = version;
  }
  /** Change the serial number a board reports. */
  setBoardSerial(name: string, serial: number): void {
    const b = this.#boards.find((x) => x.spec.name === name);
    if (!b) throw new Error(`no board named ${name}`);
    b.serial = serial;
  }
  isStarted(name: string): boolean {
    return this.#boards.find((x) => x.spec.name === name)?.started ?? false;
  }

  // ---- ChestboardTransport --------------------------------------------------------------------

  bulkOut(data: Uint8Array, length: number, _timeoutMs: number, done: TransferDone): void {
    if (this.poweredOff) return done(TRANSFER_NO_DEVICE);
    this.#answerLength = -1;
    const count = indexFrame(data, length, this.#in);
    if (this.#in.fault !== FrameFault.None) {
      // A frame that does not decode is acknowledged with the CRC of what arrived, and not answered.
      const c = length >= 4 ? crc32(data, 0, length - 4) : 0;
      for (let i = 0; i < 4; i++) this.#lastCrc[i] = (c >>> (8 * i)) & 0xff;
      return done(length);
    }
    // Verified by indexFrame: the trailer is the CRC of what arrived.
    for (let i = 0; i < 4; i++) this.#lastCrc[i] = data[length - 4 + i]!;
    this.#handle(data, count);
    done(length);
  }

  vendorIn(request: number, into: Uint8Array, length: number, done: TransferDone): void {
    if (this.poweredOff) return done(TRANSFER_NO_DEVICE);
    if (request === USB.REQ_ACK && length >= USB.ACK_BYTES) {
      into[0] = USB.ACK_MAGIC;
      for (let i = 0; i < 4; i++) into[1 + i] = this.#lastCrc[i]!;
      if (this.corruptAcks > 0) {
        this.corruptAcks--;
        into[3]! ^= 0x01;
      }
      return done(USB.ACK_BYTES);
    }
    if (request === USB.REQ_STATUS && length >= USB.STATUS_BYTES) {
      const running = this.#boards.some((b) => b.spec.handshake && b.started) ? STATUS_BOARDS_RUNNING : 0;
      const s = this.mode | running;
      into[0] = s & 0xff;
      into[1] = s >> 8;
      return done(USB.STATUS_BYTES);
    }
    done(TRANSFER_ERROR);
  }

  bulkIn(into: Uint8Array, _timeoutMs: number, done: TransferDone): void {
    if (this.poweredOff) return done(TRANSFER_NO_DEVICE);
    const n = this.#answerLength;
    this.#answerLength = -1;
    if (n < 0) return done(TRANSFER_TIMEOUT);
    if (this.dropAnswers > 0) {
      this.dropAnswers--;
      return done(TRANSFER_TIMEOUT);
    }
    const len = Math.min(n, into.length);
    const a = this.#answer;
    for (let i = 0; i < len; i++) into[i] = a[i]!;
    if (this.corruptAnswers > 0) {
      this.corruptAnswers--;
      into[len >> 1]! ^= 0x5a;
    }
    if (this.#powerOffAfterAnswer) {
      this.#powerOffAfterAnswer = false;
      this.poweredOff = true; // the body stops: every later transfer finds no device
    }
    if (this.delayAnswers > 0 && this.#clock) {
      this.delayAnswers--;
      void this.#clock.sleepUntil(this.#clock.nowMs() + this.delayMs).then(() => done(len));
      return;
    }
    done(len);
  }

  async close(): Promise<void> {}

  // ---- device side ----------------------------------------------------------------------------

  #handle(data: Uint8Array, count: number): void {
    const replies = this.#replies;
    // Only when there is something to drop: setting an array's length calls into V8's runtime
    // (its accessor), a cost on every cycle for a list that is empty on every cycle.
    if (replies.length !== 0) replies.length = 0;
    let cycle = false;
    const idx = this.#in;
    for (let i = 0; i < count; i++) {
      const at = idx.starts[i]!;
      const len = idx.lengths[i]!;
      const kind = data[at]!;
      const bus = data[at + 1]!;
      const addr = data[at + 2]!;
      const q = at + 3; // payload start; NOTE: offsets, not subarray views, on the cyclic path
      const plen = len - 3;
      const board = this.#byAddr.get((bus << 8) | addr);
      switch (kind) {
        case Kind.Actuate: {
          cycle = true;
          if (board?.started && plen === board.joints.length * PAYLOAD.ACTUATE_PER_JOINT) this.#actuate(data, q, board);
          break;
        }
        case Kind.Leds: {
          cycle = true;
          const base = LED_BASE[addr];
          const n = LED_SIZE[addr];
          if (base !== undefined && plen === n) for (let k = 0; k < n; k++) this.body.leds[base + k] = data[q + k]! / 255;
          break;
        }
        case Kind.Sonar:
          cycle = true;
          if (plen === 1) {
            this.body.sonarEnabled[0] = data[q]! & 1;
            this.body.sonarEnabled[1] = (data[q]! >> 1) & 1;
          }
          break;
        case Kind.Read:
        case Kind.Control:
        case Kind.PrefRead:
          this.#request(kind, data.subarray(q, q + plen), bus, addr, board);
          break;
        default:
          break;
      }
    }
    if (replies.length) {
      // Answer what fits in one 512-byte bulk read; the host asks again for the rest.
      while (replies.length && frameSize(replies) > USB.BULK_IN_MAX_BYTES) replies.pop();
      this.#answerLength = encodeFrameInto(this.#answer, replies);
      if (this.mode === ChestMode.Shutdown) this.#powerOffAfterAnswer = true; // answered, then the power goes
      return;
    }
    if (cycle) {
      this.#advanceBody();
      this.#answerLength = this.#writeCycleAnswer();
    }
  }

  /** Requests outside the cycle (handshake, tools, preference reads): prepare side, may allocate. */
  #request(kind: number, p: Uint8Array, bus: number, addr: number, board: SimBoard | undefined): void {
    const replies = this.#replies;
    switch (kind) {
      case Kind.Read: {
        if (!board || p.length !== 1) break;
        if (p[0] === Register.Configuration && board.spec.handshake) {
          const cfg = encodeBoardConfiguration({
            status: Uint8Array.from({ length: 16 }, (_, k) => (k === 0 ? (board.started ? 1 : 0) : 0)),
            serial: board.serial,
            configVersion: board.version,
            hardwareRevision: 3,
            boardType: board.spec.type,
            jointCount: board.spec.joints.length,
            encoderCountsPerTurn: U.ENCODER_COUNTS_PER_TURN,
            currentLsbDeciMa: Math.round(U.CURRENT_A_PER_COUNT * 10000),
            temperatureStepC: U.TEMPERATURE_C_PER_COUNT,
          });
          const payload = new Uint8Array(PAYLOAD.CONFIG_ANSWER);
          payload[0] = Register.Configuration;
          payload.set(cfg, 1);
          replies.push({ kind: Kind.ReadReply, bus, address: addr, payload });
        } else if (p[0] === Register.FirmwareVersion && board.spec.type === BoardType.Chest) {
          const v = SIM_FIRMWARE_VERSION;
          replies.push({ kind: Kind.ReadReply, bus, address: addr, payload: Uint8Array.from([Register.FirmwareVersion, v.major, v.minor, v.build & 0xff, v.build >> 8]) });
        } else if (p[0] === Register.Mode && board.spec.type === BoardType.Chest) {
          replies.push({ kind: Kind.ReadReply, bus, address: addr, payload: Uint8Array.from([Register.Mode, this.mode]) });
        }
        break;
      }
      case Kind.Control: {
        if (!board || p.length !== 1) break;
        const op = p[0]!;
        let result = 1;
        if (
          (op === ControlOp.StartJointBoard && board.spec.type === BoardType.Joint) ||
          (op === ControlOp.StartHandFootBoard && (board.spec.type === BoardType.Hand || board.spec.type === BoardType.Foot))
        ) {
          // A board whose version the host did not accept is never started by it; the board itself just obeys.
          board.started = true;
          this.#cycleTemplate = null;
          result = 0;
        } else if ((op === ControlOp.PowerOff || op === ControlOp.Reboot) && board.spec.type === BoardType.Chest) {
          result = 0;
          if (op === ControlOp.PowerOff) this.mode = ChestMode.Shutdown;
          else this.rebooted++;
        }
        replies.push({ kind: Kind.ControlReply, bus, address: addr, payload: Uint8Array.from([op, result]) });
        break;
      }
      case Kind.PrefRead: {
        if (p.length !== PAYLOAD.PREF_READ) break;
        const offset = p[0]! | (p[1]! << 8);
        const n = p[2]!;
        const piece = Math.floor(offset / PREFS.PIECE_BYTES);
        if (this.silentPrefPieces.has(piece) || offset + n > PREFS.BLOCK_BYTES || n > PREFS.PIECE_BYTES) break;
        const payload = new Uint8Array(2 + n);
        payload[0] = offset & 0xff;
        payload[1] = offset >> 8;
        payload.set(this.flash.subarray(offset, offset + n), 2);
        if (this.corruptPrefPieces.has(piece)) payload[2]! ^= 0xff;
        replies.push({ kind: Kind.PrefData, bus: 0, address: 0, payload });
        break;
      }
    }
  }

  // NOTE: a small method of its own so V8 inlines the conversions (no boxed doubles per joint).
  #actuate(data: Uint8Array, q: number, board: SimBoard): void {
    const body = this.body;
    for (let j = 0; j < board.joints.length; j++) {
      const li = board.joints[j]!;
      const raw = data[q + 3 * j]! | (data[q + 3 * j + 1]! << 8);
      body.targetRad[li] = isHand(li) ? U.handFromCounts(raw, this.#zero[li]!) : U.jointAngleFromCounts(raw, this.#zero[li]!);
      body.stiffness[li] = U.stiffnessFromCounts(data[q + 3 * j + 2]!);
    }
  }

  #advanceBody(): void {
    // NOTE: the step is passed in whole microseconds, a small integer V8 never boxes.
    let dtUs = 12_000;
    if (this.#clock) {
      const now = this.#clock.nowMs();
      const last = this.#lastStepMs[0]!;
      dtUs = Number.isNaN(last) ? 12_000 : Math.round(Math.min(50, Math.max(0, now - last)) * 1000);
      this.#lastStepMs[0] = now;
    }
    this.body.stepUs(dtUs);
  }

  /** Build the answer layout for the started boards once; later cycles overwrite counts in place. */
  #layout(): FrameTemplate {
    // NOTE: the builder is a separate function: its closure context would be allocated on every
    // call, even when the cached template is returned.
    return this.#cycleTemplate ?? this.#buildLayout();
  }

  #buildLayout(): FrameTemplate {
    const msgs: ChestMessage[] = [];
    const layout: Array<{ board: SimBoard | null; kind: Kind }> = [];
    const add = (kind: Kind, bus: number, address: number, size: number, board: SimBoard | null) => {
      msgs.push({ kind, bus, address, payload: new Uint8Array(size) });
      layout.push({ board, kind });
    };
    for (const b of this.#boards) {
      if (!b.started) continue;
      switch (b.spec.type) {
        case BoardType.Joint:
          add(Kind.JointState, b.spec.bus, b.spec.address, b.joints.length * PAYLOAD.JOINT_RECORD, b);
          break;
        case BoardType.Hand:
          add(Kind.HandState, b.spec.bus, b.spec.address, PAYLOAD.JOINT_RECORD + 1, b);
          break;
        case BoardType.Foot:
          add(Kind.FootState, b.spec.bus, b.spec.address, PAYLOAD.FOOT, b);
          break;
        case BoardType.Chest:
          add(Kind.ChestState, b.spec.bus, b.spec.address, PAYLOAD.CHEST, b);
          break;
        case BoardType.Inertial:
          add(Kind.InertialState, b.spec.bus, b.spec.address, PAYLOAD.INERTIAL, b);
          break;
        case BoardType.Sonar:
          add(Kind.SonarState, b.spec.bus, b.spec.address, PAYLOAD.SONAR, b);
          break;
        case BoardType.Battery:
          add(Kind.BatteryState, b.spec.bus, b.spec.address, PAYLOAD.BATTERY, b);
          break;
      }
    }
    add(Kind.HeadState, HEAD_BUS.bus, HEAD_BUS.address, PAYLOAD.HEAD, null);
    const t = new FrameTemplate(msgs);
    this.#cycleLayout = layout.map((l, i) => ({ ...l, offset: t.payloadOffset(i) }));
    this.#cycleTemplate = t;
    this.#cycleView = new DataView(t.bytes.buffer, t.bytes.byteOffset, t.bytes.byteLength);
    return t;
  }

  /**
   * One writer per message kind, called through this table. NOTE: hot path. The call site is
   * megamorphic, so each writer is compiled on its own with its own inlining budget for the unit
   * conversions; one large switch exceeded the budget and boxed doubles on every cycle.
   */
  readonly #writers: ReadonlyArray<Writer | undefined> = (() => {
    const w: Array<Writer | undefined> = [];
    w[Kind.JointState] = (b, v, p, board) => this.#joints(b, v, p, board!, false);
    w[Kind.HandState] = (b, v, p, board) => this.#joints(b, v, p, board!, true);
    w[Kind.FootState] = (b, v, p, board) => this.#foot(b, v, p, board!);
    w[Kind.ChestState] = (b, _v, p) => {
      b[p] = this.body.touch[0]!;
    };
    w[Kind.InertialState] = (_b, v, p) => this.#inertial(v, p);
    w[Kind.BatteryState] = (_b, v, p) => this.#battery(v, p);
    w[Kind.SonarState] = (_b, v, p) => this.#sonar(v, p);
    w[Kind.HeadState] = (b, v, p) => this.#head(b, v, p);
    return w;
  })();

  #writeCycleAnswer(): number {
    const t = this.#layout();
    const b = t.bytes;
    const v = this.#cycleView!;
    const layout = this.#cycleLayout;
    for (let m = 0; m < layout.length; m++) {
      const e = layout[m]!;
      this.#writers[e.kind]!(b, v, e.offset, e.board);
    }
    t.seal();
    this.#answer.set(b); // the template's buffer is exactly one frame long
    return t.length;
  }

  #joints(b: Uint8Array, v: DataView, p: number, board: SimBoard, hand: boolean): void {
    const body = this.body;
    let q = p;
    for (let j = 0; j < board.joints.length; j++) {
      const li = board.joints[j]!;
      const rad = body.positionRad[li]!;
      const raw = isHand(li) ? U.handToCounts(rad, this.#zero[li]!) : U.jointAngleToCounts(rad, this.#zero[li]!);
      v.setUint16(q, raw, true);
      v.setUint16(q + 2, U.toCounts(body.currentA[li]!, U.CURRENT_A_PER_COUNT, 0, 65535), true);
      b[q + 4] = U.toCounts(body.temperatureC[li]!, U.TEMPERATURE_C_PER_COUNT, 0, 255);
      b[q + 5] = body.status[li]!;
      q += PAYLOAD.JOINT_RECORD;
    }
    if (hand) {
      const t0 = board.left ? 6 : 11;
      b[q] = body.touch[t0]! | (body.touch[t0 + 1]! << 1) | (body.touch[t0 + 2]! << 2);
    }
  }

  #foot(b: Uint8Array, v: DataView, p: number, board: SimBoard): void {
    const body = this.body;
    const base = board.left ? 0 : 4;
    for (let k = 0; k < 4; k++) v.setUint16(p + 2 * k, U.fsrToCounts(body.fsrKg[base + k]!, this.#fsrGain[base + k]!, this.#fsrOffset[base + k]!), true);
    const t0 = base === 0 ? 4 : 9;
    b[p + 8] = body.touch[t0]! | (body.touch[t0 + 1]! << 1);
  }

  #inertial(v: DataView, p: number): void {
    const body = this.body;
    for (let k = 0; k < 3; k++) v.setInt16(p + 2 * k, U.toCounts(body.accelerometerMps2[k]!, U.ACCEL_MPS2_PER_COUNT, U.I16.min, U.I16.max), true);
    for (let k = 0; k < 3; k++) v.setInt16(p + 6 + 2 * k, U.toCounts(body.gyroscopeRadS[k]!, U.GYRO_RADS_PER_COUNT, U.I16.min, U.I16.max), true);
    for (let k = 0; k < 2; k++) v.setInt16(p + 12 + 2 * k, U.toCounts(body.anglesRad[k]! + this.#angleOffset[k]!, U.ANGLE_RAD_PER_COUNT, U.I16.min, U.I16.max), true);
  }

  #battery(v: DataView, p: number): void {
    const body = this.body;
    v.setUint16(p, U.toCounts(body.batteryCharge, U.BATTERY_CHARGE_PER_COUNT, 0, 65535), true);
    v.setUint16(p + 2, body.batteryStatusBits, true);
    v.setInt16(p + 4, U.toCounts(body.batteryCurrentA, U.BATTERY_CURRENT_A_PER_COUNT, U.I16.min, U.I16.max), true);
    v.setUint16(p + 6, U.toCounts(body.batteryTemperatureC, U.BATTERY_TEMPERATURE_C_PER_COUNT, 0, 65535), true);
  }

  #sonar(v: DataView, p: number): void {
    v.setUint16(p, U.toCounts(this.body.sonarM[0]!, U.SONAR_M_PER_COUNT, 0, 65535), true);
    v.setUint16(p + 2, U.toCounts(this.body.sonarM[1]!, U.SONAR_M_PER_COUNT, 0, 65535), true);
  }

  #head(b: Uint8Array, v: DataView, p: number): void {
    const body = this.body;
    b[p] = body.touch[1]! | (body.touch[2]! << 1) | (body.touch[3]! << 2);
    v.setUint16(p + 1, U.toCounts(body.headVoltageV, U.HEAD_VOLTAGE_V_PER_COUNT, 0, 65535), true);
    v.setInt16(p + 3, U.toCounts(body.headPowerW / body.headVoltageV, U.HEAD_CURRENT_A_PER_COUNT, U.I16.min, U.I16.max), true);
    v.setUint16(p + 5, U.toCounts(body.headPowerW, U.HEAD_POWER_W_PER_COUNT, 0, 65535), true);
    const valid = body.faceTemperatureValid;
    v.setInt16(p + 7, valid ? U.toCounts(body.faceTemperatureC, U.TMP100_C_PER_COUNT, U.I16.min, U.I16.max) & 0xfff0 : 0, true);
    b[p + 9] = valid ? HEAD_FLAG_TMP100_VALID : 0;
  }
}
