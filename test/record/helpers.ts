/** A recorded simulated NAO on a SimClock, for the recording, verify and replay tests. */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { McapIndexedReader } from "@mcap/core";
import { pack } from "msgpackr";
import { SimClock } from "../../src/runtime/clock.js";
import { NaoRobot } from "../../src/runtime/nao-robot.js";
import { DECOMPRESS_HANDLERS, FileReadable, loadZstd } from "../../src/record/mcap-io.js";
import { RECORD_RING_BYTES, Recorder, type RecorderOptions } from "../../src/record/recorder.js";
import { RecordTap, TappedChestboard } from "../../src/record/tap.js";
import { type LolaServer, startLolaServer } from "../../src/serve/lola/server.js";
import { ByteRing } from "../../src/shm/ring.js";
import { TestLolaClient, tmpSocketPath, until } from "../lola/client.js";

/** Every message of a finished MCAP recording, by topic, in log order. */
export async function messagesByTopic(file: string): Promise<Map<string, Buffer[]>> {
  await loadZstd();
  const readable = await FileReadable.open(file);
  try {
    const reader = await McapIndexedReader.Initialize({ readable, decompressHandlers: DECOMPRESS_HANDLERS });
    const topicOf = new Map([...reader.channelsById.values()].map((ch) => [ch.id, ch.topic]));
    const byTopic = new Map<string, Buffer[]>();
    for await (const m of reader.readMessages()) {
      const t = topicOf.get(m.channelId)!;
      if (!byTopic.has(t)) byTopic.set(t, []);
      byTopic.get(t)!.push(Buffer.from(m.data));
    }
    return byTopic;
  } finally {
    await readable.close();
  }
}

export function tmpDir(): string {
  return mkdtempSync(join(tmpdir(), "bl-rec-"));
}

export interface RecordedSim {
  clock: SimClock;
  robot: NaoRobot;
  tap: RecordTap;
  recorder: Recorder;
  lola: LolaServer;
  logs: string[];
  /** Run `n` cycles (simulated time), then let the recorder drain. */
  cycles(n: number): Promise<void>;
  close(): Promise<void>;
}

export async function recordedSim(path: string, opts: Partial<RecorderOptions> = {}, seed = 7): Promise<RecordedSim> {
  const clock = new SimClock(1_796_000_000_000);
  const tap = new RecordTap(ByteRing.create(RECORD_RING_BYTES), clock);
  const robot = await NaoRobot.create({ clock, seed, wrapTransport: (t) => new TappedChestboard(t, tap) });
  await robot.configure();
  const lola = await startLolaServer(robot, { path: tmpSocketPath(), tap: tap.lola, log: () => {} });
  const logs: string[] = [];
  const recorder = await Recorder.start({ tap, robot, transport: "sim" }, { path, log: (l) => logs.push(l), ...opts });
  return {
    clock,
    robot,
    tap,
    recorder,
    lola,
    logs,
    async cycles(n: number) {
      for (let i = 0; i < n; i++) {
        await clock.advance(robot.periodMs);
        robot.loop.step();
      }
      await recorder.flush();
    },
    async close() {
      await lola.close();
      await recorder.stop();
      await robot.stop();
    },
  };
}

/** A LoLA command moving every joint a little, with stiffness 0.5 (plain MessagePack, as clients send). */
export function lolaCommand(k: number): Uint8Array {
  return pack({ Position: Array.from({ length: 25 }, (_, i) => 0.01 * ((i + k) % 5)), Stiffness: Array.from({ length: 25 }, () => 0.5) });
}

/** Connect a LoLA client and let it command for `n` cycles (each command answered by one cycle). */
export async function driveWithLola(sim: RecordedSim, n: number): Promise<Uint8Array[]> {
  const client = await TestLolaClient.connect(sim.lola.path);
  const sent: Uint8Array[] = [];
  await client.frame();
  for (let i = 0; i < n; i++) {
    const c = lolaCommand(i);
    sent.push(c);
    await client.send(c);
    await until(() => (sim.lola.clients()[0]?.commands ?? 0) === i + 1, "the server to read the command");
    await sim.cycles(1);
    client.discard();
  }
  await client.close();
  await until(() => sim.lola.clients().length === 0, "the client to be gone");
  return sent;
}
