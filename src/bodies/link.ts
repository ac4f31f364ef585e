/**
 * Link status: one table of codes and words for every body, the robot API, the client SDK and the
 * shared-memory state (which carries the code). Pure data: browser-safe.
 *
 *   starting  configured, no state decoded yet
 *   ok        the body answers
 *   degraded  sporadic errors (fewer in a row than the body's "lost" threshold)
 *   lost      the body stopped answering
 *   stopped   the runtime stopped the link
 */
export const LINK_STATUS = ["starting", "ok", "degraded", "lost", "stopped"] as const;
export type LinkStatus = (typeof LINK_STATUS)[number];
/** Code of each word (index in LINK_STATUS), e.g. LINK_CODE.ok === 1. */
export const LINK_CODE: { readonly [K in LinkStatus]: number } = Object.freeze(Object.fromEntries(LINK_STATUS.map((s, i) => [s, i])) as { [K in LinkStatus]: number });

/** The word for a code; "lost" for a code outside the table (never a wrong "ok"). */
export function linkStatusText(code: number): LinkStatus {
  return LINK_STATUS[code] ?? "lost";
}

/** HTTP header that carries the control lease id with every command (robot API, SDK, CLI). */
export const LEASE_HEADER = "x-bodylink-lease";

/** The robot API's state stream rate, Hz (docs/api.md: 20 Hz; the CLI's flags read it without loading the schemas). */
export const STREAM_RATE_HZ = 20;
