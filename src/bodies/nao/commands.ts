/**
 * NAO commands in LoLA's keys, order and units, and their validation.
 *
 * The runtime owns one `NaoCommands` (what the controlling client asked for). Clients never write
 * it directly: they call `NaoRobot.command(leaseId, update)`, which validates with
 * `applyCommandUpdate` here. Validation rules (documented in docs/api.md and docs/lola.md):
 * - wrong length → that key is rejected with a reason, the other keys still apply;
 * - NaN or ±Infinity anywhere in a key → that key is rejected;
 * - positions outside the joint limits are **clamped** to the limit (a LoLA client cannot be told
 *   "refused" per value; clamping is what the motor boards would do anyway);
 * - stiffness is clamped to 0..1 (some LoLA clients send −1 to mean "off").
 */
import { LOLA_MAX_RAD, LOLA_MIN_RAD } from "./joints.js";

/** LED groups and their sizes (LoLA command keys, lola.md §5.1). */
export const LED_GROUPS = { Chest: 3, LEar: 10, REar: 10, LEye: 24, REye: 24, LFoot: 3, RFoot: 3, Skull: 12 } as const;
export type LedGroup = keyof typeof LED_GROUPS;
export const LED_GROUP_NAMES = Object.keys(LED_GROUPS) as LedGroup[];

export class NaoCommands {
  /** Target positions, rad (hands 0..1), LoLA order. */
  readonly position = new Float32Array(25);
  /** Target stiffness 0..1, LoLA order. */
  readonly stiffness = new Float32Array(25);
  /** LED intensities 0..1 per group. */
  readonly leds: { readonly [G in LedGroup]: Float32Array } = {
    Chest: new Float32Array(3), LEar: new Float32Array(10), REar: new Float32Array(10),
    LEye: new Float32Array(24), REye: new Float32Array(24), LFoot: new Float32Array(3),
    RFoot: new Float32Array(3), Skull: new Float32Array(12),
  };
  /** Sonar enables, [left, right]. */
  readonly sonar = new Uint8Array([1, 1]);

  /**
   * The safe idle command: stiffness 0 everywhere, LEDs off, sonar on. Positions are left as they
   * are (the runtime holds the measured positions there). Like HULKs' idle frame (sonar on so the
   * state keeps a distance), and like nidhogg's default in that no joint is driven.
   */
  setIdle(): void {
    this.stiffness.fill(0);
    for (const g of LED_GROUP_NAMES) this.leds[g].fill(0);
    this.sonar[0] = 1;
    this.sonar[1] = 1;
  }

  copyFrom(o: NaoCommands): void {
    this.position.set(o.position);
    this.stiffness.set(o.stiffness);
    for (const g of LED_GROUP_NAMES) this.leds[g].set(o.leds[g]);
    this.sonar.set(o.sonar);
  }
}

/** A partial command: any subset of keys. Arrays are in LoLA order and units. */
export interface NaoCommandUpdate {
  Position?: ArrayLike<number>;
  Stiffness?: ArrayLike<number>;
  Chest?: ArrayLike<number>;
  LEar?: ArrayLike<number>;
  REar?: ArrayLike<number>;
  LEye?: ArrayLike<number>;
  REye?: ArrayLike<number>;
  LFoot?: ArrayLike<number>;
  RFoot?: ArrayLike<number>;
  Skull?: ArrayLike<number>;
  Sonar?: ArrayLike<boolean | number>;
}

export interface CommandProblem {
  readonly key: string;
  readonly reason: string;
}

function allFinite(a: ArrayLike<number>): boolean {
  for (let i = 0; i < a.length; i++) if (typeof a[i] !== "number" || !Number.isFinite(a[i])) return false;
  return true;
}

/**
 * Apply a partial command onto `into`, key by key. Returns the rejected keys with reasons (empty
 * when everything applied). Never throws for bad values.
 */
export function applyCommandUpdate(into: NaoCommands, u: NaoCommandUpdate, problems: CommandProblem[] = []): CommandProblem[] {
  const check = (key: string, a: ArrayLike<number> | undefined, n: number): a is ArrayLike<number> => {
    if (a === undefined) return false;
    if (a.length !== n) {
      problems.push({ key, reason: `expected ${n} values, got ${a.length}` });
      return false;
    }
    if (!allFinite(a)) {
      problems.push({ key, reason: "values must be finite numbers (no NaN or Infinity)" });
      return false;
    }
    return true;
  };
  if (check("Position", u.Position, 25)) {
    for (let i = 0; i < 25; i++) into.position[i] = Math.min(LOLA_MAX_RAD[i]!, Math.max(LOLA_MIN_RAD[i]!, u.Position[i]!));
  }
  if (check("Stiffness", u.Stiffness, 25)) {
    for (let i = 0; i < 25; i++) into.stiffness[i] = Math.min(1, Math.max(0, u.Stiffness[i]!));
  }
  for (const g of LED_GROUP_NAMES) {
    const a = u[g];
    if (check(g, a, LED_GROUPS[g])) {
      const dst = into.leds[g];
      for (let i = 0; i < dst.length; i++) dst[i] = Math.min(1, Math.max(0, a[i]!));
    }
  }
  if (u.Sonar !== undefined) {
    const s = u.Sonar;
    if (s.length !== 2) problems.push({ key: "Sonar", reason: `expected 2 values, got ${s.length}` });
    else {
      into.sonar[0] = s[0] ? 1 : 0;
      into.sonar[1] = s[1] ? 1 : 0;
    }
  }
  return problems;
}
