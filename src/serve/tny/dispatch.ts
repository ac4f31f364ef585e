/**
 * One TNY-360 request frame in, at most one reply frame out (tny360.md §3): the part of the TNY
 * server that knows bytes, with no sockets (tests and the benchmark call it directly).
 *
 * Rules (documented in docs/protocol/tny360.md):
 * - fewer than 4 bytes (no msg_id), or a type byte other than Request (1): no reply (the firmware
 *   ignores them too; answering a Response could loop two peers);
 * - more than 256 bytes: OutOfMemory (6), the firmware's ESP_ERR_NO_MEM, which it never sends;
 * - fewer than 8 bytes, or `length` ≠ the frame's payload size: InvalidParameters (3);
 * - module not registered: UnknownModule (1); action past the module's real table: UnknownAction
 *   (2) (the firmware's `sizeof` bound bug is not reproduced);
 * - arguments short, long, non-finite, a bool not 0/1, an id or value out of range: InvalidParameters;
 * - everything else: what the robot answers (commands need control: see `LeaseProvider`).
 *
 * Allocation: one args array and one reply buffer (a slice of Node's pool) per request (prepare
 * side of nothing: the server runs outside the robot's cycle).
 *
 * Time: `nowMs`, the request's arrival on the robot's clock, is read once by the server and passed
 * down: the lease renewal, the robot's lease check and the body's command stamp all compare
 * against it (a clock read is ~0.1 µs on the development VM; the path read it five times).
 */
import type { TnyReply } from "../../bodies/tny360/state.js";
import { actionByCode, type ActionSpec, MessageType, MODULE_BY_CODE, type ModuleSpec, Status, TNY_HEADER_BYTES, TNY_MAX_REQUEST_BYTES } from "../../wire/tny/constants.js";
import { decodeArgs } from "../../wire/tny/decode.js";
import { encodeResponse } from "../../wire/tny/encode.js";
import { TnyDecodeError } from "../../wire/tny/types.js";

/** What the dispatcher needs from a robot (`Tny360Robot` fits). */
export interface TnyDispatchTarget {
  serves(action: ActionSpec): boolean;
  /** `nowMs`: the request's arrival on the robot's clock (omitted: the robot reads it). */
  request(leaseId: string | null, module: ModuleSpec, action: ActionSpec, args: readonly unknown[], nowMs?: number): TnyReply | Promise<TnyReply>;
}

/**
 * Called for a served command: the connection's lease id after acquiring or renewing it at `nowMs`
 * (the request's time, when the caller gave one), or null when control is held by someone else. A
 * promise when the authority answers later.
 */
export type LeaseProvider = (nowMs?: number) => string | null | Promise<string | null>;

/**
 * Makes a reply's buffer: `alloc(n)` returns a buffer whose last `n` bytes take the reply (the bytes
 * before them are the caller's: the server writes a WebSocket frame header there). Every reply byte
 * is written, so an unzeroed pool slice will do for a header-only reply; a longer one must come zeroed
 * (padding the encoder skips must not carry old pool bytes to the wire).
 */
export type ReplyAlloc = (replyBytes: number) => Uint8Array;

/** Counters by outcome (for the server's stats). */
export interface DispatchStats {
  requests: number;
  /** Requests the robot understood (module, action and arguments decoded): what counts as "useful" for a slot. */
  understood: number;
  ignored: number;
  byStatus: number[];
}

export function newDispatchStats(): DispatchStats {
  return { requests: 0, understood: 0, ignored: 0, byStatus: [0, 0, 0, 0, 0, 0, 0, 0] };
}

/**
 * Reply bytes as a Buffer, which `ws` sends as it is (a plain Uint8Array gets a Buffer view per
 * send): a header-only reply (every byte written) from Node's pool, a longer one zeroed.
 */
export const replyAlloc: ReplyAlloc = (n) => (n === TNY_HEADER_BYTES ? Buffer.allocUnsafe(n) : Buffer.alloc(n));

function errorReply(stats: DispatchStats, msgId: number, status: number, alloc: ReplyAlloc): Uint8Array {
  stats.byStatus[status] = (stats.byStatus[status] ?? 0) + 1;
  return encodeResponse(msgId, status, undefined, undefined, alloc);
}

function replyBytes(stats: DispatchStats, msgId: number, action: ActionSpec, r: TnyReply, alloc: ReplyAlloc): Uint8Array {
  if (r.status !== Status.Ok) return errorReply(stats, msgId, r.status, alloc);
  try {
    const bytes = encodeResponse(msgId, Status.Ok, action.returns, r.values, alloc);
    stats.byStatus[0]!++;
    return bytes;
  } catch {
    // a handler returned values that do not fit the table: a bug, still answered
    return errorReply(stats, msgId, Status.UnknownError, alloc);
  }
}

/**
 * Handle one frame that arrived at `nowMs` on the robot's clock (omitted: read where needed).
 * Returns the reply bytes (the last bytes of `alloc`'s buffer), a promise of them (actions answered
 * after a control tick, or by a real robot), or null when the frame gets no reply.
 */
export function dispatchTnyFrame(
  frame: Uint8Array,
  robot: TnyDispatchTarget,
  lease: LeaseProvider,
  stats: DispatchStats,
  nowMs?: number,
  alloc: ReplyAlloc = replyAlloc,
): Uint8Array | Promise<Uint8Array> | null {
  if (frame.length < 4 || frame[0] !== MessageType.Request) {
    stats.ignored++;
    return null;
  }
  stats.requests++;
  const msgId = frame[2]! | (frame[3]! << 8);
  if (frame.length > TNY_MAX_REQUEST_BYTES) return errorReply(stats, msgId, Status.OutOfMemory, alloc);
  if (frame.length < TNY_HEADER_BYTES) return errorReply(stats, msgId, Status.InvalidParameters, alloc);
  const length = frame[6]! | (frame[7]! << 8);
  if (length !== frame.length - TNY_HEADER_BYTES) return errorReply(stats, msgId, Status.InvalidParameters, alloc);
  const mod = MODULE_BY_CODE[frame[4]!];
  if (!mod) return errorReply(stats, msgId, Status.UnknownModule, alloc);
  const action = actionByCode(mod, frame[5]!);
  if (!action) return errorReply(stats, msgId, Status.UnknownAction, alloc);
  let args: unknown[];
  try {
    args = decodeArgs(action.args, frame, TNY_HEADER_BYTES);
  } catch (e) {
    if (e instanceof TnyDecodeError) return errorReply(stats, msgId, Status.InvalidParameters, alloc);
    throw e;
  }
  stats.understood++;
  const leaseId = action.command && robot.serves(action) ? lease(nowMs) : null;
  if (leaseId instanceof Promise) {
    // the authority answered later: the robot reads its clock when it gets the request
    return leaseId.then(
      (id) => answer(stats, msgId, mod, action, args, robot, id, undefined, alloc),
      () => errorReply(stats, msgId, Status.UnknownError, alloc),
    );
  }
  return answer(stats, msgId, mod, action, args, robot, leaseId, nowMs, alloc);
}

function answer(
  stats: DispatchStats,
  msgId: number,
  mod: ModuleSpec,
  action: ActionSpec,
  args: unknown[],
  robot: TnyDispatchTarget,
  leaseId: string | null,
  nowMs: number | undefined,
  alloc: ReplyAlloc,
): Uint8Array | Promise<Uint8Array> {
  let r: TnyReply | Promise<TnyReply>;
  try {
    r = robot.request(leaseId, mod, action, args, nowMs);
  } catch {
    return errorReply(stats, msgId, Status.UnknownError, alloc); // never a crash
  }
  if (r instanceof Promise) {
    return r.then(
      (reply) => replyBytes(stats, msgId, action, reply, alloc),
      () => errorReply(stats, msgId, Status.UnknownError, alloc),
    );
  }
  return replyBytes(stats, msgId, action, r, alloc);
}
