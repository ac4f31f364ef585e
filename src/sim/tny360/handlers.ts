/**
 * The simulated TNY-360's module handlers: one per action the table marks served
 * (src/wire/tny/constants.ts), answering like the firmware's handlers with the differences
 * tny360.md §12 asks for: ids and ranges are checked, refused targets keep the old ones.
 * A handler returns its reply values, or a status code to refuse.
 */
import { CREEP_MIN_DUTY, DUTY_FACTOR } from "../../bodies/tny360/gait.js";
import { bodyIK, IkStatus } from "../../bodies/tny360/kinematics.js";
import { PAW_ADC_CHANNELS, withinLimits } from "../../bodies/tny360/joints.js";
import { postureWithinLimits, velocityWithinLimits } from "../../bodies/tny360/limits.js";
import { angleToDutyMs } from "../../bodies/tny360/units.js";
import { GaitType, JOINT_COUNT, LogLevel, MotorCalibrationState, Status, type StatusCode } from "../../wire/tny/constants.js";
import type { ActionKey, KeyDecodedArgs, KeyReturnTuple } from "../../wire/tny/types.js";
import type { Controller } from "./controller.js";
import { CALIBRATION, type Firmware } from "./firmware.js";
import type { Tny360BodyModel } from "./model.js";

/** The empty reply of every setter, one shared tuple (a command answered Ok allocates nothing). */
export const DONE = Object.freeze([]) as unknown as [];

type Handler<K extends ActionKey> = (args: KeyDecodedArgs<K>) => KeyReturnTuple<K> | StatusCode;
export type Handlers = { [K in ActionKey]?: Handler<K> };

/** The handler table over one simulator's firmware state, controller and physics. */
export function buildHandlers(fw: Firmware, ctl: Controller, physics: Tny360BodyModel): Handlers {
  const leg3 = (leg: number, flags: number): void => {
    for (let k = 0; k < 3; k++) fw.enable(leg * 3 + k, (flags & (1 << k)) !== 0);
  };
  const anyOverrideWrite = (why: string): void => ctl.cancelSmooth(why);
  const handlers: Handlers = {
    // system
    "system.ping": () => DONE,
    "system.reboot": () => {
      fw.rebootPending = true; // reply first, then restart (next tick)
      return DONE;
    },
    "system.setAutolifeLevel": ([level]) => {
      fw.autolife = level;
      return DONE;
    },
    "system.getAutolifeLevel": () => [fw.autolife],
    "system.getStatistics": () => {
      const core1 = fw.controlLoop ? (fw.planner.active ? 38 : 31) : 4;
      return [fw.chipTemperatureC(), 9.5, core1, 327_680, 181_248 + 96 * fw.log.count, 8_388_608, 1_310_720];
    },
    "system.getNbLogLines": () => [fw.log.count],
    "system.getLogLine": ([index]) => {
      const line = fw.log.at(index);
      if (!line) return Status.InvalidParameters;
      return [line.timestampMs, line.level, line.indent, line.tag, line.message];
    },
    "system.setControlLoopEnabled": ([on]) => {
      if (fw.controlLoop !== on) fw.logLine(LogLevel.Info, "system", `control loop ${on ? "started" : "stopped"}`);
      fw.controlLoop = on;
      if (!on) ctl.cancelSmooth("control loop stopped");
      return DONE;
    },
    "system.getControlLoopEnabled": () => [fw.controlLoop],
    "system.setDecisionLoopEnabled": ([on]) => {
      if (fw.decisionLoop !== on) fw.logLine(LogLevel.Info, "system", `decision loop ${on ? "started" : "stopped"}`);
      fw.decisionLoop = on;
      return DONE;
    },
    "system.getDecisionLoopEnabled": () => [fw.decisionLoop],
    // gait
    "gait.setType": ([gait]) => {
      fw.gait = gait;
      if (gait === GaitType.Creep && DUTY_FACTOR < CREEP_MIN_DUTY) fw.logLine(LogLevel.Warning, "gait", `Creep with duty factor ${DUTY_FACTOR} < ${CREEP_MIN_DUTY}`);
      return DONE;
    },
    "gait.getType": () => [fw.gait],
    // body
    "body.setEnabled": ([mask]) => {
      anyOverrideWrite("enable bits changed");
      for (let j = 0; j < JOINT_COUNT; j++) fw.enable(j, (mask & (1 << j)) !== 0);
      return DONE;
    },
    "body.getEnabled": () => [fw.enabledMask()],
    "body.setVelocity": ([x, y, z, clear]) => {
      if (!velocityWithinLimits(x, y, z)) return Status.InvalidParameters;
      fw.keeper.command(x, y, z, fw.now());
      if (clear) {
        anyOverrideWrite("setVelocity cleared the joint overrides");
        fw.clearJointOverrides();
      }
      return DONE;
    },
    "body.getTargetVelocity": () => [{ x: fw.keeper.current[0]!, y: fw.keeper.current[1]!, z: fw.keeper.current[2]! }],
    "body.setPosture": ([x, y, z, rx, ry, rz, clear]) => {
      if (!postureWithinLimits(x, y, z, rx, ry, rz)) return Status.InvalidParameters;
      fw.posture.set([x, y, z, rx, ry, rz]);
      if (clear) {
        anyOverrideWrite("setPosture cleared the joint overrides");
        fw.clearJointOverrides();
      }
      return DONE;
    },
    "body.getPosture": () => {
      const p = fw.posture;
      return [
        { x: p[0]!, y: p[1]!, z: p[2]! },
        { x: p[3]!, y: p[4]!, z: p[5]! },
      ];
    },
    "body.enableSmooth": () => [ctl.enableSmooth()],
    "body.disableSmooth": () => [ctl.disableSmooth()],
    // leg
    "leg.setEnabled": ([leg, flags]) => {
      anyOverrideWrite("leg enable bits changed");
      leg3(leg, flags);
      return DONE;
    },
    "leg.getEnabled": ([leg]) => [(fw.enabled[leg * 3]! ? 1 : 0) | (fw.enabled[leg * 3 + 1]! ? 2 : 0) | (fw.enabled[leg * 3 + 2]! ? 4 : 0)],
    "leg.setPosition": ([leg, x, y, z, clear]) => {
      // refuse a foot the leg cannot reach under the current posture (the firmware would log an
      // error every tick and keep the old joint targets)
      const feet = fw.feet;
      feet.set(fw.planner.feet);
      feet[leg * 3] = x;
      feet[leg * 3 + 1] = y;
      feet[leg * 3 + 2] = z;
      bodyIK(fw.posture, feet, fw.ik, fw.ikStatus);
      if (fw.ikStatus[leg] !== IkStatus.Ok) return Status.InvalidParameters;
      fw.legOverride[leg * 3] = x;
      fw.legOverride[leg * 3 + 1] = y;
      fw.legOverride[leg * 3 + 2] = z;
      fw.legOverrideOn[leg] = 1;
      if (clear) {
        anyOverrideWrite("leg override set");
        for (let k = 0; k < 3; k++) fw.override[leg * 3 + k] = Number.NaN;
      }
      return DONE;
    },
    "leg.getTargetPosition": ([leg]) => [{ x: fw.legOverride[leg * 3]!, y: fw.legOverride[leg * 3 + 1]!, z: fw.legOverride[leg * 3 + 2]! }],
    "leg.getGrounded": ([leg]) => [physics.adc[PAW_ADC_CHANNELS[leg]!]! < 2.0],
    // joint
    "joint.setEnabled": ([id, on]) => {
      anyOverrideWrite("joint enable changed");
      fw.enable(id, on);
      return DONE;
    },
    "joint.getEnabled": ([id]) => [fw.enabled[id] === 1],
    "joint.setAngle": ([id, rad]) => {
      if (!withinLimits(id, rad)) return Status.InvalidParameters; // the old target is kept
      anyOverrideWrite("joint override set");
      fw.override[id] = rad;
      return DONE;
    },
    "joint.getTargetAngle": ([id]) => [fw.target[id]!],
    "joint.getFeedbackAngle": ([id]) => [fw.feedback[id]!],
    "joint.getModelAngle": ([id]) => [fw.model[id]!],
    "joint.getEstimatedAngle": ([id]) => [fw.estimated[id]!],
    "joint.setJointAngles": ([angles]) => {
      for (let i = 0; i < JOINT_COUNT; i++) if (!withinLimits(i, angles[i]!)) return Status.InvalidParameters; // all or nothing
      anyOverrideWrite("joint overrides set");
      for (let i = 0; i < JOINT_COUNT; i++) fw.override[i] = angles[i]!;
      return DONE;
    },
    "joint.getJointAngles": () => [Float32Array.from(fw.feedback)],
    // motor (read-only views of the ideal servos)
    "motor.getDutyCycle": ([id]) => [fw.enabled[id] ? angleToDutyMs(id, fw.model[id]!, CALIBRATION[id]!) : 0],
    "motor.getCalibrationState": () => [MotorCalibrationState.Calibrated],
    "motor.getCalibrationData": ([id]) => [CALIBRATION[id]!],
    // imu
    "imu.getAcceleration": () => [vec(fw.state.imu.linearAccelerationMS2)],
    "imu.getAngularVelocity": () => [vec(fw.state.imu.angularVelocityRadS)],
    "imu.getDownVector": () => [vec(fw.state.imu.down)],
    "imu.getOrientation": () => [vec(fw.state.imu.orientationRad)],
    // power
    "power.getVoltage": () => [fw.state.power.voltageV],
    "power.getCurrent": () => [fw.state.power.currentA],
    "power.getPower": () => [fw.state.power.powerW],
    // i2c: nothing is attached to the simulated extension bus
    "i2c.pingDevice": () => [false],
    // adc
    "adc.getAllChannels": () => [Float32Array.from(physics.adc)],
    // error
    "error.getErrorCount": () => [fw.errors.count],
    "error.getErrorEventByIndex": ([index]) => {
      const ev = fw.errors.at(index);
      return ev ? [ev] : Status.InvalidParameters;
    },
    "error.getErrorEventById": ([id]) => {
      const ev = fw.errors.byId(id);
      return ev ? [ev] : Status.NotFound;
    },
    "error.clearErrorEvents": () => {
      fw.errors.clear();
      return DONE;
    },
    // diagnostic
    "diagnostic.isEnabled": () => [false],
    "diagnostic.checkIMU": () => [0],
    "diagnostic.checkPower": () => [0],
    "diagnostic.checkMotorDriver": () => [0],
    "diagnostic.checkAnalogReader": () => [0],
    "diagnostic.checkControlLoop": () => [fw.controlLoop ? 0 : 1],
    "diagnostic.checkDecisionLoop": () => [fw.decisionLoop ? 0 : 1],
  };
  return handlers;
}

function vec(a: Float32Array): { x: number; y: number; z: number } {
  return { x: a[0]!, y: a[1]!, z: a[2]! };
}
