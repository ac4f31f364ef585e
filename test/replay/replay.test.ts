/**
 * bodylink replay: a recording of the simulator, played back through the runtime and its LoLA
 * server, gives the recorded LoLA messages byte for byte to a LoLA client; the robot API serves
 * the recorded state.
 */
import { join } from "node:path";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { streamRecording } from "../../src/record/reader.js";
import { ReplayDriver } from "../../src/replay/driver.js";
import { SimClock } from "../../src/runtime/clock.js";
import { NaoRobot } from "../../src/runtime/nao-robot.js";
import { type LolaServer, startLolaServer } from "../../src/serve/lola/server.js";
import { buildApiServer } from "../../src/serve/api/build.js";
import { TestLolaClient, tmpSocketPath } from "../lola/client.js";
import { driveWithLola, recordedSim, tmpDir } from "../record/helpers.js";

let recording: string;
let recorded: Uint8Array[];
beforeAll(async () => {
  recording = join(tmpDir(), "sim.mcap");
  const s = await recordedSim(recording, {}, 11);
  await s.cycles(20);
  await driveWithLola(s, 20);
  await s.cycles(20);
  await s.close();
  recorded = [];
  for await (const m of streamRecording(recording)) if (m.topic === "/lola/sensor") recorded.push(m.data);
});

let lola: LolaServer | null = null;
let robot: NaoRobot | null = null;
afterEach(async () => {
  await lola?.close();
  await robot?.stop();
  lola = null;
  robot = null;
});

describe("bodylink replay", () => {
  it("sends the recorded LoLA messages byte for byte, one per cycle, and serves the recorded state on the API", async () => {
    const driver = await ReplayDriver.load(recording);
    expect(driver.steps.length).toBe(recorded.length);
    const clock = new SimClock();
    robot = await NaoRobot.create({ driver, clock });
    await robot.configure();
    // The server before the loop: its first cycle runs at once and its message must be seen.
    lola = await startLolaServer(robot, { path: tmpSocketPath(), log: () => {}, tap: { sensor: (b, n) => void driver.compare(b, n), command: () => {} } });
    const client = await TestLolaClient.connect(lola.path);
    await client.frame(); // the greeting (the state before any cycle)
    await robot.start();
    const got: Buffer[] = [];
    const app = buildApiServer(robot);
    let apiState: { seq: number; link: string } | null = null;
    got.push(await client.frame()); // cycle 1 ran in start()
    while (!driver.done) {
      await clock.advance(robot.periodMs); // the loop runs one cycle on the simulated clock
      got.push(await client.frame());
      if (driver.position === 30) apiState = (await app.inject({ method: "GET", url: "/v1/state" })).json();
    }
    await app.close();
    await client.close();
    expect(got.length).toBe(recorded.length);
    for (let i = 0; i < got.length; i++) expect(Buffer.from(recorded[i]!).equals(got[i]!), `message ${i + 1}`).toBe(true);
    expect(driver.compared).toBe(recorded.length);
    expect(driver.matches).toBe(recorded.length);
    expect(apiState?.link).toBe("ok");
    await driver.ended;
  });

  it("a recording without frames or messages is a clear error", async () => {
    await expect(ReplayDriver.load(join(tmpDir(), "nothing.mcap"))).rejects.toThrow(/cannot read/);
  });
});
