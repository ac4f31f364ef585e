/**
 * The check behind `bodylink verify`: rebuild the state from raw chest-board frames with the
 * current decoder, and compare it with the LoLA messages that were sent at the time, value by
 * value, bit for bit.
 *
 * Pairing rule, by order (file order in a recording, time order for a usbmon capture): a LoLA
 * message reflects every answer frame decoded before it (the decoder keeps state across frames,
 * as the runtime does: a message missing from a frame leaves its values as they were) and the
 * stiffness of the last command frame sent before it (LoLA's `Stiffness` is what was commanded).
 *
 * Bit for bit: the recorded message is decoded with its numbers as exact doubles (a float32
 * widens exactly), the re-decoded value is the state's float32; they are identical only when
 * `Object.is` holds, so 0 and -0 differ, and a float64 LoLA value that float32 cannot hold differs.
 */
import { AnswerDecoder, CommandStiffnessDecoder } from "../bodies/nao/frames.js";
import { interpretPreferences } from "../bodies/nao/prefs.js";
import { NaoState } from "../bodies/nao/state.js";
import { decodePreferenceBlock } from "../wire/chestboard/prefs.js";
import { LOLA_SENSOR_KEYS } from "../wire/lola/constants.js";
import { LolaSensorReader, type LolaSensorTarget } from "../wire/lola/sensor-reader.js";

export interface VerifyDifference {
  /** 1-based number of the LoLA message. */
  readonly message: number;
  readonly messageTimeNs: bigint;
  readonly key: string;
  readonly index: number;
  readonly recorded: number;
  readonly redecoded: number;
  /** 1-based number of the answer frame the value was last decoded from (null: none yet). */
  readonly frame: number | null;
  readonly frameTimeNs: bigint | null;
}

export interface VerifyResult {
  readonly messages: number;
  readonly identicalMessages: number;
  readonly values: number;
  readonly identicalValues: number;
  /** Answer frames decoded (and those that did not decode). */
  readonly answerFrames: number;
  readonly badAnswerFrames: number;
  readonly commandFrames: number;
  /** LoLA messages that did not decode (counted as different, every value). */
  readonly malformedMessages: number;
  /** Values compared per message, by key. */
  readonly valuesPerMessage: number;
  readonly keys: readonly string[];
  /** The first differences (at most `maxDifferences`). */
  readonly differences: readonly VerifyDifference[];
  readonly firstTimeNs: bigint | null;
  readonly lastTimeNs: bigint | null;
}

const NUMERIC_KEYS = LOLA_SENSOR_KEYS.filter((k) => k.field !== "robotConfig");
const VALUES_PER_MESSAGE = NUMERIC_KEYS.reduce((n, k) => n + k.count, 0);

/** Interpreted preferences from a raw block, or a reason. */
export function preferencesFromBlock(block: Uint8Array) {
  const d = decodePreferenceBlock(block);
  if (!d.ok) return { ok: false as const, reason: d.reason };
  const i = interpretPreferences(d.entries);
  if (!i.ok) return { ok: false as const, reason: i.reason };
  return { ok: true as const, prefs: i.prefs };
}

export class Verifier {
  readonly state = new NaoState();
  readonly #answers: AnswerDecoder;
  readonly #stiffness = new CommandStiffnessDecoder();
  readonly #target: LolaSensorTarget;
  readonly #reader: LolaSensorReader;
  readonly #max: number;
  readonly #diffs: VerifyDifference[] = [];
  #messages = 0;
  #identicalMessages = 0;
  #identicalValues = 0;
  #malformed = 0;
  #answerFrames = 0;
  #badAnswerFrames = 0;
  #commandFrames = 0;
  #lastFrame: number | null = null;
  #lastFrameTimeNs: bigint | null = null;
  #first: bigint | null = null;
  #last: bigint | null = null;

  /** `prefsBlock`: the chest board's raw preference block (joint zeros, FSR gains, IMU offsets). Throws when it does not decode. */
  constructor(prefsBlock: Uint8Array, opts: { maxDifferences?: number } = {}) {
    const p = preferencesFromBlock(prefsBlock);
    if (!p.ok) throw new Error(`preference block unusable: ${p.reason}`);
    this.#answers = new AnswerDecoder(p.prefs);
    this.#max = opts.maxDifferences ?? 20;
    const t: Record<string, number[]> = {};
    for (const k of NUMERIC_KEYS) t[k.field] = new Array<number>(k.count).fill(0);
    this.#target = t as unknown as LolaSensorTarget;
    this.#reader = new LolaSensorReader(this.#target);
  }

  /** An answer frame (bulk IN), in order. */
  answer(bytes: Uint8Array, length: number, timeNs: bigint): void {
    this.#answerFrames++;
    if (this.#answers.decode(bytes, length, this.state)) {
      this.#lastFrame = this.#answerFrames;
      this.#lastFrameTimeNs = timeNs;
    } else {
      this.#badAnswerFrames++;
    }
  }

  /** A command frame (bulk OUT), in order. */
  command(bytes: Uint8Array, length: number): void {
    this.#commandFrames++;
    this.#stiffness.decode(bytes, length, this.state.stiffness);
  }

  /** A LoLA sensor message as it was sent: compare it with the re-decoded state. Returns true when identical. */
  lola(bytes: Uint8Array, timeNs: bigint): boolean {
    const n = ++this.#messages;
    this.#first ??= timeNs;
    this.#last = timeNs;
    let ok = false;
    try {
      ok = this.#reader.decode(bytes, 0, bytes.length) > 0;
    } catch {
      ok = false;
    }
    if (!ok) {
      this.#malformed++;
      if (this.#diffs.length < this.#max) this.#diffs.push(this.#diff(n, timeNs, "(message)", -1, Number.NaN, Number.NaN));
      return false;
    }
    let same = 0;
    const s = this.state as unknown as Record<string, ArrayLike<number>>;
    const t = this.#target as unknown as Record<string, ArrayLike<number>>;
    for (const k of NUMERIC_KEYS) {
      const got = t[k.field]!;
      const want = s[k.field]!;
      for (let i = 0; i < k.count; i++) {
        if (Object.is(got[i], want[i])) same++;
        else if (this.#diffs.length < this.#max) this.#diffs.push(this.#diff(n, timeNs, k.key, i, got[i]!, want[i]!));
      }
    }
    this.#identicalValues += same;
    if (same === VALUES_PER_MESSAGE) this.#identicalMessages++;
    return same === VALUES_PER_MESSAGE;
  }

  #diff(message: number, timeNs: bigint, key: string, index: number, recorded: number, redecoded: number): VerifyDifference {
    return { message, messageTimeNs: timeNs, key, index, recorded, redecoded, frame: this.#lastFrame, frameTimeNs: this.#lastFrameTimeNs };
  }

  result(): VerifyResult {
    return {
      messages: this.#messages,
      identicalMessages: this.#identicalMessages,
      values: this.#messages * VALUES_PER_MESSAGE,
      identicalValues: this.#identicalValues,
      answerFrames: this.#answerFrames,
      badAnswerFrames: this.#badAnswerFrames,
      commandFrames: this.#commandFrames,
      malformedMessages: this.#malformed,
      valuesPerMessage: VALUES_PER_MESSAGE,
      keys: NUMERIC_KEYS.map((k) => `${k.key} ${k.count}`),
      differences: [...this.#diffs],
      firstTimeNs: this.#first,
      lastTimeNs: this.#last,
    };
  }
}

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);
const f64 = new Float64Array(1);
const u64 = new BigUint64Array(f64.buffer);
/** A value with its bits: float32 bits when it is a float32, else float64 bits. */
function bits(v: number): string {
  f32[0] = v;
  if (Object.is(f32[0], v)) return `0x${u32[0]!.toString(16).padStart(8, "0")}`;
  f64[0] = v;
  return `0x${u64[0]!.toString(16).padStart(16, "0")} (float64)`;
}

/** The seed's kind of summary, plus one line per difference. */
export function formatVerifyResult(label: string, r: VerifyResult): string[] {
  const fmt = (n: number) => n.toLocaleString("en-US");
  const lines: string[] = [];
  const t0 = r.firstTimeNs;
  const rel = (t: bigint | null) => (t === null || t0 === null ? "-" : `${t >= t0 ? "+" : ""}${(Number(t - t0) / 1e9).toFixed(3)} s`);
  const span = t0 !== null && r.lastTimeNs !== null ? `, ${(Number(r.lastTimeNs - t0) / 1e9).toFixed(1)} s from ${new Date(Number(t0 / 1_000_000n)).toISOString()}` : "";
  lines.push(
    `${label}: ${fmt(r.answerFrames)} answer frames and ${fmt(r.commandFrames)} command frames re-decoded with the current decoder${r.badAnswerFrames ? ` (${fmt(r.badAnswerFrames)} did not decode)` : ""}; ${fmt(r.messages)} LoLA messages${span}`,
  );
  lines.push(`compared ${r.valuesPerMessage} values per message: ${r.keys.join(", ")}`);
  if (r.messages > 0 && r.identicalValues === r.values) {
    lines.push(`${fmt(r.identicalValues)} values in ${fmt(r.messages)} of LoLA's messages came out bit-identical.`);
    return lines;
  }
  const diffValues = r.values - r.identicalValues;
  lines.push(
    `${fmt(r.identicalValues)} of ${fmt(r.values)} values identical; ${fmt(diffValues)} values differ in ${fmt(r.messages - r.identicalMessages)} of ${fmt(r.messages)} messages${r.malformedMessages ? ` (${fmt(r.malformedMessages)} messages did not decode)` : ""}`,
  );
  for (const d of r.differences) {
    if (d.index < 0) {
      lines.push(`  message ${fmt(d.message)} at ${rel(d.messageTimeNs)}: not a LoLA sensor message`);
      continue;
    }
    const frame = d.frame === null ? "no answer frame decoded yet" : `answer frame ${fmt(d.frame)} at ${rel(d.frameTimeNs)}`;
    lines.push(`  message ${fmt(d.message)} at ${rel(d.messageTimeNs)}: ${d.key}[${d.index}] recorded ${d.recorded} (${bits(d.recorded)}), re-decoded ${d.redecoded} (${bits(d.redecoded)}); ${frame}`);
  }
  if (diffValues > r.differences.length) lines.push(`  … ${fmt(diffValues - r.differences.length)} more (--max-differences N shows more)`);
  return lines;
}
