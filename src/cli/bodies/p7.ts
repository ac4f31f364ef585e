/**
 * The AIRBOT P7's serve entry: the simulated arm's core in its worker (src/rt/p7-worker.ts), or,
 * with `--lockstep`, on this thread on a lockstep clock that the robot API's POST /v1/sim/step moves.
 */
import { physicsP7Model } from "../../drivers/p7/sim.js";
import { P7Host } from "../../host/p7-host.js";
import { LockstepClock } from "../../runtime/lockstep.js";
import { P7_PERIOD_MS, P7Robot } from "../../runtime/p7-robot.js";
import { type BodyEntry, coreOptions, type EntryContext, type StartedBody } from "./entry.js";

export const P7_ENTRY: BodyEntry = {
  flagWarnings: () => [], // serve's own flags only: a simulated arm
  async start(ctx) {
    const { o, recordRing, estopSocket } = ctx;
    if (o.lockstep) return startLockstep(ctx);
    const h = await P7Host.start({ ...coreOptions(o), estopSocket, ...(o.sim ? { sim: o.sim } : {}), ...(recordRing ? { recordRing } : {}) });
    return {
      robot: h,
      host: h,
      inThreadRobot: null,
      transport: "sim",
      lolaPath: null,
      tnyUrl: null,
      lines: [`p7: simulated AIRBOT P7 arm (7 joints, 250 Hz), ${mechanics(o)}; real-time core in its own thread`],
      closers: [() => h.shutdown()],
    };
  },
};

/** What the simulated arm's mechanics are (docs/simulation.md). */
function mechanics(o: EntryContext["o"]): string {
  return o.sim === "physics" ? "MuJoCo physics (models/p7.xml)" : "kinematic (the arm is where its trajectory says)";
}

/** `--lockstep`: the simulated arm on this thread, one 4 ms cycle per step a robot API client asks for. */
async function startLockstep({ o, tap: tapOn }: EntryContext): Promise<StartedBody> {
  const clock = new LockstepClock(P7_PERIOD_MS);
  const tap = tapOn(clock);
  const r = await P7Robot.create({ clock, seed: o.seed, youngGcEveryMs: o.gcEveryMs ?? 100, ...(o.sim === "physics" ? { simModel: await physicsP7Model() } : {}) });
  if (tap) {
    r.onCycle((seq) => {
      tap.p7State(seq, r);
      tap.lateCycles(seq, r.loop.timing.lateCycles);
    });
  }
  await r.start();
  return {
    robot: r,
    host: null,
    inThreadRobot: r,
    lockstep: clock,
    transport: "sim",
    lolaPath: null,
    tnyUrl: null,
    lines: [`p7: simulated AIRBOT P7 arm (7 joints, 250 Hz), ${mechanics(o)}; lockstep: one ${P7_PERIOD_MS} ms cycle per step (POST /v1/sim/step), on this thread`],
    closers: [() => r.stop()],
  };
}
