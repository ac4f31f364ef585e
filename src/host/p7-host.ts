/**
 * The main thread's side of the P7's threaded core (src/rt/p7-worker.ts): a P7Body (state, link,
 * moveJoints, servoJoints, clearError, e-stop, health, onCycle, authority; checked by the
 * compiler), so the robot API serves it as it serves a P7Robot. It never waits for its core
 * (no request blocks this thread): leases, clearError, reset and health are promises bounded by the request
 * timeout; reads come from shared memory; moveJoints/servoJoints are validated here with the
 * in-thread robot's own rules and answers (p7Admission, the validators, p7FaultRefusal) and
 * posted to the core's command mailbox (P7_COMMAND_LAYOUT), which the core reads at the start of
 * every cycle. What crosses, and how: core-host.ts, src/rt/core-shm.ts.
 */
import type { SimResetResult } from "../runtime/robot.js";
import { copyP7Commands, P7Commands, p7MoveScales, setP7Write, validateJointTargets, validateSpeed } from "../bodies/p7/commands.js";
import { P7_JOINT_COUNT, type P7SimPose } from "../bodies/p7/joints.js";
import { P7_COMMAND_KIND, P7_COMMAND_LAYOUT } from "../bodies/p7/layout.js";
import type { LinkStatus } from "../bodies/link.js";
import { P7State } from "../bodies/p7/state.js";
import { BODIES } from "../bodies/registry.js";
import { BodylinkError } from "../errors.js";
import { p7Admission, p7FaultRefusal } from "../runtime/p7-checks.js";
import type { P7Body, P7ClearAccepted, P7CommandResult, P7MoveAccepted, P7MoveOptions } from "../runtime/p7-robot.js";
import type { P7CoreOptions, P7Ready, P7Requests } from "../rt/core-options.js";
import { CTL } from "../rt/core-shm.js";
import { Mailbox, mailboxBytes } from "../shm/mailbox.js";
import { P7_STATE_BYTES, p7StateChannel } from "../shm/p7-state.js";
import { CommandOutbox } from "./command-outbox.js";
import { CoreHost, type CoreHostOptions, HostAuthority, splitHostOptions } from "./core-host.js";

export type P7HostOptions = Omit<P7CoreOptions, "gcEveryMs"> & Partial<Pick<P7CoreOptions, "gcEveryMs">> & CoreHostOptions;

/** The P7 core's body region: its command mailbox. */
export const P7_MAILBOX_BYTES = mailboxBytes(P7_COMMAND_LAYOUT);

const OK = Object.freeze({ ok: true as const });

export class P7Host extends CoreHost<P7Requests> implements P7Body {
  readonly kind = "p7" as const;
  /** Leases and the latch, read from shared memory; changes are messages to the core's Authority. */
  readonly authority = new HostAuthority(this.control);
  /** The newest state the core published (refreshed before every cycle listener runs, and after every command). */
  readonly state = new P7State();
  /** The arm's link as the core last published it ("lost" while the core is stalled). */
  link: LinkStatus = "starting";
  /** The arm's link as the core published it, even while the core is stalled (commands are admitted on it, as in the core). */
  #armLink: LinkStatus = "starting";
  readonly #targets = new Float64Array(P7_JOINT_COUNT);
  readonly #speeds = new Float64Array(P7_JOINT_COUNT);
  readonly #scales = new Float64Array(2);
  /** The newest validated command, until it is written (held back while a clearError is on its way). */
  #outbox: CommandOutbox<typeof P7_COMMAND_LAYOUT, P7Commands> | null = null;

  /** Start the P7 core in its worker; resolves once it is cycling. */
  static async start(opts: P7HostOptions): Promise<P7Host> {
    const { core, host: hostOpts } = splitHostOptions(opts);
    const { host } = await CoreHost.boot<P7Host, P7Ready>(
      {
        entry: "p7-worker",
        stateBytes: P7_STATE_BYTES,
        options: { gcEveryMs: 100, ...core, bodyBytes: P7_MAILBOX_BYTES },
        channel: (buffer, start, ctl) => {
          const ch = p7StateChannel(buffer, start, ctl, CTL.stateSeq);
          return { readInto: (h) => ch.readInto(h) };
        },
      },
      (worker, buffer, channel, regions) => {
        const h = new P7Host(BODIES.p7.periodMs, worker, buffer, channel, hostOpts);
        h.#outbox = new CommandOutbox(new Mailbox(P7_COMMAND_LAYOUT, buffer, regions.bodyStart), new P7Commands(), copyP7Commands, () => h.core.ordering);
        return h;
      },
    );
    return host;
  }

  protected override mirrored(stalled: boolean): void {
    this.#armLink = this.link;
    if (stalled) this.link = "lost";
  }

  /**
   * Point-to-point move, validated here as the core would (lease, link, 7 finite targets inside the
   * limits, speeds, joint faults) and posted to the mailbox; answers at once with the estimate from
   * the newest state (the same rule the arm uses: p7MoveScales). The core starts it at its next
   * cycle, or drops it (errors.staleCommands) if control changed hands meanwhile.
   */
  moveJoints(leaseId: string, targetsRad: ArrayLike<number>, opts: P7MoveOptions = {}): P7CommandResult<P7MoveAccepted> {
    // The generation first: a holder that changes after it is caught by the lease check or by the core.
    const generation = this.authority.generation();
    const refused = this.#admit(leaseId);
    if (refused) return refused;
    const bad = validateJointTargets(targetsRad, this.#targets) ?? validateSpeed(opts?.speedRadS, this.#speeds);
    if (bad) return this.#refuse(new BodylinkError("BL_ERR_CMD_INVALID", bad));
    const fault = p7FaultRefusal(this.state.errorIds);
    if (fault) return this.#refuse(fault);
    const etaS = p7MoveScales(this.state.angles, this.#targets, this.#speeds, this.state.errorIds, this.#scales);
    this.#post(P7_COMMAND_KIND.moveJoints, generation);
    return { ok: true, etaS, speedRadS: Object.freeze(Array.from(this.#speeds)) };
  }

  /** Servo targets, validated here and posted to the mailbox (each replaces the last); answers at once. */
  servoJoints(leaseId: string, targetsRad: ArrayLike<number>): P7CommandResult {
    const generation = this.authority.generation();
    const refused = this.#admit(leaseId);
    if (refused) return refused;
    const bad = validateJointTargets(targetsRad, this.#targets);
    if (bad) return this.#refuse(new BodylinkError("BL_ERR_CMD_INVALID", bad));
    const fault = p7FaultRefusal(this.state.errorIds);
    if (fault) return this.#refuse(fault);
    this.#post(P7_COMMAND_KIND.servoJoints, generation);
    return OK;
  }

  /** Which joints were cleared is the arm's answer: a request to the core (bounded by the request timeout). */
  async clearError(leaseId: string, joint?: number): Promise<P7CommandResult<P7ClearAccepted>> {
    // ordered: it holds the arm where it is, so a move posted after it must reach the core after it
    const r = await this.core.callOrdered("clearError", this.core.timeoutMs, leaseId, joint ?? null);
    this.refresh(); // the cleared ids are published before the answer
    return r;
  }

  /** The physics world into a pose: the core's (its answer, and the state after it). */
  async simReset(leaseId: string, pose: P7SimPose): Promise<SimResetResult> {
    // ordered: a command posted after it must reach the arm after it
    const r = await this.core.callOrdered("simReset", this.core.timeoutMs, leaseId, pose);
    this.refresh();
    return r;
  }

  #admit(leaseId: string): { ok: false; error: BodylinkError } | null {
    const denied = p7Admission(this.authority, leaseId, this.#armLink, this.#armLink !== "lost", this.state);
    return denied ? this.#refuse(denied) : null;
  }

  #refuse(error: BodylinkError): { ok: false; error: BodylinkError } {
    this.countHostError("refusedCommands");
    return { ok: false, error };
  }

  /**
   * The validated targets (and speeds) into the mailbox under the generation read before the lease
   * check: newest wins, never waits. While a clearError is on its way to the core, the newest
   * command is held here and written once the core answered it (so it lands after it, as in one thread).
   */
  #post(kind: typeof P7_COMMAND_KIND.moveJoints | typeof P7_COMMAND_KIND.servoJoints, generation: number): void {
    const out = this.#outbox!;
    const held = out.merged; // each command replaces the last, as on the arm: no merge
    held.targetsRad.set(this.#targets);
    held.speedRadS.set(this.#speeds);
    setP7Write(held, kind, generation);
    out.post();
  }

  protected override commandsReleased(): void {
    this.#outbox!.release();
  }

  /** Test hook (a core started with testFaults): the simulated arm's link drops (true) or comes back (false). */
  testLinkLoss(lost: boolean): Promise<boolean> {
    return this.core.call("testLinkLoss", this.core.timeoutMs, lost);
  }
}
