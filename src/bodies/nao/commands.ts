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
    Chest: new Float32Array(3),
    LEar: new Float32Array(10),
    REar: new Float32Array(10),
    LEye: new Float32Array(24),
    REye: new Float32Array(24),
    LFoot: new Float32Array(3),
    RFoot: new Float32Array(3),
    Skull: new Float32Array(12),
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

/** The problems of a command that has none (shared and frozen: nobody pushes to it). */
export const NO_COMMAND_PROBLEMS: CommandProblem[] = Object.freeze([]) as unknown as CommandProblem[];

/** Whether `a` is an array of `n` finite numbers; if not (and it is there), why, in `problems`. */
function checked(problems: CommandProblem[] | null, key: string, a: ArrayLike<number> | undefined, n: number): CommandProblem[] | null | false {
  if (a === undefined) return false;
  const reason = a.length !== n ? `expected ${n} values, got ${a.length}` : !allFinite(a) ? "values must be finite numbers (no NaN or Infinity)" : null;
  if (reason === null) return null;
  const out = problems ?? [];
  out.push({ key, reason });
  return out;
}

/** One LED group's key: applied (each value clamped to 0..1) when it is valid, else its problem added to `out`. */
function applyLeds(out: CommandProblem[] | null, key: LedGroup, a: ArrayLike<number> | undefined, dst: Float32Array): CommandProblem[] | null {
  const r = checked(out, key, a, dst.length);
  if (r === null) {
    for (let i = 0; i < dst.length; i++) dst[i] = Math.min(1, Math.max(0, a![i]!));
    return out;
  }
  return r === false ? out : r;
}

/**
 * Apply a partial command onto `into`, key by key. Returns the rejected keys with reasons (empty
 * when everything applied). Never throws for bad values. Allocation-free when every key applies
 * (the LoLA server calls it once per command on the real-time core's thread): the empty answer
 * is then the shared, frozen NO_COMMAND_PROBLEMS unless `problems` is given.
 */
export function applyCommandUpdate(into: NaoCommands, u: NaoCommandUpdate, problems?: CommandProblem[]): CommandProblem[] {
  let out: CommandProblem[] | null = problems ?? null;
  let r = checked(out, "Position", u.Position, 25);
  if (r === null) {
    const a = u.Position!;
    for (let i = 0; i < 25; i++) into.position[i] = Math.min(LOLA_MAX_RAD[i]!, Math.max(LOLA_MIN_RAD[i]!, a[i]!));
  } else if (r) out = r;
  r = checked(out, "Stiffness", u.Stiffness, 25);
  if (r === null) {
    const a = u.Stiffness!;
    for (let i = 0; i < 25; i++) into.stiffness[i] = Math.min(1, Math.max(0, a[i]!));
  } else if (r) out = r;
  // Each group by name, in LED_GROUP_NAMES' order: `u[g]` over eight names is a megamorphic keyed
  // load per group per command (docs/performance.md).
  const leds = into.leds;
  out = applyLeds(out, "Chest", u.Chest, leds.Chest);
  out = applyLeds(out, "LEar", u.LEar, leds.LEar);
  out = applyLeds(out, "REar", u.REar, leds.REar);
  out = applyLeds(out, "LEye", u.LEye, leds.LEye);
  out = applyLeds(out, "REye", u.REye, leds.REye);
  out = applyLeds(out, "LFoot", u.LFoot, leds.LFoot);
  out = applyLeds(out, "RFoot", u.RFoot, leds.RFoot);
  out = applyLeds(out, "Skull", u.Skull, leds.Skull);
  if (u.Sonar !== undefined) {
    const s = u.Sonar;
    if (s.length !== 2) {
      out = out ?? [];
      out.push({ key: "Sonar", reason: `expected 2 values, got ${s.length}` });
    } else {
      into.sonar[0] = s[0] ? 1 : 0;
      into.sonar[1] = s[1] ? 1 : 0;
    }
  }
  return out ?? NO_COMMAND_PROBLEMS;
}
