/**
 * The AIRBOT P7's real-time core in its own worker thread (src/rt/core-worker.ts does the
 * threading; src/host/p7-host.ts is the other side): the arm's driver, its 4 ms cycle, the lease
 * rule, the e-stop and the commands. Dying, it halts every joint where it is (synchronous on the
 * simulated arm) before the host exits non-zero.
 */
import { RecordTap } from "../record/tap.js";
import { MonotonicClock, WORKER_WAKE_DEFAULT } from "../runtime/clock.js";
import { P7Robot } from "../runtime/p7-robot.js";
import { P7SimDriver } from "../drivers/p7/sim.js";
import { CTL } from "./core-shm.js";
import type { P7CoreOptions } from "./core-options.js";
import { runCore } from "./core-worker.js";
import { p7StateChannel } from "../shm/p7-state.js";
import { ByteRing } from "../shm/ring.js";

/** Recording: this thread is its ring's one producer (the state of every cycle, late cycles). */
let tap: RecordTap | null = null;

runCore<P7Robot, P7CoreOptions>({
  channel: (buffer, start, ctl) => {
    const ch = p7StateChannel(buffer, start, ctl, CTL.stateSeq);
    return { publish: (r) => ch.publish(r) };
  },
  create: (o, wrap) => {
    const clock = new MonotonicClock({ wake: o.wake ?? WORKER_WAKE_DEFAULT });
    tap = o.recordRing ? new RecordTap(new ByteRing(o.recordRing), clock) : null;
    return P7Robot.create({ seed: o.seed, youngGcEveryMs: o.gcEveryMs, clock, driver: wrap(new P7SimDriver({ seed: o.seed })) });
  },
  handlers: {
    moveJoints: (r, leaseId: string, targetsRad: number[], opts: { speedRadS?: number | number[] }) => r.moveJoints(leaseId, targetsRad, opts),
    servoJoints: (r, leaseId: string, targetsRad: number[]) => r.servoJoints(leaseId, targetsRad),
    clearError: (r, leaseId: string, joint?: number) => r.clearError(leaseId, joint ?? undefined),
  },
  afterCycle: (r, seq) => {
    if (!tap) return;
    tap.p7State(seq, r);
    tap.lateCycles(seq, r.loop.timing.lateCycles);
  },
  transport: (r) => r.driver.name,
  safeNow: (r) => {
    r.driver.halt();
    return true;
  },
  safeLater: (r) => r.driver.deactivate(),
  diedDetail: (r, confirmed) => (confirmed && r.driver.atRest ? "every joint of the arm was halted where it is" : "the arm's halt could not be confirmed"),
});
