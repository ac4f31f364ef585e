/**
 * The main thread's side of the TNY-360's threaded core (src/rt/tny360-worker.ts): a Tny360Body
 * (state, snapshots, the typed commands, e-stop, health, onCycle, authority; checked by the
 * compiler) for the robot API's adapter (the TNY-360 API server runs in the core's thread). It never waits
 * for its core (no request blocks this thread): leases, reset, health, the smooth sequences and a leg's foot
 * (their answers need the body's state) are promises bounded by the request timeout; the other
 * typed commands (velocity, posture, enable bits, gait, joint overrides) are validated here with
 * the in-thread robot's own checks and answers (runtime/tny360-checks.ts) and posted to the core's
 * command mailbox (TNY360_COMMAND_LAYOUT), merged until the core takes them at its next cycle.
 * What crosses, and how: core-host.ts.
 */
import type { WakeCounts } from "../runtime/clock.js";
import type { SimResetResult } from "../runtime/robot.js";
import { BODIES } from "../bodies/registry.js";
import type { Tny360SimPose } from "../bodies/tny360/poses.js";
import { snapshotTny360State, type Tny360Snapshot, Tny360State } from "../bodies/tny360/state.js";
import type { Tny360CoreOptions, Tny360Ready, Tny360Requests } from "../rt/core-options.js";
import { CTL } from "../rt/core-shm.js";
import type { Tny360Body, Tny360CommandResult, Tny360SmoothResult } from "../runtime/tny360-robot.js";
import { TNY360_CHECKS, TNY_TYPED, type TnyAdmissionContext, type TnyCheck, type TnyRefusal, type TnySpec, tnyAdmission } from "../runtime/tny360-checks.js";
import {
  clearTny360Commands,
  copyTny360Commands,
  mergeEnabledMask,
  mergeGait,
  mergeJointAngle,
  mergeJointAngles,
  mergePosture,
  mergeVelocity,
  openTny360Merge,
  Tny360Commands,
  type Tny360Posture,
} from "../bodies/tny360/commands.js";
import { TNY360_COMMAND_LAYOUT } from "../bodies/tny360/layout.js";
import type { LinkStatus } from "../bodies/link.js";
import { Mailbox, mailboxBytes } from "../shm/mailbox.js";
import { TNY360_STATE_BYTES, tny360StateChannel } from "../shm/tny360-state.js";
import { type GaitName, GaitType } from "../wire/tny/constants.js";
import type { Worker } from "node:worker_threads";
import { CommandOutbox } from "./command-outbox.js";
import { CoreHost, type CoreHostOptions, HostAuthority, type StateReader, splitHostOptions } from "./core-host.js";

export type Tny360HostOptions = Omit<Tny360CoreOptions, "gcEveryMs"> & Partial<Pick<Tny360CoreOptions, "gcEveryMs">> & CoreHostOptions;

/** The TNY-360 core's body region: its command mailbox. */
export const TNY360_MAILBOX_BYTES = mailboxBytes(TNY360_COMMAND_LAYOUT);

const APPLIED: Tny360CommandResult = Object.freeze({ ok: true, forwarded: false });
const FORWARDED: Tny360CommandResult = Object.freeze({ ok: true, forwarded: true });

/** A real robot is polled at up to 50 Hz: its cycle is 20 ms (the simulator's is the registry's 5 ms). */
const REMOTE_PERIOD_MS = 20;

export class Tny360Host extends CoreHost<Tny360Requests> implements Tny360Body, TnyAdmissionContext {
  /** Leases and the latch, read from shared memory; changes are messages to the core's Authority. */
  readonly authority = new HostAuthority(this.control);
  readonly kind = "tny360" as const;
  readonly source: "sim" | "remote";
  /** The newest state the core published (refreshed before every cycle listener runs, and after every command). */
  readonly state: Tny360State;
  /** The TNY-360 API server's port when it runs in the core (null: not there). */
  tnyPort: number | null = null;
  /** The body's link as the core published it, even while the core is stalled (commands are admitted on it, as in the core). */
  #bodyLink: LinkStatus = "starting";
  /** Commands merged since the core last took one (so none is lost when several come within a cycle), and their writes. */
  #outbox: CommandOutbox<typeof TNY360_COMMAND_LAYOUT, Tny360Commands> | null = null;

  private constructor(source: "sim" | "remote", periodMs: number, worker: Worker, buffer: SharedArrayBuffer, channel: StateReader<Tny360Host>, opts: CoreHostOptions) {
    super(periodMs, worker, buffer, channel, opts);
    this.source = source;
    this.state = new Tny360State(source);
  }

  /** Start the TNY-360 core in its worker; resolves once it is cycling (and, with `server`, serving the TNY-360 API). */
  static async start(opts: Tny360HostOptions): Promise<Tny360Host> {
    const { core, host: hostOpts } = splitHostOptions(opts);
    const source = core.remote ? "remote" : "sim";
    const { host, ready } = await CoreHost.boot<Tny360Host, Tny360Ready>(
      {
        entry: "tny360-worker",
        stateBytes: TNY360_STATE_BYTES,
        options: { gcEveryMs: 100, ...core, bodyBytes: TNY360_MAILBOX_BYTES },
        channel: (buffer, start, ctl) => {
          const ch = tny360StateChannel(buffer, start, ctl, CTL.stateSeq);
          return { readInto: (h) => ch.readInto(h) };
        },
      },
      (worker, buffer, channel, regions) => {
        const h = new Tny360Host(source, core.remote ? REMOTE_PERIOD_MS : BODIES.tny360.periodMs, worker, buffer, channel, hostOpts);
        h.#outbox = new CommandOutbox(new Mailbox(TNY360_COMMAND_LAYOUT, buffer, regions.bodyStart), new Tny360Commands(), copyTny360Commands, () => h.core.ordering);
        return h;
      },
    );
    host.tnyPort = ready.tnyPort;
    return host;
  }

  protected override mirrored(stalled: boolean): void {
    this.#bodyLink = this.state.link;
    if (stalled) this.state.link = "lost";
  }

  // ---- reads (copies of the mirror; what the robot API's adapter reads) ------------------------

  snapshot(): Tny360Snapshot | null {
    return this.state.valid ? snapshotTny360State(this.state) : null;
  }
  stamp(): { readonly seq: number; readonly timestampMs: number; readonly epochMs: number; readonly link: Tny360Snapshot["link"] } | null {
    const s = this.state;
    return s.valid ? { seq: s.seq, timestampMs: s.timestampMs, epochMs: s.epochMs, link: s.link } : null;
  }

  // ---- typed commands: validated here, into the mailbox; or asked of the core ----------------

  setVelocity(leaseId: string, xMS: number, yMS: number, yawRadS: number, clearOverrides = true): Tny360CommandResult {
    const refused = this.#admit(leaseId, TNY_TYPED.setVelocity, TNY360_CHECKS.velocity(xMS, yMS, yawRadS, clearOverrides));
    if (refused) return refused;
    mergeVelocity(this.#outbox!.merged, xMS, yMS, yawRadS, clearOverrides);
    return this.#posted();
  }
  setPosture(leaseId: string, p: Tny360Posture, clearOverrides = true): Tny360CommandResult {
    const refused = this.#admit(leaseId, TNY_TYPED.setPosture, TNY360_CHECKS.posture(p, clearOverrides));
    if (refused) return refused;
    mergePosture(this.#outbox!.merged, p, clearOverrides);
    return this.#posted();
  }
  setEnabledMask(leaseId: string, mask: number): Tny360CommandResult {
    const refused = this.#admit(leaseId, TNY_TYPED.setEnabled, TNY360_CHECKS.enabledMask(mask));
    if (refused) return refused;
    mergeEnabledMask(this.#outbox!.merged, mask);
    return this.#posted();
  }
  setGait(leaseId: string, gait: number | GaitName): Tny360CommandResult {
    const g = typeof gait === "string" ? GaitType[gait] : gait;
    const refused = this.#admit(leaseId, TNY_TYPED.setGait, TNY360_CHECKS.gait(g));
    if (refused) return refused;
    mergeGait(this.#outbox!.merged, g);
    return this.#posted();
  }
  setJointAngle(leaseId: string, jointId: number, angleRad: number): Tny360CommandResult {
    const refused = this.#admit(leaseId, TNY_TYPED.setAngle, TNY360_CHECKS.jointAngle(jointId, angleRad));
    if (refused) return refused;
    mergeJointAngle(this.#outbox!.merged, jointId, angleRad);
    return this.#posted();
  }
  setJointAngles(leaseId: string, anglesRad: ArrayLike<number>): Tny360CommandResult {
    const refused = this.#admit(leaseId, TNY_TYPED.setJointAngles, TNY360_CHECKS.jointAngles(anglesRad));
    if (refused) return refused;
    mergeJointAngles(this.#outbox!.merged, anglesRad);
    return this.#posted();
  }
  /** Whether the leg reaches the foot depends on the core's posture: asked of the core (bounded by the request timeout). */
  setLegPosition(leaseId: string, legId: number, xM: number, yM: number, zM: number, clearOverrides = true): Promise<Tny360CommandResult> {
    return this.#refreshed(this.core.callOrdered("setLegPosition", this.core.timeoutMs, leaseId, legId, xM, yM, zM, clearOverrides));
  }
  /** The estimate is the body's (its joints' distances): asked of the core. */
  enableSmooth(leaseId: string): Promise<Tny360SmoothResult> {
    return this.#refreshed(this.core.callOrdered("enableSmooth", this.core.timeoutMs, leaseId));
  }
  disableSmooth(leaseId: string): Promise<Tny360SmoothResult> {
    return this.#refreshed(this.core.callOrdered("disableSmooth", this.core.timeoutMs, leaseId));
  }
  /** The physics world into a pose: the core's (its answer, and the state after it). */
  simReset(leaseId: string, pose: Tny360SimPose): Promise<SimResetResult> {
    return this.#refreshed(this.core.callOrdered("simReset", this.core.timeoutMs, leaseId, pose));
  }

  /**
   * An ordered request (its effect on the body comes before the commands posted after it: those
   * are held back until the core answered it), the mirror refreshed before it resolves.
   */
  async #refreshed<T>(answer: Promise<T>): Promise<T> {
    const r = await answer;
    this.refresh();
    return r;
  }

  /** TnyAdmissionContext: the core published "stopped". */
  get stopped(): boolean {
    return this.#bodyLink === "stopped";
  }
  /** TnyAdmissionContext: a real robot whose link the core reported lost. */
  get unavailable(): string | null {
    return this.source === "remote" && this.#bodyLink === "lost" ? `no link to the TNY-360 at ${this.transportName}` : null;
  }
  /** TnyAdmissionContext: the simulator answers by its limits (checked here); a real robot by its own. */
  get simLimits(): boolean {
    return this.source === "sim";
  }

  /**
   * The one admission (runtime/tny360-checks.ts: the lease, the values, the link, the simulator's
   * limits), counted in health's errors as the core's refusals are. Null: admitted, and the merge is
   * open under the generation read before the lease check (a holder that changes after it is caught
   * by the lease check or by the core): the caller merges its values, then `#posted()`.
   */
  #admit(leaseId: string, spec: TnySpec, check: TnyCheck): TnyRefusal | null {
    const generation = this.authority.generation();
    const denied = tnyAdmission(spec, leaseId, check, this);
    if (denied) {
      if (denied.counter) this.countHostError(denied.counter);
      return denied.refusal;
    }
    const out = this.#outbox!;
    if (out.taken) clearTny360Commands(out.merged); // a new merge
    openTny360Merge(out.merged, generation);
    return null;
  }

  /** The merge is written (or held back while an ordered request is on its way); answered at once. */
  #posted(): Tny360CommandResult {
    this.#outbox!.post();
    return this.source === "remote" ? FORWARDED : APPLIED;
  }

  /** Write the merge (held back while an ordered request is on its way: commands after it reach the core after it). */
  protected override commandsReleased(): void {
    this.#outbox!.release();
  }

  // ---- test hooks ----------------------------------------------------------------------------

  /** Test hook: run the simulator's own ticks for `ms` while the cycle is stopped (what the body does next). */
  simulatorTicks(ms: number): Promise<boolean> {
    return this.#refreshed(this.core.callOrdered("testTicks", this.core.timeoutMs, ms));
  }

  /** Test hook: the core clock's blocking waits so far (those that ran out, those the wake word ended), its gaps and those that yielded. */
  blockingWaits(): Promise<WakeCounts | null> {
    return this.core.call("testWakeCounts", this.core.timeoutMs);
  }
}
