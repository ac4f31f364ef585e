/**
 * The main thread's side of the P7's threaded core (src/rt/p7-worker.ts): the surface the robot
 * API's P7 adapter uses (state, link, moveJoints, servoJoints, clearError, e-stop, health,
 * onCycle, authority), each command answered by the core. See core-host.ts for what crosses how.
 */
import type { LinkStatus } from "../bodies/link.js";
import { P7State } from "../bodies/p7/state.js";
import { BODIES } from "../bodies/registry.js";
import type { P7ClearAccepted, P7CommandResult, P7MoveAccepted, P7MoveOptions } from "../runtime/p7-robot.js";
import type { P7CoreOptions } from "../rt/core-options.js";
import { CTL } from "../rt/core-shm.js";
import { P7_STATE_BYTES, p7StateChannel } from "../shm/p7-state.js";
import { CoreHost, type CoreHostOptions, SyncHostAuthority, splitHostOptions } from "./core-host.js";

export type P7HostOptions = Omit<P7CoreOptions, "gcEveryMs"> & Partial<Pick<P7CoreOptions, "gcEveryMs">> & CoreHostOptions;

export class P7Host extends CoreHost {
  /** Leases and the latch, read from shared memory; changes still wait for the core (reply buffer). */
  readonly authority = new SyncHostAuthority(this.control);
  readonly kind = "p7" as const;
  /** The newest state the core published (refreshed before every cycle listener runs, and after every command). */
  readonly state = new P7State();
  /** The arm's link as the core last published it ("lost" while the core is stalled). */
  link: LinkStatus = "starting";

  /** Start the P7 core in its worker; resolves once it is cycling. */
  static async start(opts: P7HostOptions): Promise<P7Host> {
    const { core, host: hostOpts } = splitHostOptions(opts);
    const { host } = await CoreHost.boot<P7Host>(
      {
        entry: "p7-worker",
        stateBytes: P7_STATE_BYTES,
        options: { gcEveryMs: 100, ...core },
        channel: (buffer, start, ctl) => {
          const ch = p7StateChannel(buffer, start, ctl, CTL.stateSeq);
          return { readInto: (h) => ch.readInto(h) };
        },
      },
      (worker, buffer, channel) => new P7Host(BODIES.p7.periodMs, worker, buffer, channel, hostOpts),
    );
    return host;
  }

  protected override mirrored(stalled: boolean): void {
    if (stalled) this.link = "lost";
  }

  moveJoints(leaseId: string, targetsRad: ArrayLike<number>, opts: P7MoveOptions = {}): P7CommandResult<P7MoveAccepted> {
    const speed = opts.speedRadS;
    return this.ask("moveJoints", leaseId, Array.from(targetsRad), speed === undefined ? {} : { speedRadS: typeof speed === "number" ? speed : Array.from(speed) });
  }

  servoJoints(leaseId: string, targetsRad: ArrayLike<number>): P7CommandResult {
    return this.ask("servoJoints", leaseId, Array.from(targetsRad));
  }

  clearError(leaseId: string, joint?: number): P7CommandResult<P7ClearAccepted> {
    return this.ask("clearError", leaseId, joint ?? null);
  }
}
