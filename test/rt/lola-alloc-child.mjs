// test/rt/core-alloc.test.ts's child: a NaoRobot on simulated time with the LoLA server, from dist/
// (compiled, as a core runs), where each cycle runs as soon as the client's command for the last
// one arrived (the authority's watcher sees its renewal; a microtask steps the loop): no timer, no
// wake-up, nothing else runs in this process, so what it allocates per cycle is exactly what the
// LoLA path and the cycle allocate. Prints one JSON line per measurement window.
import { SimClock } from "../../dist/runtime/clock.js";
import { NaoRobot } from "../../dist/runtime/nao-robot.js";
import { measureAllocation, sampleAllocationSites } from "../../dist/runtime/allocation.js";
import { startLolaServer } from "../../dist/serve/lola/server.js";

const [path, windows, cycles] = [process.argv[2], Number(process.argv[3]), Number(process.argv[4])];
const clock = new SimClock();
const robot = await NaoRobot.create({ clock });
await robot.configure();
const server = await startLolaServer(robot, { path, log: () => {} });
const t = new Float64Array(1);
const step = () => {
  t[0] += 12;
  clock.set(t[0]);
  robot.loop.step();
};
let stepping = false;
// A reaction on a settled promise (~80 B), not queueMicrotask (Node wraps each in an AsyncResource: ~250 B).
const settled = Promise.resolve();
robot.authority.watch(() => {
  if (stepping) void settled.then(step);
});
process.stdout.write("ready\n");
// the client connects and answers; start stepping once it has control
await new Promise((resolve) => {
  const poll = setInterval(() => {
    if (robot.authority.holder()) {
      clearInterval(poll);
      resolve();
    }
  }, 10);
});
stepping = true;
step();
const onCycle = (l) => robot.onCycle(l);
await measureAllocation(onCycle, 3000); // warm-up: V8 optimizes the hot paths
for (let w = 0; w < windows; w++) {
  const s = await measureAllocation(onCycle, cycles);
  process.stdout.write(`${JSON.stringify(s)}\n`);
}
// BODYLINK_ALLOC_SITES=1: also where it allocates (stderr), for whoever changes this path
if (process.env.BODYLINK_ALLOC_SITES) {
  const r = await sampleAllocationSites(onCycle, 4000, 32, 25);
  for (const x of r.sites) process.stderr.write(`${(x.bytes / 4000).toFixed(1).padStart(8)} B/cycle  ${x.site}\n`);
}
stepping = false;
await server.close();
process.exit(0);
