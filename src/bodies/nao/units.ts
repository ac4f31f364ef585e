/**
 * Raw counts ↔ SI units for the NAO v6: the only file that knows the scales (docs/protocol/chestboard.md;
 * the encodings marked inferred are defined in docs/protocol/chestboard.md). Each conversion has
 * its inverse here too, used by the simulator to quantize, so decoding a simulated answer returns
 * the simulated physical value to within one count.
 */

const TWO_PI = 2 * Math.PI;

/** Accelerometer: ±9.81 m/s² per 16,384 counts. */
export const ACCEL_MPS2_PER_COUNT = 9.81 / 16384;
/** Gyroscope: 500 °/s per 32,768 counts, delivered in rad/s. */
export const GYRO_RADS_PER_COUNT = ((500 / 32768) * Math.PI) / 180;
/** Inertial unit's angle estimate (inferred): 0.0001 rad per count. */
export const ANGLE_RAD_PER_COUNT = 1e-4;
/** Sonar first echo: 0.01 m per count. */
export const SONAR_M_PER_COUNT = 0.01;
/** Joint current: 0.016 A per count. */
export const CURRENT_A_PER_COUNT = 0.016;
/** Joint temperature: steps of 2 °C. */
export const TEMPERATURE_C_PER_COUNT = 2;
/** Joint encoders (inferred): 16,384 counts per turn. */
export const ENCODER_COUNTS_PER_TURN = 16384;
/** Hand opening (inferred): 8,192 counts from closed (0) to open (1). */
export const HAND_COUNTS_FULL_OPEN = 8192;
/** Battery charge (inferred): per mille. */
export const BATTERY_CHARGE_PER_COUNT = 0.001;
/** Battery current (inferred): 1 mA per count, signed, negative while discharging. */
export const BATTERY_CURRENT_A_PER_COUNT = 0.001;
/** Battery temperature register (inferred): 0.1 °C per count. */
export const BATTERY_TEMPERATURE_C_PER_COUNT = 0.1;
/** INA230 bus voltage: 1.25 mV per count. */
export const HEAD_VOLTAGE_V_PER_COUNT = 0.00125;
/** INA230 current (inferred calibration): 1 mA per count. */
export const HEAD_CURRENT_A_PER_COUNT = 0.001;
/** INA230 power: 25 × the current LSB per count. */
export const HEAD_POWER_W_PER_COUNT = 0.025;
/** TMP100 12-bit reading, left-justified in 16 bits: 1/256 °C per count of the 16-bit value. */
export const TMP100_C_PER_COUNT = 1 / 256;
/** Stiffness on the wire: 0..255. */
export const STIFFNESS_COUNTS = 255;

export const accelFromCounts = (c: number): number => c * ACCEL_MPS2_PER_COUNT;
export const gyroFromCounts = (c: number): number => c * GYRO_RADS_PER_COUNT;
export const sonarFromCounts = (c: number): number => c * SONAR_M_PER_COUNT;
export const currentFromCounts = (c: number): number => c * CURRENT_A_PER_COUNT;
export const temperatureFromCounts = (c: number): number => c * TEMPERATURE_C_PER_COUNT;

/** Angle with the preference offset applied: raw estimate minus the stored offset (rad). */
export const angleFromCounts = (c: number, offsetRad: number): number => c * ANGLE_RAD_PER_COUNT - offsetRad;

/** Joint angle: (raw − zero) wrapped into [−π, π), in rad. */
export function jointAngleFromCounts(raw: number, zeroCounts: number): number {
  let d = (raw - zeroCounts) % ENCODER_COUNTS_PER_TURN;
  if (d >= ENCODER_COUNTS_PER_TURN / 2) d -= ENCODER_COUNTS_PER_TURN;
  else if (d < -ENCODER_COUNTS_PER_TURN / 2) d += ENCODER_COUNTS_PER_TURN;
  return (d * TWO_PI) / ENCODER_COUNTS_PER_TURN;
}
/** Inverse: raw u16 encoder counts for an angle. */
export function jointAngleToCounts(rad: number, zeroCounts: number): number {
  const c = Math.round(zeroCounts + (rad * ENCODER_COUNTS_PER_TURN) / TWO_PI);
  return ((c % 65536) + 65536) % 65536;
}
export const handFromCounts = (raw: number, zeroCounts: number): number => (raw - zeroCounts) / HAND_COUNTS_FULL_OPEN;
export const handToCounts = (opening: number, zeroCounts: number): number => Math.max(0, Math.min(65535, Math.round(zeroCounts + opening * HAND_COUNTS_FULL_OPEN)));

/** FSR: kg = counts × gain + offset (gain kg/count and offset kg from the preferences). */
export const fsrFromCounts = (c: number, gainKgPerCount: number, offsetKg: number): number => c * gainKgPerCount + offsetKg;
export const fsrToCounts = (kg: number, gainKgPerCount: number, offsetKg: number): number => Math.max(0, Math.min(65535, Math.round((kg - offsetKg) / gainKgPerCount)));

export const stiffnessToCounts = (s: number): number => Math.round(Math.min(1, Math.max(0, s)) * STIFFNESS_COUNTS);
export const stiffnessFromCounts = (c: number): number => c / STIFFNESS_COUNTS;

/** Battery charge 0..1, or NaN when out of range (the seed: values outside are dropped). */
export function batteryChargeFromCounts(c: number): number {
  const v = c * BATTERY_CHARGE_PER_COUNT;
  return v >= 0 && v <= 1 ? v : Number.NaN;
}
export const batteryCurrentFromCounts = (c: number): number => c * BATTERY_CURRENT_A_PER_COUNT;
export const batteryTemperatureCFromCounts = (c: number): number => c * BATTERY_TEMPERATURE_C_PER_COUNT;
/**
 * LoLA's battery temperature: the 0.1 factor applied twice, the first in integer arithmetic
 * (inferred from the seed's example: 28.5 °C, register 285, reads 2.8, not 2.85).
 */
export const batteryTemperatureLolaFromCounts = (c: number): number => Math.trunc(c / 10) * 0.1;
/** REST reports whole degrees Celsius: LoLA's scale × 10, rounded. */
export const batteryTemperatureWholeCFromLola = (lola: number): number => Math.round(lola * 10);

export const headVoltageFromCounts = (c: number): number => c * HEAD_VOLTAGE_V_PER_COUNT;
export const headCurrentFromCounts = (c: number): number => c * HEAD_CURRENT_A_PER_COUNT;
export const headPowerFromCounts = (c: number): number => c * HEAD_POWER_W_PER_COUNT;
export const tmp100FromCounts = (c: number): number => c * TMP100_C_PER_COUNT;

/** Round-to-nearest inverse for the linear scales (simulator quantization), clamped to the field's range. */
export function toCounts(value: number, perCount: number, min: number, max: number): number {
  return Math.max(min, Math.min(max, Math.round(value / perCount)));
}
export const I16 = { min: -32768, max: 32767 } as const;
export const U16 = { min: 0, max: 65535 } as const;
export const U8 = { min: 0, max: 255 } as const;
