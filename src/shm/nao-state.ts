/**
 * The NAO state crossing threads: the core publishes its NaoState after every cycle into the
 * shared region (layout: src/bodies/nao/layout.ts) under a seqlock; a host thread copies the newest
 * consistent state into its own NaoState. The safety reason crosses as UTF-8 text, rewritten only
 * when the core's reason changes (the core builds each reason string once, so comparing the
 * reference is enough): no allocation per cycle on the publishing side.
 */
import { linkStatusText } from "../bodies/link.js";
import { safetyCodeWord } from "../bodies/safety.js";
import { linkCodeOf, safetyCodeOf } from "./codes.js";
import { NAO_COUNTER, NAO_STATE_LAYOUT } from "../bodies/nao/layout.js";
import type { NaoState } from "../bodies/nao/state.js";
import { buildViews, layoutBytes, type ShmViews } from "./layout.js";
import { SeqLock } from "./seqlock.js";

export const NAO_STATE_BYTES = layoutBytes(NAO_STATE_LAYOUT);

type Views = ShmViews<typeof NAO_STATE_LAYOUT>;

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export class NaoStateChannel {
  readonly views: Views;
  readonly lock: SeqLock;
  #reasonRef: string | null | undefined = undefined;
  #reasonSeen = -1;
  #reasonText: string | null = null;

  /**
   * `words[index]` is the seqlock's sequence; the state lives in `buffer` from `start`. With
   * `followersIndex`, the core's publish wakes readers only while `words[followersIndex]` says one
   * waits (SeqLockNotify): a host that reads the state on demand is not notified every cycle.
   */
  constructor(buffer: SharedArrayBuffer, start: number, words: Int32Array, index: number, followersIndex?: number) {
    this.views = buildViews(NAO_STATE_LAYOUT, buffer, start);
    this.lock = new SeqLock(words, index, followersIndex === undefined ? "always" : { followersIndex });
  }

  /** Core side, after a cycle. Never waits, never allocates (except when the reason text changes). */
  publish(s: NaoState): void {
    const v = this.views;
    this.lock.begin();
    v.scalars.set(s.scalars);
    const c = v.counters;
    c[NAO_COUNTER.seq] = s.seq;
    c[NAO_COUNTER.unacknowledgedFrames] = s.unacknowledgedFrames;
    c[NAO_COUNTER.readTimeouts] = s.readTimeouts;
    c[NAO_COUNTER.badFrames] = s.badFrames;
    c[NAO_COUNTER.boardStatus] = s.boardStatus;
    v.accelerometer.set(s.accelerometer);
    v.gyroscope.set(s.gyroscope);
    v.angles.set(s.angles);
    v.battery.set(s.battery);
    v.fsr.set(s.fsr);
    v.sonar.set(s.sonar);
    v.touch.set(s.touch);
    v.position.set(s.position);
    v.velocity.set(s.velocity);
    v.current.set(s.current);
    v.temperature.set(s.temperature);
    v.stiffness.set(s.stiffness);
    v.footWeightKg.set(s.footWeightKg);
    v.centerOfPressureM.set(s.centerOfPressureM);
    v.status.set(s.status);
    v.jointInitialized.set(s.jointInitialized);
    v.simWorld.set(s.simWorld);
    v.simContacts.set(s.simContacts);
    v.flags[0] = s.valid ? 1 : 0;
    v.flags[1] = linkCodeOf(s.link);
    v.flags[2] = safetyCodeOf(s.safety);
    if (s.safetyReason !== this.#reasonRef) {
      this.#reasonRef = s.safetyReason;
      const h = v.reasonHeader;
      h[0] = h[0]! + 1;
      // null is length 0xffffffff; longer texts are cut at the region's size (on a character boundary)
      h[1] = s.safetyReason === null ? 0xffffffff : encoder.encodeInto(s.safetyReason, v.reasonText).written;
    }
    this.lock.end();
  }

  /** Host side: copy the newest consistent state into `into`. False when the core was mid-write on every try. */
  readInto(into: NaoState): boolean {
    const v = this.views;
    let reasonVersion = 0;
    let reasonLength = 0;
    const ok = this.lock.read(() => {
      into.scalars.set(v.scalars);
      const c = v.counters;
      into.seq = c[NAO_COUNTER.seq]!;
      into.unacknowledgedFrames = c[NAO_COUNTER.unacknowledgedFrames]!;
      into.readTimeouts = c[NAO_COUNTER.readTimeouts]!;
      into.badFrames = c[NAO_COUNTER.badFrames]!;
      into.boardStatus = c[NAO_COUNTER.boardStatus]!;
      into.accelerometer.set(v.accelerometer);
      into.gyroscope.set(v.gyroscope);
      into.angles.set(v.angles);
      into.battery.set(v.battery);
      into.fsr.set(v.fsr);
      into.sonar.set(v.sonar);
      into.touch.set(v.touch);
      into.position.set(v.position);
      into.velocity.set(v.velocity);
      into.current.set(v.current);
      into.temperature.set(v.temperature);
      into.stiffness.set(v.stiffness);
      into.footWeightKg.set(v.footWeightKg);
      into.centerOfPressureM.set(v.centerOfPressureM);
      into.status.set(v.status);
      into.jointInitialized.set(v.jointInitialized);
      into.simWorld.set(v.simWorld);
      into.simContacts.set(v.simContacts);
      into.valid = v.flags[0] === 1;
      into.link = linkStatusText(v.flags[1]!);
      into.safety = safetyCodeWord(v.flags[2]!);
      reasonVersion = v.reasonHeader[0]!;
      reasonLength = v.reasonHeader[1]!;
      if (reasonVersion !== this.#reasonSeen) this.#reasonText = reasonLength === 0xffffffff ? null : decoder.decode(v.reasonText.slice(0, reasonLength));
    });
    if (ok) {
      this.#reasonSeen = reasonVersion;
      into.safetyReason = this.#reasonText;
    }
    return ok;
  }
}
