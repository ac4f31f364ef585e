/**
 * Recording: files written by the recorder are read back with the MCAP library's own readers
 * (McapIndexedReader, McapStreamReader), never with our writer's code.
 */
import { copyFileSync, readFileSync, statSync, truncateSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { McapIndexedReader, McapStreamReader } from "@mcap/core";
import { afterEach, describe, expect, it } from "vitest";
import { PREFS_ATTACHMENT } from "../../src/record/channels.js";
import { DECOMPRESS_HANDLERS, FileReadable, loadZstd } from "../../src/record/mcap-io.js";
import { formatRecordingInfo, readRecordingInfo } from "../../src/record/reader.js";
import { splitPath } from "../../src/record/recorder.js";
import { LOLA_SENSOR_MESSAGE_BYTES } from "../../src/wire/lola/constants.js";
import { decodePreferenceBlock } from "../../src/wire/chestboard/prefs.js";
import { checkMcapFileStrict, loadStrictZstd } from "../support/mcap-strict.js";
import { type RecordedSim, driveWithLola, recordedSim, tmpDir } from "./helpers.js";

let sim: RecordedSim | null = null;
afterEach(async () => {
  await sim?.close();
  sim = null;
});

async function indexed(path: string) {
  await loadZstd();
  const readable = await FileReadable.open(path);
  const reader = await McapIndexedReader.Initialize({ readable, decompressHandlers: DECOMPRESS_HANDLERS });
  return { reader, close: () => readable.close() };
}

function counts(reader: McapIndexedReader): Map<string, number> {
  const out = new Map<string, number>();
  for (const c of reader.channelsById.values()) out.set(c.topic, Number(reader.statistics?.channelMessageCounts.get(c.id) ?? 0n));
  return out;
}

describe("bodylink record: the MCAP file", () => {
  it("has one channel per stream with schemas, and a message per cycle on the per-cycle channels", async () => {
    const path = join(tmpDir(), "run.mcap");
    sim = await recordedSim(path);
    await sim.cycles(40);
    const sent = await driveWithLola(sim, 10);
    sim.robot.estop({ source: "test", reason: "recorded e-stop" });
    await sim.cycles(5);
    sim.robot.resetEstop({ source: "test", reason: "done" });
    await sim.cycles(5);
    await sim.close();
    sim = null;

    // Driven by a LoLA client: strict MCAP, in log-time order (strict-mcap.test.ts: the idle runs).
    await loadStrictZstd();
    expect(checkMcapFileStrict(path, { requireLogTimeOrder: true }).problems).toEqual([]);
    const { reader, close } = await indexed(path);
    try {
      expect(reader.header.profile).toBe("bodylink");
      const topics = [...reader.channelsById.values()].map((c) => c.topic).sort();
      expect(topics).toEqual(
        [
          "/api/state",
          "/events",
          "/log",
          "/lola/command",
          "/lola/sensor",
          "/lola/upstream/command",
          "/lola/upstream/sensor",
          "/nao/chestboard/in",
          "/nao/chestboard/out",
          "/nao/chestboard/transfer",
          "/nao/scene",
          "/nao/state",
          "/nao/tf",
        ].sort(),
      );
      // JSON channels declare a JSON Schema; raw ones none.
      for (const c of reader.channelsById.values()) {
        if (c.messageEncoding === "json") {
          const s = reader.schemasById.get(c.schemaId)!;
          expect(s.encoding).toBe("jsonschema");
          expect(JSON.parse(new TextDecoder().decode(s.data)).type).toBe("object");
        } else {
          expect(c.schemaId).toBe(0);
        }
      }
      const n = counts(reader);
      // 60 cycles (plus the last one at stop): a LoLA message and a decoded state each.
      expect(n.get("/lola/sensor")).toBeGreaterThanOrEqual(60);
      expect(n.get("/nao/state")).toBe(n.get("/lola/sensor"));
      // Every command frame answered, the preference reads and the handshake included.
      expect(n.get("/nao/chestboard/out")).toBe(n.get("/nao/chestboard/in"));
      expect(n.get("/nao/chestboard/out")!).toBeGreaterThan(60 + 145);
      expect(n.get("/nao/chestboard/transfer")).toBe(n.get("/nao/chestboard/out")); // one ack per frame

      // The LoLA client's bytes, as received, in order.
      const got: number[] = [];
      const sensors: Uint8Array[] = [];
      const events: Array<{ type: string }> = [];
      const logs: Array<{ name: string; level: number; message: string }> = [];
      for await (const m of reader.readMessages()) {
        const topic = reader.channelsById.get(m.channelId)!.topic;
        if (topic === "/lola/command") got.push(...m.data);
        if (topic === "/lola/sensor") sensors.push(m.data);
        if (topic === "/events") events.push(JSON.parse(new TextDecoder().decode(m.data)));
        if (topic === "/log") logs.push(JSON.parse(new TextDecoder().decode(m.data)));
        if (topic === "/nao/state") expect(JSON.parse(new TextDecoder().decode(m.data)).position).toHaveLength(25);
      }
      expect(got).toEqual(sent.flatMap((b) => [...b]));
      expect(sensors.every((s) => s.length === LOLA_SENSOR_MESSAGE_BYTES)).toBe(true);
      const types = new Set(events.map((e) => e.type));
      for (const t of ["recording_started", "handshake", "lease_acquired", "lease_released", "safety", "estop", "estop_reset", "recording_stopped"]) expect(types).toContain(t);
      expect(JSON.stringify(events.find((e) => e.type === "estop"))).toMatch(/by test: recorded e-stop/);
      // The same events as foxglove.Log lines (the viewers' Log panel): an e-stop is an ERROR.
      expect(logs.map((l) => l.name)).toEqual(events.map((e) => e.type));
      expect(logs.find((l) => l.name === "estop")).toMatchObject({ level: 4, message: expect.stringMatching(/by test: recorded e-stop/) });
      expect(logs.find((l) => l.name === "recording_started")?.level).toBe(2);

      // The preference block rides along, so the file can be verified on its own.
      const atts = [];
      for await (const a of reader.readAttachments()) atts.push(a);
      expect(atts.map((a) => a.name)).toEqual([PREFS_ATTACHMENT]);
      expect(decodePreferenceBlock(atts[0]!.data).ok).toBe(true);
    } finally {
      await close();
    }
    const info = await readRecordingInfo(path);
    expect(info.complete).toBe(true);
    expect(info.messages).toBeGreaterThan(300);
    expect(info.compression).toEqual(["zstd"]);
    expect(formatRecordingInfo(info).join("\n")).toMatch(/complete: summary and footer present/);
  });

  it("a cut file (killed recorder) is readable up to its last chunk, and --info says it was cut short", async () => {
    const dir = tmpDir();
    const path = join(dir, "full.mcap");
    sim = await recordedSim(path, { chunkBytes: 16 * 1024 });
    await sim.cycles(120);
    await sim.close();
    sim = null;
    const full = await readRecordingInfo(path);
    const size = statSync(path).size;
    for (const frac of [0.3, 0.6, 0.9]) {
      const cut = join(dir, `cut-${frac}.mcap`);
      copyFileSync(path, cut);
      truncateSync(cut, Math.floor(size * frac));
      const info = await readRecordingInfo(cut);
      expect(info.complete).toBe(false);
      expect(info.readableUpToByte!).toBeLessThanOrEqual(Math.floor(size * frac));
      expect(info.messages).toBeGreaterThan(0);
      if (frac < 0.7) expect(info.messages).toBeLessThan(full.messages);
      else expect(info.messages).toBeLessThanOrEqual(full.messages); // may cut in the summary only
      expect(formatRecordingInfo(info)[1]).toMatch(/^CUT SHORT/);
      // The library's stream reader agrees: it reads the same messages and is not done.
      const r = new McapStreamReader({ decompressHandlers: DECOMPRESS_HANDLERS });
      r.append(readFileSync(cut));
      let n = 0;
      for (let rec = r.nextRecord(); rec; rec = r.nextRecord()) if (rec.type === "Message") n++;
      expect(n).toBe(info.messages);
      expect(r.done()).toBe(false);
    }
    // Not MCAP at all: a clear error.
    const junk = join(dir, "junk.mcap");
    writeFileSync(junk, "hello, not a recording");
    await expect(readRecordingInfo(junk)).rejects.toThrow(/cannot read .*junk\.mcap/);
  });

  it("--split-mb starts new files, each complete and verifiable alone (metadata and preferences in each)", async () => {
    const path = join(tmpDir(), "split.mcap");
    sim = await recordedSim(path, { splitMb: 0.05, chunkBytes: 8 * 1024 });
    await sim.cycles(150);
    await sim.close();
    const files = sim.recorder.files;
    sim = null;
    expect(files.length).toBeGreaterThanOrEqual(3);
    expect(files[0]).toBe(splitPath(path, 1));
    let total = 0;
    await loadStrictZstd();
    for (const [i, f] of files.entries()) {
      expect(checkMcapFileStrict(f, { requireLogTimeOrder: true }).problems).toEqual([]);
      const { reader, close } = await indexed(f);
      try {
        const atts = [];
        for await (const a of reader.readAttachments()) atts.push(a.name);
        expect(atts).toEqual([PREFS_ATTACHMENT]);
        const meta = [];
        for await (const m of reader.readMetadata()) meta.push(m);
        expect(meta[0]!.metadata.get("part")).toBe(String(i + 1));
        total += Number(reader.statistics!.messageCount);
      } finally {
        await close();
      }
    }
    expect(total).toBeGreaterThan(150 * 5);
  });

  it("a write error (a full disk: /dev/full) stops the recording with one line; the runtime goes on", async () => {
    let stopped: string | null | undefined;
    sim = await recordedSim("/dev/full", { chunkBytes: 4 * 1024, onStop: (r) => (stopped = r) });
    const seq0 = sim.robot.state.seq;
    await sim.cycles(30);
    await new Promise((r) => setTimeout(r, 50)); // the failed write's callback
    await sim.cycles(5);
    expect(stopped).toMatch(/cannot write \/dev\/full: .*ENOSPC/);
    expect(sim.logs).toHaveLength(1);
    expect(sim.logs[0]).toMatch(/^bodylink: recording stopped: cannot write \/dev\/full: .*; the runtime goes on .*\[BL_ERR_RECORD_WRITE\]$/);
    expect(sim.robot.state.seq).toBe(seq0 + 35);
    expect(sim.recorder.progress().stopped).toBe(true);
  });

  it("a file that cannot be created is a clear error before anything runs", async () => {
    await expect(recordedSim(join(tmpDir(), "no-such-dir", "x.mcap"))).rejects.toThrow(/cannot create the recording .*x\.mcap/);
  });
});

describe("bodylink lola-dump", () => {
  it("records every LoLA message exactly as a client receives it, with its time", async () => {
    const { LolaDump } = await import("../../src/record/lola-dump.js");
    const { until } = await import("../lola/client.js");
    const path = join(tmpDir(), "dump.mcap");
    sim = await recordedSim(join(tmpDir(), "rec.mcap"));
    await sim.cycles(5);
    const dump = await LolaDump.start({ path, lolaPath: sim.lola.path, log: () => {} });
    await until(() => dump.messages >= 1, "the greeting message");
    for (let i = 0; i < 20; i++) {
      await sim.cycles(1);
      await until(() => dump.messages >= i + 2, `message ${i + 2}`);
    }
    await dump.stop();
    const { reader, close } = await indexed(path);
    try {
      expect([...reader.channelsById.values()].map((c) => c.topic)).toEqual(["/lola/upstream/sensor"]);
      const got: Uint8Array[] = [];
      for await (const m of reader.readMessages()) got.push(m.data);
      expect(got).toHaveLength(21);
      expect(got.every((g) => g.length === LOLA_SENSOR_MESSAGE_BYTES)).toBe(true);
      // The last 20 are the server's per-cycle messages, as its tap recorded them.
      const sent: Uint8Array[] = [];
      await sim.recorder.flush();
      await sim.close();
      const rec = sim.recorder.files[0]!;
      sim = null;
      const { streamRecording } = await import("../../src/record/reader.js");
      for await (const m of streamRecording(rec)) if (m.topic === "/lola/sensor") sent.push(m.data);
      expect(got.slice(1).map((g) => Buffer.from(g).toString("hex"))).toEqual(sent.slice(5, 25).map((g) => Buffer.from(g).toString("hex")));
    } finally {
      await close();
    }
  });
});
