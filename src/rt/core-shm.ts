/**
 * Every threaded core's shared buffer, whatever the body: a control block of Int32 words, the
 * state region (the body's layout table, seqlock word CTL.stateSeq), and the reply buffer for
 * host requests. Written by the core (src/rt/core-worker.ts: state, cycles, replies), read by its
 * host (src/host/core-host.ts). Pure data.
 */
import type { WakeMode } from "../runtime/clock.js";
export const CTL = {
  /** Seqlock sequence of the state region (odd while the core writes). */
  stateSeq: 0,
  /** Cycles the core has run (the host's watchdog compares it over time; the host runs its cycle listeners when it moves). */
  cycles: 1,
  /** Id of the request the reply buffer answers now. */
  replyId: 2,
  /** Bytes of UTF-8 JSON in the reply buffer. */
  replyLength: 3,
  words: 16,
} as const;

export const STATE_START = CTL.words * 4;
export const REPLY_BYTES = 256 * 1024;

/** Where the reply buffer starts and how big the whole buffer is, for a state region of `stateBytes`. */
export function coreRegions(stateBytes: number): { readonly replyStart: number; readonly totalBytes: number } {
  const replyStart = Math.ceil((STATE_START + stateBytes) / 8) * 8;
  return { replyStart, totalBytes: replyStart + REPLY_BYTES };
}

/** The reply buffer: the buffer's last REPLY_BYTES (coreRegions puts it there, 8-aligned). */
export function replyRegion(buffer: SharedArrayBuffer): Uint8Array {
  return new Uint8Array(buffer, buffer.byteLength - REPLY_BYTES);
}

/** What every core takes, besides its body's own options. */
export interface CoreBaseOptions {
  /** Collect V8's young generation between cycles at most this often, ms (0: V8 decides). */
  gcEveryMs: number;
  /** How the core's thread waits for its next cycle; defaults to WORKER_WAKE_DEFAULT (runtime/clock.ts). */
  wake?: WakeMode;
  /** Nice value the core's thread asks for (per thread on Linux; lowering it needs privileges). Defaults to -10. */
  nice?: number;
  /** Test hook: throw an uncaught error in the core after this many ms. */
  testCrashAfterMs?: number;
  /** Test hook: the driver can be told to throw in read or write (request "testFault"). */
  testFaults?: boolean;
}

export type CoreError = { code: string; status: number; message: string; errno?: string };
export type CoreReply = { ok: true; value: unknown } | { ok: false; error: CoreError };

/** Messages the core posts to its host. */
export type CoreMessage =
  | { type: "ready"; defaultStopCategory: 0 | 1; transport: string; nice: number | null; [extra: string]: unknown }
  | { type: "failed"; error: CoreError }
  | { type: "event"; event: string; args: unknown[] }
  | { type: "reply"; id: number; reply: CoreReply }
  | { type: "died"; message: string; detail: string };
