/**
 * The AIRBOT P7's real-time core in its own worker thread (src/rt/core-worker.ts does the
 * threading; src/host/p7-host.ts is the other side): the arm's driver, its 4 ms cycle, the lease
 * rule, the e-stop and the commands (motion commands through the mailbox the host validated
 * them into, at the start of every cycle; clearError as a request). Dying, it halts every joint where it is (synchronous on the
 * simulated arm) before the host exits non-zero.
 */
import { RecordTap } from "../record/tap.js";
import { P7Robot } from "../runtime/p7-robot.js";
import { P7SimDriver, physicsP7Model } from "../drivers/p7/sim.js";
import { CTL } from "./core-shm.js";
import type { P7CoreOptions, P7Ready, P7Requests } from "./core-options.js";
import { coreClock, runCore } from "./core-worker.js";
import { p7StateChannel } from "../shm/p7-state.js";
import { ByteRing } from "../shm/ring.js";

import { copyP7Commands, P7Commands } from "../bodies/p7/commands.js";
import { P7_COMMAND_LAYOUT } from "../bodies/p7/layout.js";
import type { ShmViews } from "../shm/layout.js";
import { Mailbox } from "../shm/mailbox.js";

/** Recording: this thread is its ring's one producer (the state of every cycle, late cycles, the commands the arm took). */
let tap: RecordTap | null = null;

runCore<P7Robot, P7CoreOptions, P7Requests, P7Ready>({
  channel: (buffer, start, ctl) => {
    const ch = p7StateChannel(buffer, start, ctl, CTL.stateSeq);
    return { publish: (r) => ch.publish(r) };
  },
  create: async (o, wrap) => {
    const clock = coreClock(o);
    tap = o.recordRing ? new RecordTap(new ByteRing(o.recordRing), clock) : null;
    const t = tap;
    const model = o.sim === "physics" ? await physicsP7Model() : undefined;
    const r = await P7Robot.create({ seed: o.seed, youngGcEveryMs: o.gcEveryMs, clock, driver: wrap(new P7SimDriver({ seed: o.seed, ...(model ? { model } : {}) })) });
    // Every command the arm takes, whichever way it arrived, with the values it applied.
    if (t) r.onCommand((kind, targets, speeds, joint) => t.p7Command(r.loop.seq, kind, targets, speeds, joint));
    return r;
  },
  // The command mailbox (the host validated what is in it): the newest command at the start of each cycle.
  input(buffer, start) {
    const mailbox = new Mailbox(P7_COMMAND_LAYOUT, buffer, start);
    // Copied here first (made once: the cycle allocates nothing), taken only under its lease.
    const command = new P7Commands();
    const copy = (slot: ShmViews<typeof P7_COMMAND_LAYOUT>): void => copyP7Commands(slot, command);
    return (r) => {
      if (mailbox.take(copy) !== 0) r.applyValidated(command);
    };
  },
  handlers: {
    clearError: (r, leaseId, joint) => r.clearError(leaseId, joint ?? undefined),
    simReset: (r, leaseId, pose) => r.simReset(leaseId, pose),
    /** Test hook (a core started with testFaults): the simulated arm's link drops (true) or comes back (false). */
    testLinkLoss: (r, lost) => {
      if (lost) r.simulateLinkLoss();
      else r.restoreLink();
      return true;
    },
  },
  ready: () => ({}),
  afterCycle: (r, seq) => {
    if (!tap) return;
    tap.p7State(seq, r);
    tap.lateCycles(seq, r.loop.timing.lateCycles);
  },
  transport: (r) => r.driver.name,
  link: (r) => r.link,
  safeNow: (r) => {
    r.haltNow();
    return true;
  },
  safeLater: (r) => r.driver.deactivate(),
  diedDetail: (r, confirmed) => (confirmed && r.driver.atRest ? "every joint of the arm was halted where it is" : "the arm's halt could not be confirmed"),
});
