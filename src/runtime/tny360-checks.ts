/**
 * The one validation of a typed TNY-360 command, wherever it enters: Tny360Robot (the core, when
 * it is used as a library) and Tny360Host (the main thread, before the command mailbox). One rule,
 * one answer. Order: the lease, then the values against the wire's own table (what its strict
 * decoder accepts: finite float32, integers within their field's range, 14 joint angles), then the
 * link, then the body's limits (the simulator's: bodies/tny360/limits.ts, joints.ts; a real robot
 * answers its own). Typed values in, a refusal or null out: nothing is encoded to be checked, and
 * the command reaches the driver as the same typed values (bodies/tny360/commands.ts).
 * Pure; allocates only the refusal.
 */
import { withinLimits } from "../bodies/tny360/joints.js";
import { postureWithinLimits, velocityWithinLimits } from "../bodies/tny360/limits.js";
import type { Tny360Posture } from "../bodies/tny360/commands.js";
import { BodylinkError } from "../errors.js";
import { type ActionSpec, actionSpec, type FieldSpec, JOINT_COUNT, type ModuleSpec, Status, statusName } from "../wire/tny/constants.js";
import { type ControlAuthority, leaseError } from "./authority.js";

export type TnySpec = { readonly module: ModuleSpec; readonly action: ActionSpec };

/** The wire actions behind the typed commands (robot API, CLI): their names and fields are the table's. */
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

/** Which health counter a refusal counts in. */
export type TnyRefusalCounter = "refusedCommands" | "invalidCommands" | null;

const what = (spec: TnySpec): string => `${spec.module.name}.${spec.action.name}`;

/** Largest value of each integer wire type. */
const INT_MAX = { u8: 0xff, u16: 0xffff, u32: 0xffff_ffff } as const;

/** Why `v` does not fit the float32 field `field` (the decoder refuses a non-finite float32), or null. */
function f32Problem(field: FieldSpec, v: number): string | null {
  return typeof v === "number" && Number.isFinite(Math.fround(v)) ? null : `${field.name}: a finite float32, found ${String(v)}`;
}

/** Why `v` does not fit the integer field `field` (its type's range and the table's `max`), or null. */
function intProblem(field: FieldSpec, v: number): string | null {
  const max = Math.min(field.max ?? Number.POSITIVE_INFINITY, INT_MAX[field.type as keyof typeof INT_MAX] ?? 0);
  return Number.isInteger(v) && v >= 0 && v <= max ? null : `${field.name}: an integer 0–${max}, found ${String(v)}`;
}

function boolProblem(field: FieldSpec, v: boolean): string | null {
  return typeof v === "boolean" ? null : `${field.name}: true or false, found ${String(v)}`;
}

/** The first problem of several, or null. */
function first(...problems: Array<string | null>): string | null {
  for (const p of problems) if (p !== null) return p;
  return null;
}

const A = {
  velocity: TNY_TYPED.setVelocity.action.args,
  posture: TNY_TYPED.setPosture.action.args,
  enabled: TNY_TYPED.setEnabled.action.args,
  gait: TNY_TYPED.setGait.action.args,
  angle: TNY_TYPED.setAngle.action.args,
  angles: TNY_TYPED.setJointAngles.action.args,
  leg: TNY_TYPED.setLegPosition.action.args,
};

/**
 * Each typed command's check: `problem`, why its values do not fit the wire (InvalidParameters,
 * 400); `limits`, whether the simulator accepts them (its handlers check the same tables).
 */
export const TNY360_CHECKS = {
  velocity: (xMS: number, yMS: number, yawRadS: number, clear: boolean) => ({
    problem: first(f32Problem(A.velocity[0]!, xMS), f32Problem(A.velocity[1]!, yMS), f32Problem(A.velocity[2]!, yawRadS), boolProblem(A.velocity[3]!, clear)),
    limits: () => velocityWithinLimits(Math.fround(xMS), Math.fround(yMS), Math.fround(yawRadS)),
  }),
  posture: (p: Tny360Posture, clear: boolean) => ({
    problem: first(
      f32Problem(A.posture[0]!, p.xM),
      f32Problem(A.posture[1]!, p.yM),
      f32Problem(A.posture[2]!, p.zM),
      f32Problem(A.posture[3]!, p.rxRad),
      f32Problem(A.posture[4]!, p.ryRad),
      f32Problem(A.posture[5]!, p.rzRad),
      boolProblem(A.posture[6]!, clear),
    ),
    limits: () => postureWithinLimits(Math.fround(p.xM), Math.fround(p.yM), Math.fround(p.zM), Math.fround(p.rxRad), Math.fround(p.ryRad), Math.fround(p.rzRad)),
  }),
  enabledMask: (mask: number) => ({ problem: intProblem(A.enabled[0]!, mask), limits: () => true }),
  gait: (gait: number) => ({ problem: intProblem(A.gait[0]!, gait), limits: () => true }),
  jointAngle: (jointId: number, angleRad: number) => ({
    problem: first(intProblem(A.angle[0]!, jointId), f32Problem(A.angle[1]!, angleRad)),
    limits: () => withinLimits(jointId, Math.fround(angleRad)),
  }),
  jointAngles: (anglesRad: ArrayLike<number>) => ({
    problem: jointAnglesProblem(anglesRad),
    limits: () => {
      for (let i = 0; i < JOINT_COUNT; i++) if (!withinLimits(i, Math.fround(anglesRad[i]!))) return false;
      return true;
    },
  }),
  /** Whether the leg reaches the foot depends on the body's posture: the core's answer, not a limit here. */
  legPosition: (legId: number, xM: number, yM: number, zM: number, clear: boolean) => ({
    problem: first(intProblem(A.leg[0]!, legId), f32Problem(A.leg[1]!, xM), f32Problem(A.leg[2]!, yM), f32Problem(A.leg[3]!, zM), boolProblem(A.leg[4]!, clear)),
    limits: () => true,
  }),
} as const;

function jointAnglesProblem(anglesRad: ArrayLike<number>): string | null {
  const field = A.angles[0]!;
  if (anglesRad === null || typeof anglesRad !== "object" || anglesRad.length !== JOINT_COUNT) return `${field.name}: ${JOINT_COUNT} angles, found ${anglesRad?.length ?? String(anglesRad)}`;
  for (let i = 0; i < JOINT_COUNT; i++) {
    const p = f32Problem(field, anglesRad[i]!);
    if (p) return `${p} at JointId ${i}`;
  }
  return null;
}

/** A typed command's check (TNY360_CHECKS). */
export interface TnyCheck {
  readonly problem: string | null;
  limits(): boolean;
}

/** Where a command is admitted: the lease's authority, whether the runtime stopped, why the body is out of reach. */
export interface TnyAdmissionContext {
  readonly authority: ControlAuthority;
  readonly stopped: boolean;
  readonly unavailable: string | null;
  /** The simulator's limits apply (false: a real robot answers its own). */
  readonly simLimits: boolean;
}

/**
 * The one admission of a typed command, in order: the lease, the values, the link, the body's
 * limits. Null: admitted. Else the refusal and the health counter it counts in.
 */
export function tnyAdmission(spec: TnySpec, leaseId: string | null, check: TnyCheck, at: TnyAdmissionContext): { refusal: TnyRefusal; counter: TnyRefusalCounter } | null {
  const lease = tnyLeaseRefusal(at.authority, leaseId);
  if (lease) return { refusal: lease, counter: "refusedCommands" };
  if (check.problem !== null)
    return { refusal: { ok: false, error: new BodylinkError("BL_ERR_CMD_INVALID", `${what(spec)}: ${check.problem}`), status: Status.InvalidParameters }, counter: "invalidCommands" };
  const down = tnyLinkRefusal(at.stopped, at.unavailable);
  if (down) return { refusal: down, counter: null };
  if (at.simLimits && !check.limits()) return { refusal: tnyBodyRefusal(spec, Status.InvalidParameters), counter: "invalidCommands" };
  return null;
}

/** Without control: 403/409 (leaseError), answered UnknownError on the wire. Count it in refusedCommands. */
export function tnyLeaseRefusal(authority: ControlAuthority, leaseId: string | null): TnyRefusal | null {
  const error = leaseError(authority, leaseId);
  return error ? { ok: false, error, status: Status.UnknownError } : null;
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
