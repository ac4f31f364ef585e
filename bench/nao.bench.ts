/**
 * NAO cycle cost, as `NaoRobot.cycle` runs it: arbitrate, encode the command frame in place, run
 * the exchange state machine, decode the answer into the state.
 *
 * - "full cycle": against the simulated chest board (which also decodes the frame, steps its
 *   physics and encodes an answer, as the hardware would).
 * - "runtime only": against a transport replaying a recorded answer, i.e. the runtime's own work.
 * Baselines in the same run: the simulator's physics step alone, and one CRC-32 over 300 bytes.
 * Targets: under 20 µs per full cycle, zero bytes allocated per cycle after warm-up.
 */
import { SimClock } from "../src/runtime/clock.js";
import { NaoRobot } from "../src/runtime/nao-robot.js";
import { ReplayChestboard } from "../src/transport/replay.js";
import { FrameIndex, indexFrame } from "../src/wire/chestboard/frame.js";
import { crc32 } from "../src/wire/crc32.js";
import { bytesPerCall, fmt, median, timeIt } from "./util.js";

async function commandedRobot(clock: SimClock): Promise<NaoRobot> {
  const robot = await NaoRobot.create({ clock });
  await robot.configure();
  const lease = robot.authority.acquire("bench", "cli", 60_000);
  if (!lease.ok) throw new Error("no lease");
  robot.command(lease.lease.id, { Stiffness: new Array(25).fill(0.8), Position: new Array(25).fill(0.1) });
  return robot;
}

export async function run(): Promise<void> {
  const clock = new SimClock();
  const robot = await commandedRobot(clock);
  const replayed = await commandedRobot(clock);
  // Record one real answer from the simulator and replay it to the second runtime forever.
  replayed.cycle(0);
  const idx = new FrameIndex();
  let length = 0;
  for (let n = 16; n <= 512 && !length; n++) if (indexFrame(replayed.link.answer, n, idx) > 0) length = n;
  // NOTE: bench-only swap of the link's transport (readonly in the type) after the handshake.
  Object.defineProperty(replayed.link, "transport", { value: new ReplayChestboard([replayed.link.answer.slice(0, length)]) });

  let t = 0;
  const full = () => {
    t += 12;
    clock.set(t);
    robot.cycle(t);
  };
  const own = () => {
    t += 12;
    clock.set(t);
    replayed.cycle(t);
  };
  const body = robot.sim!.body;
  const physics = () => body.step(0.012);
  const answer = robot.link.answer;
  const crc = () => crc32(answer, 0, 300);

  const ns: Record<string, number[]> = { full: [], own: [], physics: [], crc: [] };
  for (let i = 0; i < 5; i++) {
    ns.full!.push(timeIt(full, 200));
    ns.own!.push(timeIt(own, 200));
    ns.physics!.push(timeIt(physics, 200));
    ns.crc!.push(timeIt(crc, 200));
  }
  const [f, o, p, c] = [median(ns.full!), median(ns.own!), median(ns.physics!), median(ns.crc!)];
  const allocFull = bytesPerCall(full);
  const allocOwn = bytesPerCall(own);
  const ok = robot.state.link === "ok" && replayed.state.link === "ok" && replayed.state.badFrames === 0;
  console.log(`answer frame ${length} bytes; interleaved medians of 5 rounds`);
  console.log(`full cycle (runtime + simulated chest board) : ${fmt(f / 1000)} µs   target < 20 µs: ${f < 20_000 ? "PASS" : "FAIL"}`);
  console.log(`runtime only (replayed answers)             : ${fmt(o / 1000)} µs   ${fmt(f / o, 1)}× faster than the full cycle`);
  console.log(`  baseline: simulator physics step alone     : ${fmt(p / 1000)} µs   full cycle / physics = ${fmt(f / p, 1)}×`);
  console.log(`  baseline: one CRC-32 over 300 bytes        : ${fmt(c / 1000)} µs   runtime only / CRC = ${fmt(o / c, 1)}×`);
  console.log(`bytes allocated per full cycle               : ${fmt(allocFull)}   target 0 (< 1, the measuring floor): ${allocFull < 1 ? "PASS" : "FAIL"}`);
  console.log(`bytes allocated per runtime-only cycle       : ${fmt(allocOwn)}   target 0: ${allocOwn < 1 ? "PASS" : "FAIL"}`);
  console.log(`links healthy after the run                  : ${ok ? "yes" : "NO"}`);
}
