/**
 * The simulated TNY-360's command limits (inferred from the web portal's sliders, tny360.md §3.3):
 * a velocity or posture beyond them is InvalidParameters and the old target is kept. One table for
 * the simulator's handlers (src/sim/tny360/handlers.ts), which refuse them, and for a threaded
 * core's host (src/host/tny360-host.ts), which refuses them before posting a command to the core's
 * mailbox, so both answer the same. Joint limits: `withinLimits` (joints.ts). Pure.
 */
export const SIM_LIMITS = {
  linearMS: 1.0,
  yawRadS: 4.0,
  postureShiftM: 0.1,
  postureMinZM: 0.05,
  postureMaxZM: 0.2,
  postureRotationRad: Math.PI / 4,
} as const;

/** A body velocity (x, y m/s; yaw rad/s) inside the limits. NaN is never inside. */
export function velocityWithinLimits(xMS: number, yMS: number, yawRadS: number): boolean {
  const L = SIM_LIMITS;
  return Math.abs(xMS) <= L.linearMS && Math.abs(yMS) <= L.linearMS && Math.abs(yawRadS) <= L.yawRadS;
}

/** A body posture (position m, Euler XYZ rad) inside the limits. NaN is never inside. */
export function postureWithinLimits(xM: number, yM: number, zM: number, rxRad: number, ryRad: number, rzRad: number): boolean {
  const L = SIM_LIMITS;
  return (
    Math.abs(xM) <= L.postureShiftM &&
    Math.abs(yM) <= L.postureShiftM &&
    zM >= L.postureMinZM &&
    zM <= L.postureMaxZM &&
    Math.abs(rxRad) <= L.postureRotationRad &&
    Math.abs(ryRad) <= L.postureRotationRad &&
    Math.abs(rzRad) <= L.postureRotationRad
  );
}
