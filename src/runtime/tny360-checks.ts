/**
 * The checks every typed TNY-360 command passes before it reaches the body, wherever it is
 * validated: Tny360Robot in the core's thread, Tny360Host on the main thread before the command
 * mailbox. One rule, one answer (the host may not load the robot itself: its code runs in the
 * worker only). Order: the lease, then the arguments through the wire's own strict codec (sizes,
 * lengths, finite floats, ranges), then the link, then the body's own limits.
 */
import { withinLimits } from "../bodies/tny360/joints.js";
import { postureWithinLimits, velocityWithinLimits } from "../bodies/tny360/limits.js";
import { BodylinkError } from "../errors.js";
import { type ActionSpec, actionSpec, JOINT_COUNT, type ModuleSpec, Status, type StatusCode, statusName } from "../wire/tny/constants.js";
import { decodeArgs } from "../wire/tny/decode.js";
import { encodeRequest } from "../wire/tny/encode.js";
import { TnyDecodeError, TnyEncodeError } from "../wire/tny/types.js";
import { type ControlAuthority, leaseError } from "./authority.js";

export type TnySpec = { readonly module: ModuleSpec; readonly action: ActionSpec };

/** The wire actions behind the typed commands (robot API, CLI). */
export const TNY_TYPED = {
  setVelocity: actionSpec("body", "setVelocity"),
  setPosture: actionSpec("body", "setPosture"),
  setEnabled: actionSpec("body", "setEnabled"),
  enableSmooth: actionSpec("body", "enableSmooth"),
  disableSmooth: actionSpec("body", "disableSmooth"),
  setGait: actionSpec("gait", "setType"),
  setAngle: actionSpec("joint", "setAngle"),
  setJointAngles: actionSpec("joint", "setJointAngles"),
  setLegPosition: actionSpec("leg", "setPosition"),
} as const satisfies Record<string, TnySpec>;

export type TnyRefusal = { readonly ok: false; readonly error: BodylinkError; readonly status: number };

const what = (spec: TnySpec): string => `${spec.module.name}.${spec.action.name}`;

/** Without control: 403/409 (leaseError), answered UnknownError on the wire. Count it in refusedCommands. */
export function tnyLeaseRefusal(authority: ControlAuthority, leaseId: string | null): TnyRefusal | null {
  const error = leaseError(authority, leaseId);
  return error ? { ok: false, error, status: Status.UnknownError } : null;
}

/**
 * The arguments through the wire's own path: encoded, then decoded strictly (finite floats,
 * ranges, lengths). The decoded values (float32 where the wire carries float32) or the refusal
 * (count it in invalidCommands).
 */
export function tnyDecoded(spec: TnySpec, args: readonly unknown[]): { readonly ok: true; readonly args: unknown[] } | TnyRefusal {
  try {
    return { ok: true, args: decodeArgs(spec.action.args, encodeRequest(0, spec.module, spec.action, args).subarray(8)) };
  } catch (e) {
    if (!(e instanceof TnyEncodeError || e instanceof TnyDecodeError)) throw e;
    return { ok: false, error: new BodylinkError("BL_ERR_CMD_INVALID", `${what(spec)}: ${e.message}`), status: Status.InvalidParameters };
  }
}

/** The runtime stopped, or no link to the body (`unavailable`: why): 503. */
export function tnyLinkRefusal(stopped: boolean, unavailable: string | null): TnyRefusal | null {
  if (stopped) return { ok: false, error: new BodylinkError("BL_ERR_LINK_LOST", "the robot is stopped"), status: Status.UnknownError };
  if (unavailable) return { ok: false, error: new BodylinkError("BL_ERR_LINK_LOST", unavailable), status: Status.UnknownError };
  return null;
}

/** The body answered `status` (not Ok): the refusal (count it in invalidCommands). */
export function tnyBodyRefusal(spec: TnySpec, status: number): TnyRefusal {
  const error =
    status === Status.InvalidParameters
      ? new BodylinkError("BL_ERR_CMD_INVALID", `${what(spec)}: out of range or unreachable (the robot keeps its previous target)`)
      : new BodylinkError("BL_ERR_CMD_INVALID", `${what(spec)}: the TNY-360 answered ${statusName(status)}`);
  return { ok: false, error, status };
}

/**
 * What the simulator answers a decoded command that needs no body state (its handlers check the
 * same limits: bodies/tny360/limits.ts, joints.ts): velocity and posture limits, joint limits;
 * enable bits and gait are all in range once decoded. Ok or InvalidParameters.
 */
export function tnySimLimitStatus(spec: TnySpec, args: readonly unknown[]): StatusCode {
  const n = args as readonly number[];
  const a = spec.action;
  const T = TNY_TYPED;
  if (a === T.setVelocity.action) return velocityWithinLimits(n[0]!, n[1]!, n[2]!) ? Status.Ok : Status.InvalidParameters;
  if (a === T.setPosture.action) return postureWithinLimits(n[0]!, n[1]!, n[2]!, n[3]!, n[4]!, n[5]!) ? Status.Ok : Status.InvalidParameters;
  if (a === T.setAngle.action) return withinLimits(n[0]!, n[1]!) ? Status.Ok : Status.InvalidParameters;
  if (a === T.setJointAngles.action) {
    const angles = args[0] as ArrayLike<number>;
    for (let i = 0; i < JOINT_COUNT; i++) if (!withinLimits(i, angles[i]!)) return Status.InvalidParameters;
  }
  return Status.Ok;
}
