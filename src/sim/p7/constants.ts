/**
 * The P7 simulator's own codes and default parameters, in one table.
 *
 * The real P7's motor error codes are bit fields whose table is not public (field logs show
 * 1<<19 latched on joint 7). The simulator raises exactly one code by itself, below; tests inject
 * any other raw integer through `P7Sim.injectError`. Do not read these as vendor codes.
 */

/** Simulation step, ms: the arm's state rate is 250 Hz. */
export const P7_SIM_STEP_MS = 4;
/** At most this many steps are simulated per `advance()` call; beyond that the sim drops time rather than burst. */
export const P7_SIM_MAX_CATCHUP_STEPS = 25;

/** Simulator-only error bits (raw integers in `errorIds`). */
export const P7_SIM_ERROR = Object.freeze({
  /** Motor above `overTemperatureC`: set by the simulator, latched until cleared. */
  overTemperature: 0x10,
} as const);

export interface P7SimParams {
  /** Ambient temperature, °C. Defaults to 25. */
  ambientC: number;
  /** Steady-state rise of a powered motor at zero load, °C. Defaults to 5. */
  idleRiseC: number;
  /** Extra steady-state rise at the effort limit held continuously, °C; scales with (effort/limit)². Defaults to 60. */
  riseAtLimitC: number;
  /** Time constant of the first-order thermal model, s. Defaults to 300. */
  thermalTimeConstantS: number;
  /** Above this a motor latches `P7_SIM_ERROR.overTemperature` and its joint stops, °C. Defaults to 80. */
  overTemperatureC: number;
  /** Standard deviation of the effort reading's noise, N·m. Defaults to 0.02. */
  effortNoiseNm: number;
  /** Standard deviation of the gyroscope's noise, rad/s. Defaults to 0.002. */
  gyroNoiseRadS: number;
  /** Standard deviation of the accelerometer's noise, m/s². Defaults to 0.02. */
  accelNoiseMS2: number;
}

export const DEFAULT_P7_SIM_PARAMS: Readonly<P7SimParams> = Object.freeze({
  ambientC: 25,
  idleRiseC: 5,
  riseAtLimitC: 60,
  thermalTimeConstantS: 300,
  overTemperatureC: 80,
  effortNoiseNm: 0.02,
  gyroNoiseRadS: 0.002,
  accelNoiseMS2: 0.02,
});
