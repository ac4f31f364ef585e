/**
 * One process of simulated robots for the fleet bench: `startRuntime` (the code path of
 * `bodylink serve`) K times in one process, each its own body, cycle, robot API and fleet seat.
 * Reads commands on stdin ("mark": start a CPU window; "cpu": print the window's CPU ms), prints
 * "ready" when every robot has joined.
 *
 *   node --import tsx bench/fleet-host.ts COUNT PREFIX NATS_URL|none [FLEET_DIR]
 *
 * FLEET_DIR: a `fleet init` directory holding each robot's bundle (FLEET_DIR/NAME).
 */
import { createInterface } from "node:readline";
import { type RunningRuntime, startRuntime } from "../src/cli/serve.js";
import { SIM_RUNTIME_OPTIONS } from "../test/support/sim-runtime.js";

const [countArg, prefix, url, fleetDir] = process.argv.slice(2);
const count = Number(countArg);
const rts: RunningRuntime[] = [];
for (let i = 0; i < count; i++) {
  const rt = await startRuntime({
    ...SIM_RUNTIME_OPTIONS,
    body: "nao",
    name: `${prefix}-${i}`,
    seed: i + 1,
    tny: false,
    ...(url && url !== "none" ? { fleet: url, ...(fleetDir ? { fleetDir: `${fleetDir}/${prefix}-${i}` } : {}) } : {}),
    quiet: true,
  });
  rts.push(rt);
}
await Promise.all(rts.map((r) => r.fleet?.joined()));
let mark = process.cpuUsage();
console.log("ready");
createInterface({ input: process.stdin }).on("line", async (l) => {
  if (l === "mark") {
    mark = process.cpuUsage();
    console.log("marked");
  } else if (l === "cpu") {
    const d = process.cpuUsage(mark);
    const late = (await Promise.all(rts.map((r) => r.robot.health()))).reduce((n, h) => n + h.cycle.lateCycles, 0);
    console.log(JSON.stringify({ cpuMs: (d.user + d.system) / 1000, late }));
  } else if (l === "quit") {
    void Promise.all(rts.map((r) => r.close())).then(() => process.exit(0));
  }
});
