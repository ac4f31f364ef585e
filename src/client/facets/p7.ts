/**
 * The AIRBOT P7's facet of the SDK (`client.p7`, once `client.body === "p7"`): joint moves under a
 * speed limit, servoing, clearing error ids. Every call checks the body first: on another body it
 * fails with ApiError `BL_ERR_CLIENT_NOT_THIS_BODY` before anything is sent. Browser-safe.
 */
import type { P7SimPose } from "../../bodies/p7/joints.js";
import { Facet, type FacetHost } from "./host.js";

export class P7Facet extends Facet<"p7"> {
  constructor(host: FacetHost) {
    super("p7", host);
  }

  /**
   * Move all 7 joints to `positionsRad` under a speed limit (rad/s: one number or 7; default
   * π/3); joints arrive together. Targets outside the command limits are refused (ApiError 400).
   */
  async moveJoints(positionsRad: readonly number[], opts: { speedRadS?: number | readonly number[] } = {}): Promise<{ etaS: number; speedRadS: readonly number[] }> {
    this.check("moveJoints");
    const body = opts.speedRadS === undefined ? { positions: positionsRad } : { positions: positionsRad, speed: opts.speedRadS };
    const r = await this.host.command<{ eta_s: number; speed_rad_s: number[] }>("/v1/commands/move-joints", body);
    return { etaS: r.eta_s, speedRadS: Object.freeze(r.speed_rad_s) };
  }
  /** Each joint tracks `positionsRad` at full speed; each call replaces the previous targets. */
  async servoJoints(positionsRad: readonly number[]): Promise<void> {
    this.check("servoJoints");
    await this.host.command("/v1/commands/servo-joints", { positions: positionsRad });
  }
  /** Clear the error id of `joint` (0..6) or of every joint; resolves the joints cleared. */
  async clearError(joint?: number): Promise<{ clearedJoints: readonly number[] }> {
    this.check("clearError");
    const r = await this.host.command<{ cleared_joints: number[] }>("/v1/commands/clear-error", joint === undefined ? {} : { joint });
    return { clearedJoints: Object.freeze(r.cleared_joints) };
  }
  /**
   * Put the physics arm's world at rest in `pose` (POST /v1/sim/reset, docs/simulation.md): home,
   * every joint at 0. Needs the lease; refused while an e-stop is latched and on the kinematic arm
   * (ApiError 404 BL_ERR_CMD_UNSUPPORTED). Resolves the simulated time after it, s (0).
   */
  async simReset(pose: P7SimPose = "home"): Promise<{ timeS: number }> {
    this.check("simReset");
    const r = await this.host.command<{ pose: string; time_s: number }>("/v1/sim/reset", { pose });
    return { timeS: r.time_s };
  }
}
