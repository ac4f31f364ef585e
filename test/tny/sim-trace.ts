/**
 * A seeded, scripted run of the TNY-360 simulator that exercises every part of its tick (smooth
 * enable and disable, walking with two gaits and a jittery step, a tilted posture, velocity decay,
 * leg and joint overrides), sampled at checkpoints. `sim-trace.test.ts` compares it with values
 * recorded from the simulator before its tick was made allocation-free, so any change of
 * behaviour shows.
 */
import { SimTny360 } from "../../src/sim/tny360/quadruped.js";
import { actionSpec, JOINT_COUNT } from "../../src/wire/tny/constants.js";

export interface TraceCheckpoint {
  readonly name: string;
  /** Full-precision (float64) values: odometry, model / estimated / feedback angles, height, power. */
  readonly f64: number[];
  /** Values the state keeps as float32 (joints, IMU). */
  readonly f32: number[];
  /** Exact values: seq, timestamp, masks, paws, counts, smooth phase. */
  readonly exact: Array<number | string | boolean>;
}

function call(sim: SimTny360, module: string, action: string, args: unknown[]): readonly unknown[] {
  const s = actionSpec(module, action);
  const r = sim.handleNow(s.module, s.action, args);
  if (r.status !== 0) throw new Error(`${module}.${action} answered status ${r.status}`);
  return r.values;
}

function sample(sim: SimTny360, name: string): TraceCheckpoint {
  const s = sim.state;
  const f64: number[] = [];
  const od = s.odometry;
  f64.push(od.xM, od.yM, od.yawRad, od.vxMS, od.vyMS, od.yawRateRadS);
  for (let j = 0; j < JOINT_COUNT; j++) {
    f64.push(call(sim, "joint", "getModelAngle", [j])[0] as number);
    f64.push(call(sim, "joint", "getEstimatedAngle", [j])[0] as number);
    f64.push(call(sim, "joint", "getFeedbackAngle", [j])[0] as number);
  }
  f64.push(s.body.heightM, s.power.voltageV, s.power.currentA, s.power.powerW, s.system.chipTemperatureC);
  const j = s.joints;
  const imu = s.imu;
  const f32 = [
    ...j.positionRad,
    ...j.targetRad,
    ...j.velocityRadS,
    ...j.effortNm,
    ...imu.orientationRad,
    ...imu.angularVelocityRadS,
    ...imu.linearAccelerationMS2,
    ...imu.down,
    ...s.body.targetVelocity,
    ...s.body.posturePositionM,
    ...s.body.postureRotationRad,
    ...(call(sim, "adc", "getAllChannels", [])[0] as Float32Array),
  ];
  const exact = [s.seq, s.timestampMs, s.body.enabledMask, s.body.smooth, s.body.gait, ...s.paws.grounded, s.errors.count, s.errors.lastErrorId, sim.log.count, sim.planner.active];
  return { name, f64, f32, exact };
}

/** Run the script; returns its checkpoints. */
export function runSimTrace(): TraceCheckpoint[] {
  let t = 0;
  const sim = new SimTny360({ seed: 11, nowMs: () => t });
  let k = 0;
  /** `n` ticks; with `jitter`, the step varies between about 4.6 and 5.4 ms (a real clock's loop). */
  const run = (n: number, jitter = false): void => {
    for (let i = 0; i < n; i++, k++) {
      t += jitter ? 5 + 0.4 * Math.sin(k * 0.7) : 5;
      sim.cycle(t);
    }
  };
  /** `n` ticks with the velocity renewed every 50 ticks (within the 500 ms keep-alive). */
  const walk = (n: number, x: number, y: number, z: number, jitter: boolean): void => {
    for (let done = 0; done < n; done += 50) {
      call(sim, "body", "setVelocity", [x, y, z, false]);
      run(Math.min(50, n - done), jitter);
    }
  };
  const out: TraceCheckpoint[] = [];
  sim.cycle(0);
  out.push(sample(sim, "boot"));
  call(sim, "body", "enableSmooth", []);
  run(150);
  out.push(sample(sim, "enabling"));
  run(250);
  out.push(sample(sim, "standing"));
  walk(300, 0.25, 0.05, 0.4, true);
  out.push(sample(sim, "walking (Walk, jittery step)"));
  call(sim, "body", "setPosture", [0.01, -0.01, 0.11, 0.05, -0.04, 0.1, false]);
  call(sim, "gait", "setType", [2]);
  walk(250, -0.15, 0.1, -0.5, false);
  out.push(sample(sim, "walking (Run, tilted posture)"));
  run(300, true);
  out.push(sample(sim, "velocity decayed, feet settled"));
  call(sim, "leg", "setPosition", [0, 0.1, 0.11, 0.02, true]);
  call(sim, "joint", "setAngle", [12, 0.5]);
  run(100);
  out.push(sample(sim, "leg and ear overrides"));
  call(sim, "body", "disableSmooth", []);
  run(120);
  out.push(sample(sim, "disabling"));
  run(600);
  out.push(sample(sim, "disabled"));
  return out;
}
