/**
 * What the body adapters share: the part of BodyAdapter every body does the same way (AdapterBase),
 * float32 values as short JSON numbers, joint-order remapping.
 *
 * Prepare side (allocates: these build the 20 Hz message and REST answers).
 */
import type { CycleListener } from "../../../runtime/loop.js";
import type { BodyRuntime } from "../../../runtime/robot.js";

/** The runtime surface AdapterBase delegates to (NaoRobot, NaoHost, P7Robot and Tny360Robot all have it). */
export interface AdaptedRobot extends BodyRuntime {
  onCycle(listener: CycleListener): () => void;
}

/**
 * Holds the runtime and delegates the emergency stop and cycle listeners to it; an adapter that
 * keeps per-cycle state of its own registers it with `listen`, and `close` drops it.
 */
export abstract class AdapterBase<R extends AdaptedRobot> {
  protected readonly body: R;
  readonly #unsubscribe: Array<() => void> = [];

  protected constructor(robot: R) {
    this.body = robot;
  }

  get robot(): BodyRuntime {
    return this.body;
  }

  /** No lease needed: the body goes to its safe stop now and control is revoked. */
  emergencyStop(reason: string): void {
    void Promise.resolve(this.body.emergencyStop(reason)).catch(() => {});
  }

  onCycle(listener: CycleListener): () => void {
    return this.body.onCycle(listener);
  }

  /** The body's sampler (BodyRuntime.onSample), or null when it has none (decimate onCycle). */
  onSample(periodMs: number, listener: CycleListener): (() => void) | null {
    return this.body.onSample ? this.body.onSample(periodMs, listener) : null;
  }

  /** Drop the adapter's own cycle listeners (server close). */
  close(): void {
    for (const off of this.#unsubscribe.splice(0)) off();
  }

  /** Run `perCycle` after every body cycle until close (perform side: keep it allocation-free). */
  protected listen(perCycle: () => void): void {
    this.#unsubscribe.push(this.body.onCycle(perCycle));
  }
}

/**
 * The shortest decimal that reads back as the same float32. State values are float32 (LoLA's
 * type); printed as float64 they carry noise digits (`0.30000001192092896`) that cost bytes on
 * every message and suggest precision the sensor does not have. Non-finite values become 0: JSON
 * has no NaN/Infinity, and state arrays are finite by construction (decoders reject the rest).
 */
export function f32(v: number): number {
  const f = Math.fround(v);
  // NaN, ±Infinity and doubles beyond float32's range (fround gives ±Infinity) have no float32
  // value JSON can carry; −0 prints as 0 anyway.
  if (f === 0 || !Number.isFinite(f)) return 0;
  for (let p = 6; p < 10; p++) {
    const r = Number(f.toPrecision(p));
    if (Math.fround(r) === f) return r;
  }
  return f;
}

/** `src` as short float32 numbers; with `order`, element i is `src[order[i]]`. */
export function f32Array(src: ArrayLike<number>, order?: ArrayLike<number>): number[] {
  const n = order ? order.length : src.length;
  const out = new Array<number>(n);
  for (let i = 0; i < n; i++) out[i] = f32(src[order ? order[i]! : i]!);
  return out;
}

/** Plain integers (status bytes, error ids), optionally reordered. */
export function intArray(src: ArrayLike<number>, order?: ArrayLike<number>): number[] {
  const n = order ? order.length : src.length;
  const out = new Array<number>(n);
  for (let i = 0; i < n; i++) out[i] = Math.trunc(src[order ? order[i]! : i]!); // u32 bit fields stay positive
  return out;
}
