/**
 * The main thread's side of the NAO's threaded core (src/rt/nao-worker.ts): a NaoBody (state,
 * prefs, boards, command, smooth motions, e-stop, health, onCycle, authority; checked by the
 * compiler), so `startApiServer` serves it as it serves a NaoRobot. It never waits for its core
 * (no request blocks this thread): leases, smooth motions, reset and health are promises bounded by the request
 * timeout; reads come from shared memory; joint/LED/sonar commands are validated here and posted
 * to the core's command mailbox (src/shm/mailbox.ts), which the core reads at the start of every
 * cycle. What crosses, and how: core-host.ts, src/rt/core-shm.ts.
 */
import type { SimResetResult } from "../runtime/robot.js";
import type { NaoSimPose } from "../bodies/nao/sim-world.js";
import { applyCommandUpdate, type CommandProblem, LED_GROUP_NAMES, NaoCommands, type NaoCommandUpdate } from "../bodies/nao/commands.js";
import { NAO_COMMAND_KEY, NAO_COMMAND_LAYOUT } from "../bodies/nao/layout.js";
import type { NaoPreferences } from "../bodies/nao/prefs.js";
import { NaoState } from "../bodies/nao/state.js";
import { BODIES } from "../bodies/registry.js";
import { leaseError } from "../runtime/authority.js";
import type { NaoBody, NaoRefusal } from "../runtime/nao-body.js";
import { Mailbox, mailboxBytes } from "../shm/mailbox.js";
import type { ShmViews } from "../shm/layout.js";
import type { NaoCoreOptions, NaoReady, NaoRequests } from "../rt/core-options.js";
import { CTL } from "../rt/core-shm.js";
import { NAO_STATE_BYTES, NaoStateChannel } from "../shm/nao-state.js";
import type { BoardReport } from "../transport/chestboard-link.js";
import { CommandOutbox } from "./command-outbox.js";
import { CoreHost, type CoreHostOptions, HostAuthority, splitHostOptions } from "./core-host.js";

export type NaoHostOptions = NaoCoreOptions & CoreHostOptions;

/** The NAO core's body region: its command mailbox. */
export const NAO_MAILBOX_BYTES = mailboxBytes(NAO_COMMAND_LAYOUT);

/** The NAO's merged commands: the values, the keys present, the lease generation they were validated under. */
interface NaoMerge {
  readonly out: NaoCommands;
  mask: number;
  generation: number;
}

function copyNaoMerge(m: NaoMerge, slot: ShmViews<typeof NAO_COMMAND_LAYOUT>): void {
  slot.header[0] = m.mask;
  slot.header[1] = m.generation;
  slot.Position.set(m.out.position);
  slot.Stiffness.set(m.out.stiffness);
  for (const g of LED_GROUP_NAMES) slot[g].set(m.out.leds[g]);
  slot.Sonar.set(m.out.sonar);
}

export class NaoHost extends CoreHost<NaoRequests> implements NaoBody {
  readonly kind = "nao" as const;
  readonly authority = new HostAuthority(this.control);
  /** Commands merged since the core last took one (so no key is lost when two come within a cycle), and their writes. */
  #outbox: CommandOutbox<typeof NAO_COMMAND_LAYOUT, NaoMerge> | null = null;
  /** The mirror `state` returns (copied on demand: CoreHost.sync). */
  readonly #state = new NaoState();
  /**
   * The newest state the core published, copied when read (one Atomics.load when the core has not
   * published since); within one synchronous stretch the first copy holds (CoreHost.sync). Nothing
   * on this thread follows the core per cycle unless a cycle listener asks for it.
   */
  get state(): NaoState {
    this.sync();
    return this.#state;
  }
  protected override get onDemand(): boolean {
    return true;
  }
  prefs: NaoPreferences | null = null;
  /** Why the body link never has preferences (an upstream LoLA), or null. */
  prefsUnavailable: string | null = null;
  /** With an upstream LoLA: whether it was connected when the core became ready (null otherwise). */
  upstreamConnected: boolean | null = null;
  boards: readonly BoardReport[] = [];
  lolaPath: string | null = null;

  /** Start the core in its worker; resolves once it is configured, cycling and (with `lola`) serving LoLA. */
  static async start(opts: NaoHostOptions): Promise<NaoHost> {
    const { core, host: hostOpts } = splitHostOptions(opts);
    const { host, ready } = await CoreHost.boot<NaoHost, NaoReady>(
      {
        entry: "nao-worker",
        stateBytes: NAO_STATE_BYTES,
        // SCHED_FIFO where allowed (core-worker.ts says what it measured); the mailbox is the body region.
        options: { fifoPriority: 20, ...core, bodyBytes: NAO_MAILBOX_BYTES },
        channel: (buffer, start, ctl) => {
          const ch = new NaoStateChannel(buffer, start, ctl, CTL.stateSeq);
          return { readInto: (h) => ch.readInto(h.#state) };
        },
      },
      (worker, buffer, channel, regions) => {
        const h = new NaoHost(BODIES.nao.periodMs, worker, buffer, channel, hostOpts);
        h.#outbox = new CommandOutbox(new Mailbox(NAO_COMMAND_LAYOUT, buffer, regions.bodyStart), { out: new NaoCommands(), mask: 0, generation: -1 }, copyNaoMerge, () => h.core.ordering);
        return h;
      },
    );
    host.prefs = ready.prefs;
    host.prefsUnavailable = ready.prefsUnavailable;
    host.upstreamConnected = ready.upstreamConnected;
    host.boards = ready.boards;
    host.lolaPath = ready.lolaPath;
    return host;
  }

  protected override mirrored(stalled: boolean): void {
    if (stalled) this.#state.link = "lost";
  }

  /**
   * Validate (the lease from the mirror; lengths, NaN/Infinity, limits: applyCommandUpdate) and post
   * the keys that passed to the core's mailbox under the lease's generation. Answers at once, never
   * waits: the core applies it at its next cycle, or drops it (errors.staleCommands) if control
   * changed hands meanwhile.
   */
  command(leaseId: string, update: NaoCommandUpdate): { ok: true; problems: CommandProblem[] } | NaoRefusal {
    // The generation first: a holder that changes after it is caught by the lease check or by the core.
    const generation = this.authority.generation();
    const refused = leaseError(this.authority, leaseId);
    if (refused) return { ok: false, error: refused };
    const box = this.#outbox!;
    const m = box.merged;
    // The core took the last write (and nothing is held back), or the lease changed: start a new merge.
    if (box.taken || generation !== m.generation) m.mask = 0;
    m.generation = generation;
    const problems = applyCommandUpdate(m.out, update);
    const bad = new Set(problems.map((p) => p.key));
    let mask = 0;
    for (const k of Object.keys(NAO_COMMAND_KEY) as Array<keyof typeof NAO_COMMAND_KEY>) if (update[k] !== undefined && !bad.has(k)) mask |= NAO_COMMAND_KEY[k];
    if (mask === 0) return { ok: true, problems };
    m.mask |= mask;
    box.post();
    return { ok: true, problems };
  }

  /** Write the merge (held back while a smooth motion request is on its way: a command after it must reach the core after it). */
  protected override commandsReleased(): void {
    this.#outbox!.release();
  }
  smoothEnable(leaseId: string): Promise<{ ok: true; estimatedS: number } | NaoRefusal> {
    return this.core.callOrdered("smoothEnable", this.core.timeoutMs, leaseId);
  }
  smoothDisable(leaseId: string): Promise<{ ok: true; estimatedS: number } | NaoRefusal> {
    return this.core.callOrdered("smoothDisable", this.core.timeoutMs, leaseId);
  }
  simReset(leaseId: string, pose: NaoSimPose): Promise<SimResetResult> {
    return this.core.callOrdered("simReset", this.core.timeoutMs, leaseId, pose);
  }
}
