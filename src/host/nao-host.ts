/**
 * The main thread's side of the NAO's threaded core (src/rt/nao-worker.ts): the surface the API's
 * NAO adapter and routes use (state, prefs, boards, command, smooth motions, e-stop, health,
 * onCycle, authority), so `startApiServer` serves it like a NaoRobot. What crosses, and how:
 * core-host.ts.
 */
import type { CommandProblem, NaoCommandUpdate } from "../bodies/nao/commands.js";
import type { NaoPreferences } from "../bodies/nao/prefs.js";
import { NaoState } from "../bodies/nao/state.js";
import { BODIES } from "../bodies/registry.js";
import type { BodylinkError } from "../errors.js";
import type { NaoCoreOptions } from "../rt/core-options.js";
import { CTL } from "../rt/core-shm.js";
import { NAO_STATE_BYTES, NaoStateChannel } from "../shm/nao-state.js";
import type { BoardReport } from "../transport/chestboard-link.js";
import { CoreHost, type CoreHostOptions } from "./core-host.js";

export type NaoHostOptions = NaoCoreOptions & CoreHostOptions;

type Refusal = { ok: false; error: BodylinkError };

export class NaoHost extends CoreHost {
  readonly kind = "nao" as const;
  /** The newest state the core published (refreshed before every cycle listener runs, and after every command). */
  readonly state = new NaoState();
  prefs: NaoPreferences | null = null;
  /** Why the body link never has preferences (an upstream LoLA), or null. */
  prefsUnavailable: string | null = null;
  /** With an upstream LoLA: whether it was connected when the core became ready (null otherwise). */
  upstreamConnected: boolean | null = null;
  boards: readonly BoardReport[] = [];
  lolaPath: string | null = null;

  /** Start the core in its worker; resolves once it is configured, cycling and (with `lola`) serving LoLA. */
  static async start(opts: NaoHostOptions): Promise<NaoHost> {
    const { requestTimeoutMs, stallAfterMs, ...core } = opts;
    const hostOpts = { ...(requestTimeoutMs !== undefined ? { requestTimeoutMs } : {}), ...(stallAfterMs !== undefined ? { stallAfterMs } : {}) };
    const { host, ready } = await CoreHost.boot<NaoHost>(
      {
        entry: "nao-worker",
        stateBytes: NAO_STATE_BYTES,
        options: core,
        channel: (buffer, start, ctl) => {
          const ch = new NaoStateChannel(buffer, start, ctl, CTL.stateSeq);
          return { readInto: (h) => ch.readInto(h.state) };
        },
      },
      (worker, buffer, channel) => new NaoHost(BODIES.nao.periodMs, worker, buffer, channel, hostOpts),
    );
    host.prefs = ready.prefs as NaoPreferences | null;
    host.prefsUnavailable = (ready.prefsUnavailable as string | null) ?? null;
    host.upstreamConnected = (ready.upstreamConnected as boolean | null) ?? null;
    host.boards = ready.boards as BoardReport[];
    host.lolaPath = ready.lolaPath as string | null;
    return host;
  }

  protected override mirrored(stalled: boolean): void {
    if (stalled) this.state.link = "lost";
  }

  command(leaseId: string, update: NaoCommandUpdate): { ok: true; problems: CommandProblem[] } | Refusal {
    return this.ask("command", leaseId, plainUpdate(update));
  }
  smoothEnable(leaseId: string): { ok: true; estimatedS: number } | Refusal {
    return this.ask("smoothEnable", leaseId);
  }
  smoothDisable(leaseId: string): { ok: true; estimatedS: number } | Refusal {
    return this.ask("smoothDisable", leaseId);
  }
  get motionActive(): boolean {
    return this.core.call("motionActive");
  }
}

/** Typed arrays and plain arrays cross as they are; anything else in an update is dropped here (the core validates). */
function plainUpdate(u: NaoCommandUpdate): NaoCommandUpdate {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(u)) out[k] = ArrayBuffer.isView(v) ? v : Array.isArray(v) ? v : Array.from(v as ArrayLike<number>);
  return out as NaoCommandUpdate;
}
