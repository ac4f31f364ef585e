/**
 * Layout tables of what every threaded core shares besides its body's state (src/rt/core-shm.ts
 * places them): the lease mirror the core publishes (src/shm/lease-mirror.ts) and the e-stop
 * request the host leaves for the core. Pure data.
 */
/** The lease as the core publishes it for its host (src/shm/lease-mirror.ts). */
export const LEASE_MIRROR_LAYOUT = [
  // acquiredAtMs, expiresAtMs (the core's monotonic clock), expiresAtCycle, expiresAtEpochMs
  { name: "times", type: "f64", count: 4 },
  // [0] generation, [1] held (0/1), [2] source (LEASE_SOURCE_CODE), [3] id bytes, [4] owner bytes
  { name: "header", type: "u32", count: 5 },
  { name: "id", type: "u8", count: 64 },
  { name: "owner", type: "u8", count: 256 },
] as const;

/** The e-stop request the host leaves for the core (src/rt/core-shm.ts, CTL.estopRequests). */
export const ESTOP_REQUEST_LAYOUT = [
  // [0] source bytes, [1] reason bytes
  { name: "header", type: "u32", count: 2 },
  { name: "source", type: "u8", count: 256 },
  { name: "reason", type: "u8", count: 1024 },
] as const;
