/**
 * The TNY-360's facet of the SDK (`client.tny360`, once `client.body === "tny360"`): walking,
 * posture, gait, joints, legs, smooth enable/disable. Every call checks the body first: on another
 * body it fails with ApiError `BL_ERR_CLIENT_NOT_THIS_BODY` before anything is sent. Browser-safe.
 */
import type { Tny360SimPose } from "../../bodies/tny360/poses.js";
import { Facet, type FacetHost } from "./host.js";

export type Tny360Gait = "Creep" | "Walk" | "Run";
/** Joint targets in JointId order (`client.jointNames`): 14 positions, rad. */
export interface Tny360JointTargets {
  positions: readonly number[];
}

type Forwarded = { forwarded: boolean };

export class Tny360Facet extends Facet<"tny360"> {
  constructor(host: FacetHost) {
    super("tny360", host);
  }

  /** All 14 joints' targets, rad (out-of-limit values are refused). */
  async setJointTargets(targets: Tny360JointTargets): Promise<Forwarded> {
    this.check("setJointTargets");
    return this.host.command("/v1/commands/joints", targets);
  }
  /** Walk at x, y (m/s) and yaw (rad/s). Renew within 500 ms or the velocity decays to zero. */
  async setVelocity(v: { xMS: number; yMS: number; yawRadS: number; clearOverrides?: boolean }): Promise<Forwarded> {
    this.check("setVelocity");
    return this.host.command("/v1/commands/velocity", { x: v.xMS, y: v.yMS, yaw: v.yawRadS, ...(v.clearOverrides === undefined ? {} : { clear_overrides: v.clearOverrides }) });
  }
  /** Body posture, position m (z = height) and rotation rad (Euler XYZ). */
  async setPosture(p: { xM: number; yM: number; zM: number; rxRad: number; ryRad: number; rzRad: number; clearOverrides?: boolean }): Promise<Forwarded> {
    this.check("setPosture");
    return this.host.command("/v1/commands/posture", {
      x: p.xM,
      y: p.yM,
      z: p.zM,
      rx: p.rxRad,
      ry: p.ryRad,
      rz: p.rzRad,
      ...(p.clearOverrides === undefined ? {} : { clear_overrides: p.clearOverrides }),
    });
  }
  /** Power joints, bit i = joint i (0x0FFF = the 12 leg joints). */
  async setEnabledMask(mask: number): Promise<Forwarded> {
    this.check("setEnabledMask");
    return this.host.command("/v1/commands/enabled", { mask });
  }
  async setGait(gait: Tny360Gait): Promise<Forwarded> {
    this.check("setGait");
    return this.host.command("/v1/commands/gait", { gait });
  }
  /** One joint's target, rad (outside its limits: refused). */
  async setJointTarget(joint: number, positionRad: number): Promise<Forwarded> {
    this.check("setJointTarget");
    return this.host.command("/v1/commands/joint", { joint, position: positionRad });
  }
  /** A leg's foot position in the planner frame, m (leg 0 FL, 1 BL, 2 BR, 3 FR). */
  async setLegPosition(leg: number, xM: number, yM: number, zM: number): Promise<Forwarded> {
    this.check("setLegPosition");
    return this.host.command("/v1/commands/leg", { leg, x: xM, y: yM, z: zM });
  }
  /** Stand up (smooth enable); resolves the estimated seconds. */
  smoothEnable(): Promise<{ estimatedS: number }> {
    return this.smooth("smoothEnable");
  }
  /** Lie down, then power off the joints; resolves the estimated seconds. */
  smoothDisable(): Promise<{ estimatedS: number }> {
    return this.smooth("smoothDisable");
  }
  /**
   * Put the physics world into `pose` (POST /v1/sim/reset, docs/simulation.md): stand (as a smooth
   * enable leaves it), rest (as it boots) or lying (on its back). Needs the lease; refused while an
   * e-stop is latched, on the kinematic simulator and on a robot (ApiError 404
   * BL_ERR_CMD_UNSUPPORTED). Resolves the simulated time after it, s (0).
   */
  async simReset(pose: Tny360SimPose): Promise<{ timeS: number }> {
    this.check("simReset");
    const r = await this.host.command<{ pose: string; time_s: number }>("/v1/sim/reset", { pose });
    return { timeS: r.time_s };
  }
}
