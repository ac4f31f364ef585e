/**
 * The AIRBOT P7's facet of the SDK (`client.p7`, once `client.body === "p7"`): joint moves under a
 * speed limit, servoing, clearing error ids. Every call checks the body first: on another body it
 * fails with ApiError `BL_ERR_CLIENT_NOT_THIS_BODY` before anything is sent. Browser-safe.
 */
import type { P7StateMessage } from "../messages.js";
import type { FacetHost } from "./host.js";

export class P7Facet {
  readonly kind = "p7" as const;
  readonly #host: FacetHost;

  constructor(host: FacetHost) {
    this.#host = host;
  }

  /** The arm's full message as sent (wire spelling), deep-frozen; or null when not current. */
  getBodyState(): Readonly<P7StateMessage> | null {
    this.#host.checkBody("p7", "p7.getBodyState()");
    const c = this.#host.current();
    return c && c.message.body === "p7" ? c.message : null;
  }
  /**
   * Move all 7 joints to `positionsRad` under a speed limit (rad/s: one number or 7; default
   * π/3); joints arrive together. Targets outside the command limits are refused (ApiError 400).
   */
  async moveJoints(positionsRad: readonly number[], opts: { speedRadS?: number | readonly number[] } = {}): Promise<{ etaS: number; speedRadS: readonly number[] }> {
    this.#host.checkBody("p7", "p7.moveJoints()");
    const body = opts.speedRadS === undefined ? { positions: positionsRad } : { positions: positionsRad, speed: opts.speedRadS };
    const r = await this.#host.command<{ eta_s: number; speed_rad_s: number[] }>("/v1/commands/move-joints", body);
    return { etaS: r.eta_s, speedRadS: Object.freeze(r.speed_rad_s) };
  }
  /** Each joint tracks `positionsRad` at full speed; each call replaces the previous targets. */
  async servoJoints(positionsRad: readonly number[]): Promise<void> {
    this.#host.checkBody("p7", "p7.servoJoints()");
    await this.#host.command("/v1/commands/servo-joints", { positions: positionsRad });
  }
  /** Clear the error id of `joint` (0..6) or of every joint; resolves the joints cleared. */
  async clearError(joint?: number): Promise<{ clearedJoints: readonly number[] }> {
    this.#host.checkBody("p7", "p7.clearError()");
    const r = await this.#host.command<{ cleared_joints: number[] }>("/v1/commands/clear-error", joint === undefined ? {} : { joint });
    return { clearedJoints: Object.freeze(r.cleared_joints) };
  }
}
