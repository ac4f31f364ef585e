/**
 * The TNY-360 state crossing threads (layout: src/bodies/tny360/layout.ts), published by the
 * TNY-360 core after every cycle (or completed poll of a real robot), mirrored by its host.
 */
import { linkStatusText } from "../bodies/link.js";
import { keptLookup, linkCodeOf } from "./codes.js";
import { SMOOTH_PHASES, TNY360_FLAG as F, TNY360_SCALAR as K, TNY360_STATE_LAYOUT } from "../bodies/tny360/layout.js";
import type { Tny360State } from "../bodies/tny360/state.js";
import { layoutBytes } from "./layout.js";
import { type StateBinding, StateChannel } from "./state-channel.js";

export interface Tny360Mirror {
  readonly state: Tny360State;
}

export const TNY360_STATE_BYTES = layoutBytes(TNY360_STATE_LAYOUT);

const SMOOTH_CODE = { idle: 0, enabling: 1, disabling: 2 } as const;
/** SMOOTH_CODE[phase], per cycle (see keptLookup). */
const smoothCodeOf = keptLookup(SMOOTH_CODE);

export const TNY360_BINDING: StateBinding<Tny360Mirror, typeof TNY360_STATE_LAYOUT> = {
  layout: TNY360_STATE_LAYOUT,
  arrays: ({ state: s }) => ({
    positionRad: s.joints.positionRad,
    targetRad: s.joints.targetRad,
    velocityRadS: s.joints.velocityRadS,
    effortNm: s.joints.effortNm,
    temperatureC: s.joints.temperatureC,
    enabled: s.joints.enabled,
    orientationRad: s.imu.orientationRad,
    angularVelocityRadS: s.imu.angularVelocityRadS,
    linearAccelerationMS2: s.imu.linearAccelerationMS2,
    down: s.imu.down,
    grounded: s.paws.grounded,
    targetVelocity: s.body.targetVelocity,
    posturePositionM: s.body.posturePositionM,
    postureRotationRad: s.body.postureRotationRad,
    simWorld: s.simWorld,
    simContacts: s.simContacts,
  }),
  write(v, m) {
    const s = m.state;
    const c = v.scalars;
    c[K.seq] = s.seq;
    c[K.timestampMs] = s.timestampMs;
    c[K.epochMs] = s.epochMs;
    c[K.heightM] = s.body.heightM;
    c[K.xM] = s.odometry.xM;
    c[K.yM] = s.odometry.yM;
    c[K.yawRad] = s.odometry.yawRad;
    c[K.vxMS] = s.odometry.vxMS;
    c[K.vyMS] = s.odometry.vyMS;
    c[K.yawRateRadS] = s.odometry.yawRateRadS;
    c[K.voltageV] = s.power.voltageV;
    c[K.currentA] = s.power.currentA;
    c[K.powerW] = s.power.powerW;
    c[K.chipTemperatureC] = s.system.chipTemperatureC;
    c[K.errorCount] = s.errors.count;
    c[K.lastEventId] = s.errors.lastEventId;
    c[K.lastErrorId] = s.errors.lastErrorId;
    c[K.gait] = s.body.gait;
    c[K.enabledMask] = s.body.enabledMask;
    const f = v.flags;
    f[F.valid] = s.valid ? 1 : 0;
    f[F.link] = linkCodeOf(s.link);
    f[F.smooth] = smoothCodeOf(s.body.smooth);
    f[F.controlLoop] = s.system.controlLoopEnabled ? 1 : 0;
    f[F.decisionLoop] = s.system.decisionLoopEnabled ? 1 : 0;
  },
  read(v, m) {
    const s = m.state;
    const c = v.scalars;
    s.seq = c[K.seq]!;
    s.timestampMs = c[K.timestampMs]!;
    s.epochMs = c[K.epochMs]!;
    s.body.heightM = c[K.heightM]!;
    s.odometry.xM = c[K.xM]!;
    s.odometry.yM = c[K.yM]!;
    s.odometry.yawRad = c[K.yawRad]!;
    s.odometry.vxMS = c[K.vxMS]!;
    s.odometry.vyMS = c[K.vyMS]!;
    s.odometry.yawRateRadS = c[K.yawRateRadS]!;
    s.power.voltageV = c[K.voltageV]!;
    s.power.currentA = c[K.currentA]!;
    s.power.powerW = c[K.powerW]!;
    s.system.chipTemperatureC = c[K.chipTemperatureC]!;
    s.errors.count = c[K.errorCount]!;
    s.errors.lastEventId = c[K.lastEventId]!;
    s.errors.lastErrorId = c[K.lastErrorId]!;
    s.body.gait = c[K.gait]!;
    s.body.enabledMask = c[K.enabledMask]!;
    const f = v.flags;
    s.valid = f[F.valid] === 1;
    s.link = linkStatusText(f[F.link]!);
    s.body.smooth = SMOOTH_PHASES[f[F.smooth]!] ?? "idle";
    s.system.controlLoopEnabled = f[F.controlLoop] === 1;
    s.system.decisionLoopEnabled = f[F.decisionLoop] === 1;
  },
};

export function tny360StateChannel(buffer: SharedArrayBuffer, start: number, words: Int32Array, index: number): StateChannel<Tny360Mirror, typeof TNY360_STATE_LAYOUT> {
  return new StateChannel(TNY360_BINDING, buffer, start, words, index);
}
