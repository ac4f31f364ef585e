/**
 * The checks every P7 motion command passes before it reaches the arm, wherever it is validated:
 * P7Robot in the core's thread, P7Host on the main thread before the command mailbox. One rule,
 * one answer (the host may not load the robot itself: its code runs in the worker only).
 */
import type { LinkStatus } from "../bodies/link.js";
import { P7_JOINT_COUNT, P7_JOINT_NAMES } from "../bodies/p7/joints.js";
import type { P7State } from "../bodies/p7/state.js";
import { BodylinkError } from "../errors.js";
import { type ControlAuthority, leaseError } from "./authority.js";

/** The lease and link checks first (403/409 for the lease, 503 without a link or a state). */
export function p7Admission(authority: ControlAuthority, leaseId: string, link: LinkStatus, linkUp: boolean, state: Pick<P7State, "seq" | "jointValid">): BodylinkError | null {
  const denied = leaseError(authority, typeof leaseId === "string" ? leaseId : null);
  if (denied) return denied;
  if (link === "lost" || !linkUp) return new BodylinkError("BL_ERR_LINK_LOST", "the P7 arm does not answer (simulated link loss)");
  if (link === "stopped") return new BodylinkError("BL_ERR_LINK_LOST", "the P7 runtime is stopped");
  if (state.seq === 0 || !state.jointValid) return new BodylinkError("BL_ERR_STATE_NONE");
  return null;
}

/** A motion command is refused while any joint has a nonzero error id (409 BL_ERR_CMD_JOINT_FAULT naming the first). */
export function p7FaultRefusal(errorIds: ArrayLike<number>): BodylinkError | null {
  for (let i = 0; i < P7_JOINT_COUNT; i++) {
    const id = errorIds[i]!;
    if (id !== 0) return new BodylinkError("BL_ERR_CMD_JOINT_FAULT", `${P7_JOINT_NAMES[i]} (index ${i})`, id);
  }
  return null;
}
