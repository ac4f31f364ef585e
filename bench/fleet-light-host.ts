/**
 * One process of light robots for the fleet bench's e-stop table: COUNT real fleet bridges
 * (src/fleet/bridge.ts: its e-stop connection, request gate, read pacing and flood shedding), each
 * over a light robot (a real Authority and its latch; no body and no cycle, so 50 of them fit the
 * 2-core VM beside a 90k/s flood). Per robot also a bare NATS responder on `bench.floor` that
 * answers at once, on a connection of its own: the same scatter-gather without bodylink, the floor
 * the e-stop is compared with. Prints "ready" once every robot joined.
 *
 *   node --import tsx bench/fleet-light-host.ts COUNT PREFIX NATS_URL
 */
import { connect } from "@nats-io/transport-node";
import { FleetBridge, type FleetRobot } from "../src/fleet/bridge.js";
import { type PublicKeyText, trustedKeys } from "../src/fleet/sign.js";
import { Authority } from "../src/runtime/authority.js";
import { MonotonicClock } from "../src/runtime/clock.js";
import type { RobotHealth } from "../src/runtime/robot.js";

const [countArg, prefix, url] = process.argv.slice(2);
/** The bench's operator key (BODYLINK_BENCH_OPERATOR, `ed25519:…`): the light robots obey its signed resets. */
const operator = process.env.BODYLINK_BENCH_OPERATOR as PublicKeyText | undefined;
const operators = trustedKeys(operator ? [{ name: "bench", key: operator }] : []);
const count = Number(countArg);
const clock = new MonotonicClock();
const P = { p50: 0, p99: 0, max: 0 };

/** A latch and an authority; health is a constant (no cycle runs). */
function lightRobot(): FleetRobot {
  const authority = new Authority(clock);
  const health: RobotHealth = {
    body: "nao",
    link: "ok",
    safety: "none",
    safetyReason: null,
    cycle: {
      cycles: 0,
      lateCycles: 0,
      lateCyclesOwnWork: 0,
      missedCycles: 0,
      windowCycles: 0,
      periodMs: P,
      execMs: P,
      latenessMs: P,
      jitterP99Ms: 0,
      gc: { collections: 0, ms: P },
      nominalPeriodMs: 12,
      core: { cpuMs: null, wakeups: null, spunMs: 0, gcCollections: 0, gcMaxMs: 0, gcByKind: {} },
    },
    errors: {},
    control: null,
    estop: authority.estop,
    sim: null,
  };
  return {
    kind: "nao",
    authority,
    health: () => ({ ...health, estop: authority.estop }),
    estop: (req) => {
      authority.engageEstop(req.category ?? 0, req.source, req.reason);
      return authority.estop;
    },
    resetEstop: (req) => {
      authority.resetEstop(req);
      return authority.estop;
    },
    estopState: () => authority.estop,
  };
}

const bridges: FleetBridge[] = [];
const floor = await connect({ servers: new URL(url!).host, name: `bench floor ${prefix}` });
for (let i = 0; i < count; i++) {
  const name = `${prefix}-${i}`;
  const b = new FleetBridge({ name, robot: lightRobot(), connect: { url: url! }, version: "bench", operators, insecure: true });
  b.start({ kind: "nao", jointNames: [], source: () => null, read: () => null, commands: [] }, { api: null, lola: null, tny: null });
  bridges.push(b);
  floor.subscribe("bench.floor", {
    callback: (_e, m) => {
      m.respond(name);
    },
  });
}
await Promise.all(bridges.map((b) => b.joined()));
await floor.flush();
console.log("ready");
process.stdin.on("data", (d) => {
  if (String(d).includes("quit")) void Promise.all([...bridges.map((b) => b.close()), floor.close()]).then(() => process.exit(0));
});
