/**
 * A local stop under a 90k/s request flood on the broker (issue 25, "Done means": "a local
 * `bodylink estop` within 200 ms"): a NAO `serve --fleet` on a real nats-server, a flood client in
 * its own process sending 90,000 `cmd.health` requests a second at it, and in the middle of it a
 * stop through the local e-stop socket, as `bodylink estop` sends it first. Measured: the socket's
 * round trip, and the runtime's own latch time (`since_ms` of GET /v1/estop against the moment the
 * stop was sent). A quiet stop in the same run is the baseline.
 */
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { afterEach, describe, expect, it } from "vitest";
import { subject } from "../../src/fleet/subjects.js";
import { requestEstopSocket } from "../../src/serve/estop-socket.js";
import { hasNats, NATS_SKIP, type NatsServer, startNats } from "../support/nats.js";
import { type ServeRig, startServe } from "../rt/serve-rig.js";
import { until } from "../lola/client.js";

const FLOOD = new URL("../support/nats-flood.mjs", import.meta.url).pathname;
const LOCAL_BOUND_MS = 200;
/** The flood's length: the stop goes in 1.5 s into it, and is checked to have been answered before it ended. */
const FLOOD_MS = 3000;

let nats: NatsServer | null = null;
let rig: ServeRig | null = null;
afterEach(async () => {
  await rig?.close();
  await nats?.close();
  rig = null;
  nats = null;
});

/** One stop through the socket, then reset through the API: its round trip and the runtime's latch time, ms. */
async function localStop(r: ServeRig, path: string, reason: string): Promise<{ roundTripMs: number; latchMs: number }> {
  const sentAt = Date.now();
  const t0 = performance.now();
  const reply = await requestEstopSocket(path, { op: "estop", reason, source: "test" });
  const roundTripMs = performance.now() - t0;
  expect(reply).toMatchObject({ ok: true, estop: { latched: true, reason } });
  const e = (await (await fetch(`${r.apiUrl}/v1/estop`)).json()) as { since_ms: number; reason: string };
  expect(e.reason).toBe(reason);
  const reset = await fetch(`${r.apiUrl}/v1/estop/reset`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ reason: "area clear" }) });
  expect(reset.status).toBe(200);
  return { roundTripMs, latchMs: e.since_ms - sentAt };
}

describe.skipIf(!hasNats)("a local stop under a 90k/s broker flood", () => {
  it("latches within 200 ms through the local socket", async () => {
    nats = await startNats();
    rig = await startServe(["--name", "nao-flooded", "--fleet", nats.url, "--fleet-insecure"]); // an open loopback broker: the fleet is only what the flood reaches
    const path = /local e-stop: (\S+)/.exec(rig.stdout())![1]!;
    const r = rig;
    await until(() => r.stderr().includes(`fleet: joined ${nats!.url} as nao-flooded`), "the runtime to join", 30_000); // the flood reaches it
    const quiet = await localStop(r, path, "quiet stop");
    const flood = spawn(process.execPath, [FLOOD, nats.url, subject.cmd("nao-flooded", "health"), "90000", String(FLOOD_MS)], { stdio: ["ignore", "pipe", "inherit"] });
    const lines = createInterface({ input: flood.stdout! });
    let result = "";
    const started = new Promise<void>((res) =>
      lines.on("line", (l) => {
        if (l === "flooding") res();
        else if (l.startsWith("{")) result = l;
      }),
    );
    const ended = new Promise((res) => flood.once("exit", res));
    await started;
    await new Promise((res) => setTimeout(res, 1500)); // the flood at full rate
    const flooded = await localStop(r, path, "flood stop");
    expect(result, "the flood still running when the stop was answered").toBe(""); // its line comes at its end
    await ended;
    const f = JSON.parse(result) as { rate: number };
    console.log(
      `local stop: quiet ${quiet.roundTripMs.toFixed(1)} ms round trip (latched after ${quiet.latchMs.toFixed(1)} ms); under ${Math.round(f.rate)} requests/s: ${flooded.roundTripMs.toFixed(1)} ms (latched after ${flooded.latchMs.toFixed(1)} ms)`,
    );
    expect(f.rate).toBeGreaterThan(0.8 * 90_000);
    expect(flooded.roundTripMs).toBeLessThan(LOCAL_BOUND_MS);
    expect(flooded.latchMs).toBeLessThan(LOCAL_BOUND_MS);
  }, 90_000);
});

if (!hasNats) describe("local stop under a flood", () => it.skip(NATS_SKIP, () => undefined));
