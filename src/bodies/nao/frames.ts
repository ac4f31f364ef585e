/**
 * NAO command and answer frames over the chest-board codec: LoLA arrays ↔ chest-board messages.
 *
 * - {@link CommandFrame}: the per-cycle OUT frame, built once after the handshake from the
 *   accepted boards (Actuate per joint/hand board, one Leds message per group, Sonar) and then
 *   overwritten in place every cycle. NOTE: hot path, no allocation.
 * - {@link AnswerDecoder}: decodes an IN frame into a NaoState in place. Each message kind's
 *   payload size is checked; wrong sizes and unknown boards are counted and skipped, never thrown.
 */
import { BOARDS, type BoardSpec, BoardType, HEAD_BUS, HEAD_FLAG_TMP100_VALID, Kind, LED_GROUP_IDS, PAYLOAD } from "../../wire/chestboard/constants.js";
import { type ChestMessage, FrameFault, FrameIndex, FrameTemplate, indexFrame } from "../../wire/chestboard/frame.js";
import { type NaoCommands, LED_GROUPS, type LedGroup } from "./commands.js";
import { computeFeet } from "./feet.js";
import { LOLA_INDEX, type LolaJoint, isHand } from "./joints.js";
import type { NaoPreferences } from "./prefs.js";
import { type NaoState, SCALAR } from "./state.js";
import * as U from "./units.js";

/** LoLA indices of a board's joints. */
export function boardJointIndices(b: BoardSpec): Int8Array {
  return Int8Array.from(b.joints, (n) => LOLA_INDEX[n as LolaJoint]);
}

/** Touch indices (seed order) fed by each source. */
export const TOUCH = {
  chestButton: 0,
  head: [1, 2, 3],
  leftBumper: [4, 5],
  leftHand: [6, 7, 8],
  rightBumper: [9, 10],
  rightHand: [11, 12, 13],
} as const;

export class CommandFrame {
  readonly template: FrameTemplate;
  readonly #actuate: Array<{ offset: number; joints: Int8Array }> = [];
  readonly #leds: Array<{ offset: number; group: LedGroup }> = [];
  readonly #sonarOffset: number;
  readonly #zero: Int32Array;

  /** `accepted`: the boards whose handshake succeeded (only they get Actuate messages). */
  constructor(accepted: readonly BoardSpec[], prefs: NaoPreferences) {
    this.#zero = prefs.jointZeroCounts;
    const msgs: ChestMessage[] = [];
    const actuated = accepted.filter((b) => b.type === BoardType.Joint || b.type === BoardType.Hand);
    for (const b of actuated) msgs.push({ kind: Kind.Actuate, bus: b.bus, address: b.address, payload: new Uint8Array(b.joints.length * PAYLOAD.ACTUATE_PER_JOINT) });
    const groups = Object.keys(LED_GROUPS) as LedGroup[];
    for (const g of groups) msgs.push({ kind: Kind.Leds, bus: 0, address: LED_GROUP_IDS[g], payload: new Uint8Array(LED_GROUPS[g]) });
    msgs.push({ kind: Kind.Sonar, bus: 0, address: 0x03, payload: new Uint8Array(1) });
    this.template = new FrameTemplate(msgs);
    let i = 0;
    for (const b of actuated) this.#actuate.push({ offset: this.template.payloadOffset(i++), joints: boardJointIndices(b) });
    for (const g of groups) this.#leds.push({ offset: this.template.payloadOffset(i++), group: g });
    this.#sonarOffset = this.template.payloadOffset(i);
  }

  /**
   * Write `cmd` into the frame, with stiffness multiplied by `stiffnessScale` (the safety ramp),
   * record the stiffness actually sent into `sentStiffness`, and seal the CRC.
   */
  encode(cmd: NaoCommands, stiffnessScale: number, sentStiffness: Float32Array): void {
    const b = this.template.bytes;
    for (let k = 0; k < this.#actuate.length; k++) {
      const a = this.#actuate[k]!;
      let at = a.offset;
      for (let j = 0; j < a.joints.length; j++) {
        const li = a.joints[j]!;
        const target = cmd.position[li]!;
        const raw = isHand(li) ? U.handToCounts(target, this.#zero[li]!) : U.jointAngleToCounts(target, this.#zero[li]!);
        const s = U.stiffnessToCounts(cmd.stiffness[li]! * stiffnessScale);
        sentStiffness[li] = U.stiffnessFromCounts(s);
        b[at] = raw & 0xff; // position, u16
        b[at + 1] = raw >> 8;
        b[at + 2] = s; // stiffness, u8 0..255
        at += PAYLOAD.ACTUATE_PER_JOINT;
      }
    }
    for (let k = 0; k < this.#leds.length; k++) {
      const l = this.#leds[k]!;
      const src = cmd.leds[l.group];
      for (let i = 0; i < src.length; i++) b[l.offset + i] = Math.round(Math.min(1, Math.max(0, src[i]!)) * 255);
    }
    b[this.#sonarOffset] = (cmd.sonar[0] ? 1 : 0) | (cmd.sonar[1] ? 2 : 0);
    this.template.seal();
  }
}

type Handler = (b: Uint8Array, v: DataView, at: number, p: number, len: number, s: NaoState) => boolean;

export interface AnswerStats {
  /** Messages with a known kind and board, used. */
  used: number;
  /** Messages skipped: unknown kind or board, or a payload of the wrong size. */
  skipped: number;
  fault: FrameFault;
}

/** Decodes answer frames into a NaoState in place. One instance per link; no allocation per frame. */
export class AnswerDecoder {
  readonly index = new FrameIndex();
  readonly stats: AnswerStats = { used: 0, skipped: 0, fault: FrameFault.None };
  /** By (bus << 8) | address; `left`: a left-side hand or foot board, worked out once (not per frame). */
  readonly #boards = new Map<number, { spec: BoardSpec; joints: Int8Array; left: boolean }>();
  #prefs: NaoPreferences;
  #view: DataView | null = null;

  constructor(prefs: NaoPreferences) {
    this.#prefs = prefs;
    for (const b of BOARDS) this.#boards.set((b.bus << 8) | b.address, { spec: b, joints: boardJointIndices(b), left: b.name.startsWith("Left") });
  }

  /** Decode `bytes[0, length)`; returns false (state untouched) when the frame is bad. */
  decode(bytes: Uint8Array, length: number, s: NaoState): boolean {
    const st = this.stats;
    st.used = 0;
    st.skipped = 0;
    const count = indexFrame(bytes, length, this.index);
    st.fault = this.index.fault;
    if (this.index.fault !== FrameFault.None) return false;
    const v = this.#viewOf(bytes);
    for (let i = 0; i < count; i++) {
      const at = this.index.starts[i]!;
      const len = this.index.lengths[i]! - 3;
      if (this.#message(bytes, v, at, len, s)) st.used++;
      else st.skipped++;
    }
    computeFeet(s.fsr, s.footWeightKg, s.centerOfPressureM);
    return true;
  }

  #viewOf(bytes: Uint8Array): DataView {
    const v = this.#view;
    if (v && v.buffer === bytes.buffer && v.byteOffset === bytes.byteOffset && v.byteLength === bytes.byteLength) return v;
    this.#view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    return this.#view;
  }

  /**
   * Per-kind handlers, called through this table. NOTE: hot path. A call site with this many
   * targets is megamorphic, so V8 compiles each handler on its own, with its own inlining budget
   * for the unit conversions inside it. Inlined into one function they exceeded the budget, and a
   * conversion left out-of-line boxed its double result: 32 bytes allocated per cycle.
   */
  readonly #handlers: ReadonlyArray<Handler | undefined> = (() => {
    const h: Array<Handler | undefined> = [];
    h[Kind.JointState] = (b, v, at, p, len, s) => this.#joints(b, v, at, p, len, s, false);
    h[Kind.HandState] = (b, v, at, p, len, s) => this.#joints(b, v, at, p, len, s, true);
    h[Kind.FootState] = (b, v, at, p, len, s) => this.#foot(b, v, at, p, len, s);
    h[Kind.InertialState] = (_b, v, _at, p, len, s) => len === PAYLOAD.INERTIAL && this.#inertial(v, p, s);
    h[Kind.BatteryState] = (_b, v, _at, p, len, s) => len === PAYLOAD.BATTERY && this.#battery(v, p, s);
    h[Kind.SonarState] = (_b, v, _at, p, len, s) => len === PAYLOAD.SONAR && this.#sonar(v, p, s);
    h[Kind.ChestState] = (b, _v, _at, p, len, s) => {
      if (len !== PAYLOAD.CHEST) return false;
      s.touch[TOUCH.chestButton] = b[p]! & 1;
      return true;
    };
    h[Kind.HeadState] = (b, v, at, p, len, s) => len === PAYLOAD.HEAD && b[at + 1] === HEAD_BUS.bus && this.#head(b, v, p, s);
    return h;
  })();

  #message(b: Uint8Array, v: DataView, at: number, len: number, s: NaoState): boolean {
    return this.#handlers[b[at]!]?.(b, v, at, at + 3, len, s) ?? false;
  }

  #joints(b: Uint8Array, v: DataView, at: number, p: number, len: number, s: NaoState, hand: boolean): boolean {
    const board = this.#boards.get((b[at + 1]! << 8) | b[at + 2]!);
    if (!board) return false;
    const n = board.joints.length;
    if (n === 0 || len !== n * PAYLOAD.JOINT_RECORD + (hand ? 1 : 0)) return false;
    const zero = this.#prefs.jointZeroCounts;
    let q = p;
    for (let j = 0; j < n; j++) {
      const li = board.joints[j]!;
      const raw = v.getUint16(q, true);
      s.position[li] = isHand(li) ? U.handFromCounts(raw, zero[li]!) : U.jointAngleFromCounts(raw, zero[li]!);
      s.current[li] = U.currentFromCounts(v.getUint16(q + 2, true));
      s.temperature[li] = U.temperatureFromCounts(b[q + 4]!);
      s.status[li] = Math.min(3, b[q + 5]!);
      q += PAYLOAD.JOINT_RECORD;
    }
    if (hand) {
      const bits = b[q]!;
      const t = board.left ? TOUCH.leftHand : TOUCH.rightHand;
      for (let k = 0; k < 3; k++) s.touch[t[k]!] = (bits >> k) & 1;
    }
    return true;
  }

  #foot(b: Uint8Array, v: DataView, at: number, p: number, len: number, s: NaoState): boolean {
    const board = this.#boards.get((b[at + 1]! << 8) | b[at + 2]!);
    if (!board || board.spec.type !== BoardType.Foot || len !== PAYLOAD.FOOT) return false;
    const left = board.left;
    const base = left ? 0 : 4;
    const gain = this.#prefs.fsrGainKgPerCount;
    const offset = this.#prefs.fsrOffsetKg;
    for (let k = 0; k < 4; k++) s.fsr[base + k] = U.fsrFromCounts(v.getUint16(p + 2 * k, true), gain[base + k]!, offset[base + k]!);
    const bits = b[p + 8]!;
    const t = left ? TOUCH.leftBumper : TOUCH.rightBumper;
    s.touch[t[0]] = bits & 1;
    s.touch[t[1]] = (bits >> 1) & 1;
    return true;
  }

  #inertial(v: DataView, p: number, s: NaoState): boolean {
    for (let k = 0; k < 3; k++) s.accelerometer[k] = U.accelFromCounts(v.getInt16(p + 2 * k, true));
    for (let k = 0; k < 3; k++) s.gyroscope[k] = U.gyroFromCounts(v.getInt16(p + 6 + 2 * k, true));
    const off = this.#prefs.angleOffsetRad;
    for (let k = 0; k < 2; k++) s.angles[k] = U.angleFromCounts(v.getInt16(p + 12 + 2 * k, true), off[k]!);
    return true;
  }

  #battery(v: DataView, p: number, s: NaoState): boolean {
    const charge = U.batteryChargeFromCounts(v.getUint16(p, true));
    if (!Number.isNaN(charge)) s.battery[0] = charge; // out-of-range charge is dropped: the last value stays
    // The status register as LoLA reports it: a signed 16-bit value, so the set top bit makes it
    // negative (rUNSWift's raw captures: -32724 discharging, -32628 charging; docs/protocol/chestboard.md).
    s.battery[1] = v.getInt16(p + 2, true);
    s.battery[2] = U.batteryCurrentFromCounts(v.getInt16(p + 4, true));
    const t = v.getUint16(p + 6, true);
    s.battery[3] = U.batteryTemperatureLolaFromCounts(t);
    s.scalars[SCALAR.batteryTemperatureC] = U.batteryTemperatureCFromCounts(t);
    return true;
  }

  #sonar(v: DataView, p: number, s: NaoState): boolean {
    s.sonar[0] = U.sonarFromCounts(v.getUint16(p, true));
    s.sonar[1] = U.sonarFromCounts(v.getUint16(p + 2, true));
    return true;
  }

  #head(b: Uint8Array, v: DataView, p: number, s: NaoState): boolean {
    const bits = b[p]!;
    for (let k = 0; k < 3; k++) s.touch[TOUCH.head[k]!] = (bits >> k) & 1;
    const h = s.scalars;
    h[SCALAR.headVoltageV] = U.headVoltageFromCounts(v.getUint16(p + 1, true));
    h[SCALAR.headCurrentA] = U.headCurrentFromCounts(v.getInt16(p + 3, true));
    h[SCALAR.headPowerW] = U.headPowerFromCounts(v.getUint16(p + 5, true));
    if (b[p + 9]! & HEAD_FLAG_TMP100_VALID) h[SCALAR.faceTemperatureC] = U.tmp100FromCounts(v.getInt16(p + 7, true));
    return true;
  }
}

/**
 * The stiffness a command frame carries, per LoLA joint (the inverse of {@link CommandFrame}'s
 * stiffness byte): what LoLA reports as `Stiffness`, "as commanded". Joints without an Actuate
 * message in the frame keep their value in `into`. Returns false (nothing written) for a frame
 * that does not decode. Used by verify and replay, which rebuild the state from recorded frames.
 * With `positions`, also the position targets it carries (rad; hands 0..1), converted with the
 * robot's joint zero counts (the preference block): the LeRobot export's NAO action.
 */
export class CommandStiffnessDecoder {
  readonly #index = new FrameIndex();
  readonly #boards = new Map<number, Int8Array>();

  constructor() {
    for (const b of BOARDS) if (b.type === BoardType.Joint || b.type === BoardType.Hand) this.#boards.set((b.bus << 8) | b.address, boardJointIndices(b));
  }

  decode(bytes: Uint8Array, length: number, into: Float32Array, positions?: { readonly into: Float32Array; readonly zeroCounts: Int32Array }): boolean {
    const count = indexFrame(bytes, length, this.#index);
    if (this.#index.fault !== FrameFault.None) return false;
    for (let i = 0; i < count; i++) {
      const at = this.#index.starts[i]!;
      if (bytes[at] !== Kind.Actuate) continue;
      const joints = this.#boards.get((bytes[at + 1]! << 8) | bytes[at + 2]!);
      if (!joints || this.#index.lengths[i]! - 3 !== joints.length * PAYLOAD.ACTUATE_PER_JOINT) continue;
      let q = at + 3;
      for (let j = 0; j < joints.length; j++) {
        const li = joints[j]!;
        into[li] = U.stiffnessFromCounts(bytes[q + 2]!); // position u16, stiffness u8
        if (positions) {
          const raw = bytes[q]! | (bytes[q + 1]! << 8);
          const zero = positions.zeroCounts[li]!;
          positions.into[li] = isHand(li) ? U.handFromCounts(raw, zero) : U.jointAngleFromCounts(raw, zero);
        }
        q += PAYLOAD.ACTUATE_PER_JOINT;
      }
    }
    return true;
  }
}
