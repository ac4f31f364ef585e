/**
 * TNY-360 raw ↔ SI conversions, the one place that knows servo pulse widths and ADC voltages
 * (tny360.md §7 CalibrationData, §8 angle → servo mapping, paw contacts). Pure, allocation-free.
 *
 * Angle → servo: ratio = (angle − min)/(max − min), 1 − ratio when the joint is inverted, then
 * scaled to the calibrated duty-cycle range. Feedback goes the same way into the calibrated
 * feedback-voltage range.
 */
import type { MotorCalibration } from "../../wire/tny/types.js";
import { JOINTS, MAX_JOINT_VELOCITY_RAD_S } from "./joints.js";

export const DEG_PER_RAD = 180 / Math.PI;
export const RAD_PER_DEG = Math.PI / 180;
export const degToRad = (deg: number): number => deg * RAD_PER_DEG;
export const radToDeg = (rad: number): number => rad * DEG_PER_RAD;

/** `LEG_GROUNDED_THRESHOLD_V`: a paw is grounded when its contact voltage is below this. */
export const LEG_GROUNDED_THRESHOLD_V = 2.0;
/** Simulated paw contact voltages (inferred: a switch pulling the channel low when pressed). */
export const PAW_PRESSED_V = 0.2;
export const PAW_RELEASED_V = 3.1;

/** Default MG996R calibration (`MOTOR_ATTR_MG996R`): 0.5–2.5 ms, feedback 0.5–2.8 V. */
export function defaultCalibration(jointId: number): MotorCalibration {
  const joint = JOINTS[jointId]!;
  const ear = joint.adcChannel === null;
  const range = joint.maxRad - joint.minRad;
  return {
    dcMinMs: ear ? 1.0 : 0.5, // SG90 ears: 1.0–2.0 ms
    dcMaxMs: ear ? 2.0 : 2.5,
    dcDeadband: 0,
    feedbackMinV: ear ? 0 : 0.5, // ears have no feedback
    feedbackMaxV: ear ? 0 : 2.8,
    feedbackNoiseV: 0,
    feedbackLatencyMs: 0,
    feedbackInverted: false,
    maxSpeed: MAX_JOINT_VELOCITY_RAD_S / range, // range per second
  };
}

/** Servo ratio 0..1 of an angle (after inversion). */
export function angleToRatio(jointId: number, rad: number): number {
  const j = JOINTS[jointId]!;
  const r = (rad - j.minRad) / (j.maxRad - j.minRad);
  return j.inverted ? 1 - r : r;
}

/** PWM pulse width, ms, for an angle under a calibration. */
export function angleToDutyMs(jointId: number, rad: number, cal: MotorCalibration): number {
  return cal.dcMinMs + angleToRatio(jointId, rad) * (cal.dcMaxMs - cal.dcMinMs);
}

/** Feedback voltage for an angle under a calibration (0 V for joints without feedback). */
export function angleToFeedbackV(jointId: number, rad: number, cal: MotorCalibration): number {
  if (JOINTS[jointId]!.adcChannel === null) return 0;
  const r = angleToRatio(jointId, rad);
  return cal.feedbackMinV + (cal.feedbackInverted ? 1 - r : r) * (cal.feedbackMaxV - cal.feedbackMinV);
}

/** Angle back from a feedback voltage (inverse of `angleToFeedbackV`). */
export function feedbackVToAngle(jointId: number, volts: number, cal: MotorCalibration): number {
  const j = JOINTS[jointId]!;
  let r = (volts - cal.feedbackMinV) / (cal.feedbackMaxV - cal.feedbackMinV);
  if (cal.feedbackInverted) r = 1 - r;
  if (j.inverted) r = 1 - r;
  return j.minRad + r * (j.maxRad - j.minRad);
}
