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
import { BODIES } from "../bodies/registry.js";
import { snapshotTny360State, type Tny360Snapshot, Tny360State, } from "../bodies/tny360/state.js";
import type { Tny360CoreOptions, Tny360Ready, Tny360Requests } from "../rt/core-options.js";
import { CTL } from "../rt/core-shm.js";
import type { Tny360Body, Tny360CommandResult, Tny360Posture, Tny360SmoothResult } from "../runtime/tny360-robot.js";
import { TNY_TYPED, type TnyRefusal, type TnySpec, tnyBodyRefusal, tnyDecoded, tnyLeaseRefusal, tnyLinkRefusal, tnySimLimitStatus } from "../runtime/tny360-checks.js";
import { copyTny360Commands, Tny360Commands } from "../bodies/tny360/commands.js";
import { TNY360_ALL_JOINTS, TNY360_COMMAND_FLAG, TNY360_COMMAND_HEADER, TNY360_COMMAND_KEY, TNY360_COMMAND_LAYOUT } from "../bodies/tny360/layout.js";
import type { LinkStatus } from "../bodies/link.js";
import { Mailbox, mailboxBytes } from "../shm/mailbox.js";
import { TNY360_STATE_BYTES, tny360StateChannel } from "../shm/tny360-state.js";
import { type GaitName, GaitType, Status, } from "../wire/tny/constants.js";
import type { Worker } from "node:worker_threads";
import { CoreHost, type CoreHostOptions, HostAuthority, type StateReader, splitHostOptions } from "./core-host.js";

export type Tny360HostOptions = Omit<Tny360CoreOptions, "gcEveryMs"> & Partial<Pick<Tny360CoreOptions, "gcEveryMs">> & CoreHostOptions;

/** The TNY-360 core's body region: its command mailbox. */
export const TNY360_MAILBOX_BYTES = mailboxBytes(TNY360_COMMAND_LAYOUT);

const H = TNY360_COMMAND_HEADER;
const KEY = TNY360_COMMAND_KEY;

/** A real robot is polled at up to 50 Hz: its cycle is 20 ms (the simulator's is the registry's 5 ms). */
const REMOTE_PERIOD_MS = 20;

export class Tny360Host extends CoreHost<Tny360Requests> implements Tny360Body {
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
  #mailbox: Mailbox<typeof TNY360_COMMAND_LAYOUT> | null = null;
  /** Commands merged since the core last took one (so none is lost when several come within a cycle). */
  readonly #out = new Tny360Commands();
  #outGeneration = -1;
  #lastWrite = 0;
  /** Merged commands not written yet (held back while a request that must come first is on its way). */
  #dirty = false;

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
        h.#mailbox = new Mailbox(TNY360_COMMAND_LAYOUT, buffer, regions.bodyStart);
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
    return this.#post(leaseId, TNY_TYPED.setVelocity, [xMS, yMS, yawRadS, clearOverrides], (o, a) => {
      o.velocity[0] = a[0] as number;
      o.velocity[1] = a[1] as number;
      o.velocity[2] = a[2] as number;
      return this.#clearing(KEY.velocity, TNY360_COMMAND_FLAG.velocityClearsOverrides, a[3] === true);
    });
  }
  setPosture(leaseId: string, p: Tny360Posture, clearOverrides = true): Tny360CommandResult {
    return this.#post(leaseId, TNY_TYPED.setPosture, [p.xM, p.yM, p.zM, p.rxRad, p.ryRad, p.rzRad, clearOverrides], (o, a) => {
      for (let i = 0; i < 6; i++) o.posture[i] = a[i] as number;
      return this.#clearing(KEY.posture, TNY360_COMMAND_FLAG.postureClearsOverrides, a[6] === true);
    });
  }
  setEnabledMask(leaseId: string, mask: number): Tny360CommandResult {
    return this.#post(leaseId, TNY_TYPED.setEnabled, [mask], (o, a) => {
      o.enabledMask[0] = a[0] as number;
      return KEY.enabledMask;
    });
  }
  setGait(leaseId: string, gait: number | GaitName): Tny360CommandResult {
    return this.#post(leaseId, TNY_TYPED.setGait, [typeof gait === "string" ? GaitType[gait] : gait], (o, a) => {
      o.gait[0] = a[0] as number;
      return KEY.gait;
    });
  }
  setJointAngle(leaseId: string, jointId: number, angleRad: number): Tny360CommandResult {
    return this.#post(leaseId, TNY_TYPED.setAngle, [jointId, angleRad], (o, a) => {
      const id = a[0] as number;
      o.jointRad[id] = a[1] as number;
      o.header[H.joints]! |= 1 << id;
      return KEY.joints;
    });
  }
  setJointAngles(leaseId: string, anglesRad: ArrayLike<number>): Tny360CommandResult {
    return this.#post(leaseId, TNY_TYPED.setJointAngles, [anglesRad], (o, a) => {
      o.jointRad.set(a[0] as ArrayLike<number>);
      o.header[H.joints] = TNY360_ALL_JOINTS;
      return KEY.joints;
    });
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

  /**
   * An ordered request (its effect on the body comes before the commands posted after it: those
   * are held back until the core answered it), the mirror refreshed before it resolves.
   */
  async #refreshed<T>(answer: Promise<T>): Promise<T> {
    const r = await answer;
    this.refresh();
    return r;
  }

  /**
   * The in-thread robot's checks, in its order and with its answers (tny360-checks.ts): the lease,
   * the arguments through the wire's codec, the link, the simulator's limits (a real robot answers
   * its own). Refusals count in health's errors as the core's do.
   */
  #check(leaseId: string, spec: TnySpec, args: readonly unknown[]): { readonly ok: true; readonly args: unknown[] } | TnyRefusal {
    const lease = tnyLeaseRefusal(this.authority, leaseId);
    if (lease) {
      this.countHostError("refusedCommands");
      return lease;
    }
    const decoded = tnyDecoded(spec, args);
    if (!decoded.ok) {
      this.countHostError("invalidCommands");
      return decoded;
    }
    const down = tnyLinkRefusal(this.#bodyLink === "stopped", this.source === "remote" && this.#bodyLink === "lost" ? `no link to the TNY-360 at ${this.transportName}` : null);
    if (down) return down;
    if (this.source === "sim") {
      const status = tnySimLimitStatus(spec, decoded.args);
      if (status !== Status.Ok) {
        this.countHostError("invalidCommands");
        return tnyBodyRefusal(spec, status);
      }
    }
    return decoded;
  }

  /**
   * Validate, merge into the commands the core has not taken yet (`fill` writes the decoded
   * arguments and returns the key), and write the merge into the mailbox under the generation read
   * before the lease check. Answers at once: the core applies it at its next cycle, or drops it
   * (errors.staleCommands) if control changed hands meanwhile.
   */
  #post(leaseId: string, spec: TnySpec, args: readonly unknown[], fill: (out: Tny360Commands, decoded: readonly unknown[]) => number): Tny360CommandResult {
    // The generation first: a holder that changes after it is caught by the lease check or by the core.
    const generation = this.authority.generation();
    const checked = this.#check(leaseId, spec, args);
    if (!checked.ok) return checked;
    const out = this.#out;
    // The core took the last write (and nothing is held back), or the lease changed: a new merge.
    if ((!this.#dirty && this.#mailbox!.taken === this.#lastWrite) || generation !== this.#outGeneration) out.header.fill(0);
    this.#outGeneration = generation;
    out.header[H.generation] = generation;
    out.header[H.keys]! |= fill(out, checked.args);
    this.#dirty = true;
    if (!this.core.ordering) this.commandsReleased();
    return { ok: true, forwarded: this.source === "remote" };
  }

  /** A velocity or posture: `flag` says whether it clears the joint overrides, which then drops the ones merged before it. */
  #clearing(key: number, flag: number, clears: boolean): number {
    const h = this.#out.header;
    if (clears) {
      h[H.flags]! |= flag;
      h[H.keys]! &= ~KEY.joints;
      h[H.joints] = 0;
    }
    return key;
  }

  /** Write the merge (held back while an ordered request is on its way: commands after it reach the core after it). */
  protected override commandsReleased(): void {
    if (!this.#dirty) return;
    const out = this.#out;
    this.#lastWrite = this.#mailbox!.write((slot) => copyTny360Commands(out, slot));
    this.#dirty = false;
  }

  // ---- test hooks ----------------------------------------------------------------------------

  /** Test hook: run the simulator's own ticks for `ms` while the cycle is stopped (what the body does next). */
  simulatorTicks(ms: number): Promise<boolean> {
    return this.#refreshed(this.core.callOrdered("testTicks", this.core.timeoutMs, ms));
  }
}
