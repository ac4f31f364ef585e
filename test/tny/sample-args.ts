/** Valid arguments for every served TNY-360 action that takes any (server tests, in-thread and threaded). */
import { REST_POSE_RAD } from "../../src/bodies/tny360/poses.js";

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
