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
 */
import type { TnyReply } from "../../bodies/tny360/state.js";
import { actionByCode, type ActionSpec, MessageType, MODULE_BY_CODE, type ModuleSpec, Status, TNY_HEADER_BYTES, TNY_MAX_REQUEST_BYTES } from "../../wire/tny/constants.js";
import { decodeArgs } from "../../wire/tny/decode.js";
import { encodeResponse } from "../../wire/tny/encode.js";
import { TnyDecodeError } from "../../wire/tny/types.js";

/** What the dispatcher needs from a robot (`Tny360Robot` fits). */
export interface TnyDispatchTarget {
  serves(action: ActionSpec): boolean;
  request(leaseId: string | null, module: ModuleSpec, action: ActionSpec, args: readonly unknown[]): TnyReply | Promise<TnyReply>;
}

/**
 * Called for a served command: the connection's lease id after acquiring or renewing it, or null
 * when control is held by someone else. A promise when the authority answers later.
 */
export type LeaseProvider = () => string | null | Promise<string | null>;

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
const replyAlloc = (n: number): Uint8Array => (n === TNY_HEADER_BYTES ? Buffer.allocUnsafe(n) : Buffer.alloc(n));

function errorReply(stats: DispatchStats, msgId: number, status: number): Uint8Array {
  stats.byStatus[status] = (stats.byStatus[status] ?? 0) + 1;
  return encodeResponse(msgId, status, undefined, undefined, replyAlloc);
}

function replyBytes(stats: DispatchStats, msgId: number, action: ActionSpec, r: TnyReply): Uint8Array {
  if (r.status !== Status.Ok) return errorReply(stats, msgId, r.status);
  try {
    const bytes = encodeResponse(msgId, Status.Ok, action.returns, r.values, replyAlloc);
    stats.byStatus[0]!++;
    return bytes;
  } catch {
    // a handler returned values that do not fit the table: a bug, still answered
    return errorReply(stats, msgId, Status.UnknownError);
  }
}

/**
 * Handle one frame. Returns the reply bytes, a promise of them (actions answered after a control
 * tick, or by a real robot), or null when the frame gets no reply.
 */
export function dispatchTnyFrame(frame: Uint8Array, robot: TnyDispatchTarget, lease: LeaseProvider, stats: DispatchStats): Uint8Array | Promise<Uint8Array> | null {
  if (frame.length < 4 || frame[0] !== MessageType.Request) {
    stats.ignored++;
    return null;
  }
  stats.requests++;
  const msgId = frame[2]! | (frame[3]! << 8);
  if (frame.length > TNY_MAX_REQUEST_BYTES) return errorReply(stats, msgId, Status.OutOfMemory);
  if (frame.length < TNY_HEADER_BYTES) return errorReply(stats, msgId, Status.InvalidParameters);
  const length = frame[6]! | (frame[7]! << 8);
  if (length !== frame.length - TNY_HEADER_BYTES) return errorReply(stats, msgId, Status.InvalidParameters);
  const mod = MODULE_BY_CODE[frame[4]!];
  if (!mod) return errorReply(stats, msgId, Status.UnknownModule);
  const action = actionByCode(mod, frame[5]!);
  if (!action) return errorReply(stats, msgId, Status.UnknownAction);
  let args: unknown[];
  try {
    args = decodeArgs(action.args, frame, TNY_HEADER_BYTES);
  } catch (e) {
    if (e instanceof TnyDecodeError) return errorReply(stats, msgId, Status.InvalidParameters);
    throw e;
  }
  stats.understood++;
  const leaseId = action.command && robot.serves(action) ? lease() : null;
  if (leaseId instanceof Promise) {
    return leaseId.then(
      (id) => answer(stats, msgId, mod, action, args, robot, id),
      () => errorReply(stats, msgId, Status.UnknownError),
    );
  }
  return answer(stats, msgId, mod, action, args, robot, leaseId);
}

function answer(stats: DispatchStats, msgId: number, mod: ModuleSpec, action: ActionSpec, args: unknown[], robot: TnyDispatchTarget, leaseId: string | null): Uint8Array | Promise<Uint8Array> {
  let r: TnyReply | Promise<TnyReply>;
  try {
    r = robot.request(leaseId, mod, action, args);
  } catch {
    return errorReply(stats, msgId, Status.UnknownError); // never a crash
  }
  if (r instanceof Promise) {
    return r.then(
      (reply) => replyBytes(stats, msgId, action, reply),
      () => errorReply(stats, msgId, Status.UnknownError),
    );
  }
  return replyBytes(stats, msgId, action, r);
}
