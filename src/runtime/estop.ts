/**
 * The emergency-stop latch: one per runtime, owned by its {@link Authority}, shared by every body
 * and every way in (robot API, dashboard, CLI, LoLA, TNY-360 API, fleet).
 *
 * ISO 13850: an e-stop **latches**; only an explicit reset releases it, and a reset does not
 * restart anything: after it, nothing moves until a client takes a lease and commands.
 * IEC 60204-1 stop categories (Spot's CUT and SETTLE_THEN_CUT):
 *   0 — cut at once (NAO stiffness 0 now; a standing NAO falls);
 *   1 — bring the body to a safe posture within a bounded time, then cut.
 * A category-1 stop becomes category 0 when the link or the body faults while it settles, and a
 * category-0 request during a category-1 stop upgrades it. The latch holds either way.
 */

/** IEC 60204-1 stop category. */
export type StopCategory = 0 | 1;
export const STOP_CATEGORIES: readonly StopCategory[] = [0, 1];

/** "none": not latched; "settling": a category-1 stop is moving to its safe posture; "cut": the body is in its safe state. */
export type EstopPhase = "none" | "settling" | "cut";

export interface EstopState {
  readonly latched: boolean;
  readonly reason: string | null;
  /** Who stopped it: "api", "dashboard", "cli", "lola", "tny", "fleet", "runtime" (a shutdown), … */
  readonly source: string | null;
  /** Wall-clock time the latch engaged, ms since the epoch. */
  readonly sinceEpochMs: number | null;
  readonly category: StopCategory | null;
  readonly phase: EstopPhase;
}

export interface EstopRequest {
  /** Defaults to the body's documented default (see each runtime's `defaultStopCategory`). */
  readonly category?: StopCategory;
  readonly source: string;
  readonly reason?: string;
}

export interface EstopResetRequest {
  readonly source: string;
  /** Why it is safe to go on: required, and logged. */
  readonly reason: string;
}

export const ESTOP_CLEAR: EstopState = Object.freeze({ latched: false, reason: null, source: null, sinceEpochMs: null, category: null, phase: "none" });

/** Longest reason or source kept (client-supplied text). */
export const ESTOP_TEXT_MAX = 200;

export function estopText(s: string | undefined, fallback: string): string {
  const t = typeof s === "string" ? s.trim().slice(0, ESTOP_TEXT_MAX) : "";
  return t.length > 0 ? t : fallback;
}

/** One line for logs, refusals and `state.safetyReason`. */
export function describeEstop(s: EstopState): string {
  if (!s.latched) return "no emergency stop";
  const since = s.sinceEpochMs === null ? "" : ` since ${new Date(s.sinceEpochMs).toISOString()}`;
  return `emergency stop latched (category ${s.category}, ${s.source}: ${s.reason})${since}`;
}
