/**
 * The NAO core's shared buffer: a control block of Int32 words, the state region (layout table in
 * src/bodies/nao/layout.ts, seqlock word CTL.stateSeq), and the reply buffer for host requests.
 * Shared by src/rt/nao-worker.ts (writes state, cycles, replies) and src/host/nao-host.ts (reads
 * them). Pure data.
 */
import { NAO_STATE_BYTES } from "../shm/nao-state.js";

export const CTL = {
  /** Seqlock sequence of the state region (odd while the core writes). */
  stateSeq: 0,
  /** Cycles the core has run (the host's watchdog compares it over time). */
  cycles: 1,
  /** Id of the request the reply buffer answers now. */
  replyId: 2,
  /** Bytes of UTF-8 JSON in the reply buffer. */
  replyLength: 3,
  words: 16,
} as const;

export const STATE_START = CTL.words * 4;
export const REPLY_START = Math.ceil((STATE_START + NAO_STATE_BYTES) / 8) * 8;
export const REPLY_BYTES = 256 * 1024;
export const NAO_CORE_BYTES = REPLY_START + REPLY_BYTES;

export interface CoreOptions {
  seed: number;
  usb: boolean;
  acceptBoardVersions: readonly number[];
  gcEveryMs: number;
  lola: { path: string; fallbackPath: string | null; readers: number; graceMs: number; group?: string } | null;
  /**
   * Run on top of the robot's own LoLA at `path` instead of the chest board (docs/lola.md, "On a
   * stock robot"): the core owns the upstream client, the driver and our LoLA server.
   */
  upstream?: { path: string; stallMs?: number } | null;
  /** Recording: the core's ByteRing (src/shm/ring.ts). The core is its one producer; the recorder drains it on the main thread. */
  recordRing?: SharedArrayBuffer | null;
  /** Nice value the core's thread asks for (per thread on Linux; lowering it needs privileges). Defaults to -10. */
  nice?: number;
  /** Test hook: throw an uncaught error in the core after this many ms. */
  testCrashAfterMs?: number;
}

export type CoreReply = { ok: true; value: unknown } | { ok: false; error: { code: string; status: number; message: string } };
