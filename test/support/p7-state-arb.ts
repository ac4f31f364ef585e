/**
 * A random P7 state and link, every field (NaN and -0 included), for the property tests of
 * everything that carries a P7State across a boundary (the shared-memory channel, the recording).
 */
import fc from "fast-check";
import { LINK_STATUS, type LinkStatus } from "../../src/bodies/link.js";
import { P7State } from "../../src/bodies/p7/state.js";

const f64 = fc.double({ noNaN: false });

export const p7StateFields = fc.record({
  seq: fc.integer({ min: 0, max: 2 ** 40 }),
  timestampMs: f64,
  epochMs: f64,
  valid: fc.tuple(fc.boolean(), fc.boolean(), fc.boolean()),
  arrays: fc.array(fc.array(f64, { minLength: 7, maxLength: 7 }), { minLength: 4, maxLength: 4 }),
  imu: fc.array(fc.array(f64, { minLength: 3, maxLength: 3 }), { minLength: 2, maxLength: 2 }),
  errorIds: fc.array(fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }), { minLength: 7, maxLength: 7 }),
  link: fc.constantFrom(...LINK_STATUS),
});
export type P7StateFields = typeof p7StateFields extends fc.Arbitrary<infer T> ? T : never;

/** A P7State (and its link) holding exactly `r`. */
export function p7StateOf(r: P7StateFields): { state: P7State; link: LinkStatus } {
  const s = new P7State();
  s.seq = r.seq;
  s.timestampMs = r.timestampMs;
  s.epochMs = r.epochMs;
  [s.jointValid, s.motorValid, s.imuValid] = r.valid;
  [s.angles, s.velocities, s.efforts, s.temperatures].forEach((a, i) => {
    a.set(r.arrays[i]!);
  });
  s.errorIds.set(r.errorIds);
  s.angularVelocity.set(r.imu[0]!);
  s.linearAcceleration.set(r.imu[1]!);
  return { state: s, link: r.link };
}
