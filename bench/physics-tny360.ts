/**
 * `npm run bench -- physics`, the TNY-360's part: one whole Tny360Robot cycle (the firmware's 5 ms
 * tick with its body underneath) on a SimClock, the MuJoCo body against the kinematic one in the
 * same run, while the robot walks at 0.1 m/s (its trot: contacts come and go). Each cycle timed:
 * wall and CPU (getrusage) µs p50/p99, the budget used of the 5 ms cycle, and the cycles run back
 * to back as simulated over wall time (what `--lockstep` can reach at most, before HTTP).
 */
import { SimClock } from "../src/runtime/clock.js";
import { Tny360Robot } from "../src/runtime/tny360-robot.js";
import { tny360PhysicsModel } from "../src/drivers/tny360/driver.js";
import type { SimKind } from "../src/bodies/sim-world.js";
import { type CycleCost, cycleCost, reportCycleCost } from "./util.js";

const CYCLE_MS = 5;

async function tnyStepCost(kind: SimKind, cycles: number): Promise<CycleCost> {
  const clock = new SimClock();
  const robot = await Tny360Robot.create({ clock, seed: 1, ...(kind === "physics" ? { simModel: await tny360PhysicsModel() } : {}) });
  const lease = robot.authority.acquire("bench", "cli", 3_600_000);
  if (!lease.ok) throw new Error("no lease");
  const id = lease.lease.id;
  let t = 0;
  const run = (n: number, each?: (i: number) => void) => {
    for (let i = 0; i < n; i++) {
      t += CYCLE_MS;
      clock.set(t);
      each?.(i);
      robot.loop.step();
    }
  };
  robot.loop.step();
  robot.enableSmooth(id);
  run(800); // stand up (4 s)
  const walk = (i: number) => {
    if (i % 20 === 0) robot.setVelocity(id, 0.1, 0, 0); // renewed every 100 ms
  };
  run(400, walk); // warm up the JIT on the trot
  return cycleCost(
    cycles,
    CYCLE_MS,
    (i) => {
      t += CYCLE_MS;
      clock.set(t);
      walk(i);
    },
    () => robot.loop.step(),
  );
}

/** Section 4 of the physics bench: the TNY-360, physics against kinematic. */
export async function tny360Section(quick: boolean): Promise<void> {
  const cycles = quick ? 1000 : 5000;
  console.log(`4. TNY-360: Tny360Robot cycle (the 5 ms firmware tick) walking at 0.1 m/s, ${cycles} cycles each (µs)`);
  const kin = await tnyStepCost("kinematic", cycles);
  const phy = await tnyStepCost("physics", cycles);
  reportCycleCost(kin, phy, CYCLE_MS);
}
