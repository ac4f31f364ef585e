/**
 * Why a body is in (or on its way to) its safe state: one table of codes and words for every body,
 * the robot API (`safety_code` on /v1/health), the fleet, the client SDK and the shared-memory state
 * (which carries the number). The body's `safetyReason` text adds the details (who, what failed);
 * a program decides on the code, a person reads the text. Pure data: browser-safe.
 */
export const SAFETY_CODES = [
  "none",
  "no_holder",
  "lease_expired",
  "lease_revoked",
  "lease_released",
  "waiting_for_command",
  "estop",
  "estop_reset",
  "cycle_late",
  "cycle_overrun",
  "link_lost",
  "internal_error",
  "core_stalled",
  "core_stopped",
] as const;
export type SafetyCode = (typeof SAFETY_CODES)[number];

/** What each code means (docs/api.md lists the same table). */
export const SAFETY_TEXT: { readonly [K in SafetyCode]: string } = Object.freeze({
  none: "commands flow normally",
  no_holder: "no client holds control: the body holds still (NAO: stiffness ramps to 0)",
  lease_expired: "the control lease expired (its client stopped renewing or commanding)",
  lease_revoked: "the control lease was revoked (another client took control, or the runtime did)",
  lease_released: "the client released control",
  waiting_for_command: "a client holds control and has not commanded yet",
  estop: "the emergency stop is latched: POST /v1/estop/reset to go on",
  estop_reset: "the emergency stop was reset: take control and command to move",
  cycle_late: "a cycle started too late: stiffness ramps to 0 until cycles are on time again",
  cycle_overrun: "the exchange with the body overran the cycle",
  link_lost: "the body stopped answering (or answers garbage)",
  internal_error: "an internal error in the cycle",
  core_stalled: "the real-time core stopped cycling",
  core_stopped: "the real-time core is not running",
});

/** Number of each code (index in SAFETY_CODES), e.g. SAFETY_CODE.none === 0. */
export const SAFETY_CODE: { readonly [K in SafetyCode]: number } = Object.freeze(Object.fromEntries(SAFETY_CODES.map((s, i) => [s, i])) as { [K in SafetyCode]: number });

/** The word for a number; "internal_error" outside the table (never a wrong "none"). */
export function safetyCodeWord(n: number): SafetyCode {
  return SAFETY_CODES[n] ?? "internal_error";
}

/** The code of a lease's end, as the authority's "released" event words it. */
export function leaseEndCode(why: "released" | "expired" | "revoked"): SafetyCode {
  return why === "expired" ? "lease_expired" : why === "revoked" ? "lease_revoked" : "lease_released";
}

/**
 * Codes that mean something failed (the body, the cycle, the core) or the stop is latched, as
 * against the expected states of a body nobody is commanding (no holder, a lease that ended,
 * waiting for the first command): a dashboard shows the first as an alarm, the others calmly.
 */
export const SAFETY_FAULT: { readonly [K in SafetyCode]: boolean } = Object.freeze({
  none: false,
  no_holder: false,
  lease_expired: false,
  lease_revoked: false,
  lease_released: false,
  waiting_for_command: false,
  estop: true,
  estop_reset: false,
  cycle_late: true,
  cycle_overrun: true,
  link_lost: true,
  internal_error: true,
  core_stalled: true,
  core_stopped: true,
});
