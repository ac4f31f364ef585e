/** Valid arguments for every served TNY-360 action, and the every-action round trip the server tests (in-thread and threaded) share. */
import { expect } from "vitest";
import { REST_POSE_RAD } from "../../src/bodies/tny360/poses.js";
import type { TnyClient } from "../../src/client/tny/index.js";
import { MODULES, type ModuleSpec, Status } from "../../src/wire/tny/constants.js";

export const SAMPLE_ARGS: Record<string, unknown[]> = {
  "system.setAutolifeLevel": [0x0f],
  "system.getLogLine": [0],
  "system.setControlLoopEnabled": [true],
  "system.setDecisionLoopEnabled": [true],
  "gait.setType": [2],
  "body.setEnabled": [0x3fff],
  "body.setVelocity": [0.1, 0, 0.2, true],
  "body.setPosture": [0.01, 0, 0.11, 0.05, 0, 0, false],
  "leg.setEnabled": [1, 7],
  "leg.getEnabled": [1],
  "leg.setPosition": [0, 0.09, 0.1, 0.01, false],
  "leg.getTargetPosition": [0],
  "leg.getGrounded": [3],
  "joint.setEnabled": [12, true],
  "joint.getEnabled": [12],
  "joint.setAngle": [13, 1.0],
  "joint.getTargetAngle": [0],
  "joint.getFeedbackAngle": [1],
  "joint.getModelAngle": [2],
  "joint.getEstimatedAngle": [3],
  "joint.setJointAngles": [[...REST_POSE_RAD, 1.5, 1.5]],
  "motor.getDutyCycle": [1],
  "motor.getCalibrationState": [4],
  "motor.getCalibrationData": [12],
  "i2c.pingDevice": [0x40],
  "error.getErrorEventByIndex": [0],
  "error.getErrorEventById": [0], // replaced with a real id below
};

/**
 * Every action of the table through `client`: each served one answers Ok with decodable values of
 * its return types (or the status `expected` gives it), the rest their documented status.
 * Destructive ones last. Returns the served actions' keys (58 of the table's 84).
 */
export async function expectEveryAction(client: TnyClient, expected: Readonly<Record<string, number>> = {}): Promise<string[]> {
  const served: string[] = [];
  const last = ["system.reboot", "error.clearErrorEvents"]; // destructive: at the end
  const all = (MODULES as readonly ModuleSpec[]).flatMap((m) => m.actions.map((a) => ({ m, a, key: `${m.name}.${a.name}` })));
  all.sort((x, y) => Number(last.includes(x.key)) - Number(last.includes(y.key)));
  for (const { m, a, key } of all) {
    if (!a.sim.served) {
      const args = a.args.map((f) =>
        f.type === "string"
          ? ""
          : f.type === "bytes8" || f.type === "bytesRest"
            ? new Uint8Array(0)
            : f.type === "calibrationDataPacked"
              ? { dcMinMs: 0.5, dcMaxMs: 2.5, dcDeadband: 0, feedbackMinV: 0.5, feedbackMaxV: 2.8, feedbackNoiseV: 0, feedbackLatencyMs: 0, feedbackInverted: false, maxSpeed: 1 }
              : 0,
      );
      const r = await client.request(m, a, args);
      expect(r.status, key).toBe(a.sim.status);
      continue;
    }
    served.push(key);
    const args = SAMPLE_ARGS[key] ?? [];
    expect(args.length, `${key} needs sample args`).toBeGreaterThanOrEqual(a.args.filter((f) => !f.optional).length);
    const r = await client.request(m, a, args);
    if (expected[key] !== undefined) {
      expect(r.status, key).toBe(expected[key]);
      continue;
    }
    expect(r.status, key).toBe(Status.Ok);
    expect(r.values.length, key).toBe(a.returns.length);
    a.returns.forEach((f, i) => {
      const v = r.values[i];
      if (f.type === "f32") expect(typeof v, key).toBe("number");
      if (f.type === "bool") expect(typeof v, key).toBe("boolean");
      if (f.type === "vec3f") expect(Number.isFinite((v as { x: number }).x), key).toBe(true);
      if (f.type === "f32x14") expect((v as Float32Array).length, key).toBe(14);
    });
  }
  expect(served.length).toBe(all.filter((x) => x.a.sim.served).length);
  expect(served.length).toBe(58); // 58 of the table's 84 actions
  return served;
}
