/**
 * Properties of the robot API's pure pieces: the float32 printer, and the SDK's reading of state
 * messages (a decoder of untrusted JSON: it must never throw, and whatever it accepts has the
 * body's lengths, finite numbers and is frozen).
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { StateMessage } from "../../src/client/messages.js";
import { BODY_SHAPES, buildModels, deepFreeze } from "../../src/client/snapshots.js";
import { f32, f32Array } from "../../src/serve/api/bodies/common.js";

describe("f32", () => {
  it("reads back as the same float32, never longer than the float64 print", () => {
    fc.assert(
      fc.property(fc.double({ noNaN: true, noDefaultInfinity: true }), (v) => {
        const x = f32(v);
        expect(Number.isFinite(x)).toBe(true); // JSON must be able to carry it
        const f = Math.fround(v);
        expect(Math.fround(x)).toBe(Number.isFinite(f) && f !== 0 ? f : 0);
        expect(String(x).length).toBeLessThanOrEqual(Math.max(1, String(Math.fround(v)).length));
      }),
    );
  });
  it("maps non-finite values to 0 and reorders by index", () => {
    expect(f32Array([Number.NaN, Number.POSITIVE_INFINITY, 1.5, 1e39])).toEqual([0, 0, 1.5, 0]);
    expect(f32Array([10, 20, 30], Int8Array.from([2, 0, 0]))).toEqual([30, 10, 10]);
  });
});

const bodies = fc.constantFrom("nao" as const, "p7" as const, "tny360" as const);
const arrayOf = (n: fc.Arbitrary<number>) => fc.oneof(fc.array(n, { maxLength: 30 }), fc.constant(null), fc.string(), fc.array(fc.oneof(n, fc.constant(null), fc.string()), { maxLength: 30 }));
const num = fc.oneof(fc.double(), fc.integer({ min: -3, max: 5 }));

describe("SDK state reading", () => {
  it("never throws on arbitrary messages; what it accepts fits the body and is frozen", () => {
    fc.assert(
      fc.property(
        bodies,
        fc.record({
          seq: fc.oneof(fc.nat(), fc.double()),
          timestamp_ms: fc.double(),
          epoch_ms: fc.double(),
          joint_positions: arrayOf(num),
          joint_velocities: arrayOf(num),
          joint_efforts: arrayOf(num),
          joint_currents: arrayOf(num),
          joint_temperatures: arrayOf(num),
          motor_temperatures: arrayOf(num),
          joint_status: arrayOf(num),
          error_ids: arrayOf(num),
          imu: fc.oneof(fc.constant(null), fc.record({ angular_velocity: arrayOf(num), linear_acceleration: arrayOf(num) })),
        }),
        (body, fields) => {
          const m = { type: "state", body, link: "ok", ...fields } as unknown as StateMessage;
          const n = BODY_SHAPES[body].joints;
          const names = Array.from({ length: n }, (_, i) => `j${i}`);
          const { joints, motors, imu } = buildModels(m, names);
          for (const arr of [joints?.angles, joints?.velocities, joints?.efforts, motors?.temperatures, motors?.errorIds]) {
            if (!arr) continue;
            expect(arr).toHaveLength(n);
            expect(arr.every(Number.isFinite)).toBe(true);
            expect(Object.isFrozen(arr)).toBe(true);
          }
          if (motors) expect(motors.errorIds.every((v) => Number.isSafeInteger(v) && v >= 0)).toBe(true);
          if (imu) {
            expect(imu.angularVelocity).toHaveLength(3);
            expect(imu.linearAcceleration.every(Number.isFinite)).toBe(true);
          }
          if (body === "tny360") expect(motors).toBeNull();
        },
      ),
      { numRuns: 300 },
    );
  });

  it("accepts exactly the well-formed message, and a single wrong element makes only its model null", () => {
    fc.assert(
      fc.property(bodies, fc.nat(40), (body, k) => {
        const n = BODY_SHAPES[body].joints;
        const arr = () => Array.from({ length: n }, (_, i) => i * 0.1);
        const m: Record<string, unknown> = {
          type: "state",
          body,
          seq: 7,
          timestamp_ms: 1,
          epoch_ms: 2,
          link: "ok",
          joint_positions: arr(),
          joint_velocities: arr(),
          joint_efforts: arr(),
          joint_currents: arr(),
          joint_temperatures: arr(),
          motor_temperatures: arr(),
          joint_status: Array.from({ length: n }, () => 0),
          error_ids: Array.from({ length: n }, () => 0),
          imu: { angular_velocity: [0, 0, 0], linear_acceleration: [0, 0, -9.8] },
        };
        const names = Array.from({ length: n }, (_, i) => `j${i}`);
        const ok = buildModels(m as unknown as StateMessage, names);
        expect(ok.joints).not.toBeNull();
        expect(ok.imu).not.toBeNull();
        expect(ok.motors === null).toBe(!BODY_SHAPES[body].motors);
        const key = body === "nao" ? "joint_currents" : "joint_efforts";
        const bad = [...(m[key] as number[])];
        bad[k % n] = Number.NaN;
        const broken = buildModels({ ...m, [key]: bad } as unknown as StateMessage, names);
        expect(broken.joints).toBeNull();
        expect(broken.imu).not.toBeNull();
        expect(buildModels(deepFreeze({ ...m, joint_positions: arr().slice(1) }) as unknown as StateMessage, names).joints).toBeNull();
      }),
    );
  });
});
