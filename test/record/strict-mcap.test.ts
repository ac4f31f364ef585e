/**
 * MCAP to the letter: the strict checker (test/support/mcap-strict.ts) finds what `mcap doctor`
 * finds, the writer bodylink uses (src/record/mcap-writer.ts) passes it for any channels and
 * messages, and every body's recording made with no client at all (channels that never get a
 * message) passes it with its messages in log-time order. Driven recordings are checked where they
 * are made (record.test.ts for the NAO with a LoLA client, bodies.test.ts for the P7 and TNY-360).
 * The idle recordings run on both bodies (vitest.config.ts's `physics` project): a physics body's
 * recording carries its world (`sim` in the states, /<body>/tf rooted at `world`, the ground in the
 * scene) and is strict MCAP all the same.
 */
import { join } from "node:path";
import { McapIndexedReader, McapWriter, TempBuffer } from "@mcap/core";
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { startRuntime } from "../../src/cli/serve.js";
import { CHANNELS } from "../../src/record/channels.js";
import { LogTimeOrder } from "../../src/record/log-time-order.js";
import { DECOMPRESS_HANDLERS, compressZstd, loadZstd } from "../../src/record/mcap-io.js";
import { StrictMcapWriter } from "../../src/record/mcap-writer.js";
import { checkMcapFileStrict, checkMcapStrict, loadStrictZstd } from "../support/mcap-strict.js";
import { useRuntimeDir } from "../support/runtime-dir.js";
import { SIM_RUNTIME_OPTIONS } from "../support/sim-runtime.js";
import { TEST_SIM } from "../support/test-sim.js";
import { officialProblems } from "../support/foxglove-official.js";
import { singleTypeProblems } from "../support/single-type.js";
import { Compile } from "typebox/compile";

const dir = useRuntimeDir("bl-rec-strict-");
beforeAll(async () => {
  await loadZstd();
  await loadStrictZstd();
});

const te = new TextEncoder();

interface Plan {
  channels: number;
  /** [channel index, log time] per message, file order */
  messages: Array<[number, number]>;
  chunkSize: number;
  compress: boolean;
}

async function writeStrict(plan: Plan): Promise<Uint8Array> {
  const out = new TempBuffer();
  const w = new StrictMcapWriter({ writable: out, chunkSize: plan.chunkSize, ...(plan.compress ? { compressChunk: compressZstd } : {}) });
  await w.start({ profile: "test", library: "strict" });
  const schema = await w.registerSchema({ name: "t.S", encoding: "jsonschema", data: te.encode('{"type":"object","properties":{"i":{"type":"integer"}}}') });
  const ids: number[] = [];
  for (let c = 0; c < plan.channels; c++) ids.push(await w.registerChannel({ topic: `/c${c}`, messageEncoding: "json", schemaId: c % 2 ? schema : 0, metadata: new Map([["n", String(c)]]) }));
  await w.addMetadata({ name: "m", metadata: new Map([["k", "v"]]) });
  let seq = 0;
  for (const [c, t] of plan.messages) {
    await w.addMessage({ channelId: ids[c]!, sequence: ++seq, logTime: BigInt(t), publishTime: BigInt(t), data: te.encode(`{"i":${seq}}`) });
    if (seq === 3) await w.addAttachment({ name: "a.bin", mediaType: "application/octet-stream", logTime: 1n, createTime: 2n, data: new Uint8Array([1, 2, 3]) });
  }
  await w.end();
  return out.get();
}

describe("the strict MCAP checker", () => {
  it("finds @mcap/core 2.2.2's channel that got no message: only in the summary (the reason bodylink has its own writer)", async () => {
    const out = new TempBuffer();
    const w = new McapWriter({ writable: out });
    await w.start({ profile: "", library: "" });
    const used = await w.registerChannel({ topic: "/used", messageEncoding: "json", schemaId: 0, metadata: new Map() });
    await w.registerChannel({ topic: "/silent", messageEncoding: "json", schemaId: 0, metadata: new Map() });
    await w.addMessage({ channelId: used, sequence: 1, logTime: 1n, publishTime: 1n, data: te.encode("{}") });
    await w.end();
    const r = checkMcapStrict(out.get());
    expect(r.problems.join("\n")).toMatch(/channel 1 \(\/silent\) is only in the summary, not in the data section/);
  });

  it("passes the writer's file, and finds each kind of damage in it", async () => {
    const file = await writeStrict({
      channels: 3,
      messages: [
        [0, 10],
        [1, 20],
        [0, 20],
        [2, 30],
        [1, 40],
      ],
      chunkSize: 40,
      compress: true,
    });
    const ok = checkMcapStrict(file, { requireLogTimeOrder: true });
    expect(ok.problems).toEqual([]);
    expect(ok.messages).toHaveLength(5);
    expect(ok.chunks).toBeGreaterThan(1);
    expect([...ok.channels.values()].map((c) => c.topic)).toEqual(["/c0", "/c1", "/c2"]);

    const damaged = (at: number): string => {
      const b = file.slice();
      b[at] = b[at]! ^ 0x01;
      return checkMcapStrict(b).problems.join("\n");
    };
    expect(damaged(file.length - 8 - 4)).toMatch(/summary CRC/); // the footer's summary_crc
    expect(damaged(file.length - 1)).toMatch(/no MCAP magic at the end/);
    expect(damaged(0)).toMatch(/no MCAP magic at the start/);
    // A byte of the first chunk's compressed records: zstd refuses it, or the chunk CRC, or the data section CRC finds it.
    const firstChunk = findOpcode(file, 0x06);
    expect(damaged(firstChunk + 9 + 8 + 8 + 8 + 4 + 4 + 4 + 8 + 2)).toMatch(/CRC|unreadable|zstd|Unknown frame|corrupt/i);
    expect(damaged(findOpcode(file, 0x0b) + 9)).toMatch(/Statistics messageCount|summary CRC/);
  });

  it("counts messages written back in log time, and with requireLogTimeOrder calls them problems", async () => {
    const file = await writeStrict({
      channels: 1,
      messages: [
        [0, 10],
        [0, 5],
        [0, 20],
      ],
      chunkSize: 1 << 20,
      compress: false,
    });
    expect(checkMcapStrict(file).logTimeStepsBack).toBe(1);
    expect(checkMcapStrict(file).problems).toEqual([]);
    expect(checkMcapStrict(file, { requireLogTimeOrder: true }).problems.join("\n")).toMatch(/log time goes back: 5 after 10/);
  });
});

/** Byte offset of the first top-level record with this opcode (walks the records from the header). */
function findOpcode(file: Uint8Array, op: number): number {
  const v = new DataView(file.buffer, file.byteOffset);
  let o = 8;
  while (o < file.length - 8) {
    if (v.getUint8(o) === op) return o;
    o += 9 + Number(v.getBigUint64(o + 1, true));
  }
  throw new Error(`no record 0x${op.toString(16)}`);
}

describe("StrictMcapWriter", () => {
  it("any channels (some silent), messages and chunk sizes: strict, and @mcap/core's indexed reader reads back every message", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 5 }),
        fc.array(fc.tuple(fc.nat(4), fc.nat(1000)), { maxLength: 60 }),
        fc.integer({ min: 1, max: 600 }),
        fc.boolean(),
        async (channels, raw, chunkSize, compress) => {
          let t = 0;
          const messages: Array<[number, number]> = [];
          for (const [c, dt] of raw) {
            t += dt;
            if (c < channels) messages.push([c, t]);
          }
          const file = await writeStrict({ channels, messages, chunkSize, compress });
          const r = checkMcapStrict(file, { requireLogTimeOrder: true });
          expect(r.problems).toEqual([]);
          expect(r.channels.size).toBe(channels); // the silent ones too, in the data section
          const reader = await McapIndexedReader.Initialize({ readable: bufferReadable(file), decompressHandlers: DECOMPRESS_HANDLERS });
          const back: Array<[number, number]> = [];
          for await (const m of reader.readMessages({ validateCrcs: true })) back.push([m.channelId, Number(m.logTime)]);
          expect(back.map(([, x]) => x)).toEqual(messages.map(([, x]) => x));
          expect(reader.channelsById.size).toBe(channels);
        },
      ),
      { numRuns: 60 },
    );
  });
});

function bufferReadable(b: Uint8Array) {
  return { size: async () => BigInt(b.length), read: async (offset: bigint, size: bigint) => b.subarray(Number(offset), Number(offset + size)) };
}

describe("LogTimeOrder", () => {
  it("hands messages out in log-time order when none is later than the window; ties keep their arrival order", () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.nat(1000), fc.integer({ min: 0, max: 50 })), { maxLength: 200 }), (steps) => {
        const o = new LogTimeOrder<{ logTime: bigint; n: number }>(50n);
        const out: Array<{ logTime: bigint; n: number }> = [];
        let clock = 0;
        steps.forEach(([dt, lag], n) => {
          clock += dt;
          o.push({ logTime: BigInt(Math.max(0, clock - lag)), n }); // at most the window late
          for (let m = o.shift(); m; m = o.shift()) out.push(m);
        });
        for (let m = o.shift(true); m; m = o.shift(true)) out.push(m);
        expect(out).toHaveLength(steps.length);
        for (let i = 1; i < out.length; i++) {
          const a = out[i - 1]!;
          const b = out[i]!;
          expect(a.logTime < b.logTime || (a.logTime === b.logTime && a.n < b.n)).toBe(true);
        }
        expect(o.late).toBe(0);
      }),
    );
  });

  it("a message later than the window is still handed out (out of order) and counted", () => {
    const o = new LogTimeOrder<{ logTime: bigint }>(10n);
    o.push({ logTime: 100n });
    o.push({ logTime: 200n });
    expect(o.shift()?.logTime).toBe(100n);
    expect(o.shift()).toBeUndefined(); // 200 waits for the window
    o.push({ logTime: 50n });
    expect(o.late).toBe(1);
    expect(o.shift()?.logTime).toBe(50n);
    expect(o.shift(true)?.logTime).toBe(200n);
    expect(o.size).toBe(0);
  });
});

describe.each(["nao", "p7", "tny360"] as const)(`serve --body %s --sim ${TEST_SIM} --record, no client at all`, (body) => {
  it("every channel and schema in the data section before use, summary duplicates, CRCs, indexes, statistics; log-time order", async () => {
    const file = join(dir, `${body}-${TEST_SIM}-idle.mcap`);
    const rt = await startRuntime({ ...SIM_RUNTIME_OPTIONS, body, record: file, seed: 4, sim: TEST_SIM });
    try {
      const t0 = Date.now();
      while (Date.now() - t0 < 1500) await new Promise((r) => setTimeout(r, 50));
    } finally {
      await rt.close("test over");
    }
    const r = checkMcapFileStrict(file, { requireLogTimeOrder: true });
    expect(r.problems).toEqual([]);
    const silent = [...r.channels.values()].filter((c) => !r.messages.some((m) => m.channelId === c.id)).map((c) => c.topic);
    // The channels no client fed are there all the same (the list).
    const expected = { nao: ["/lola/command", "/lola/upstream/command", "/lola/upstream/sensor"], p7: ["/p7/command"], tny360: ["/tny360/api/reply", "/tny360/api/request"] }[body];
    for (const t of expected) expect(silent).toContain(t);
    for (const c of CHANNELS.filter((c) => c.topic.startsWith(`/${body}/`))) expect([...r.channels.values()].map((x) => x.topic)).toContain(c.topic);
    expect(r.messages.length).toBeGreaterThan(50);
    // Lichtblick's single-type rule for every schema (/api/state and the body's state included),
    // and every JSON message valid against its schema.
    const checks = new Map<number, ReturnType<typeof Compile>>();
    for (const s of r.schemas.values()) {
      expect(s.encoding).toBe("jsonschema");
      const schema = JSON.parse(new TextDecoder().decode(s.data)) as object;
      expect(singleTypeProblems(schema, s.name)).toEqual([]);
      checks.set(s.id, Compile(schema as never));
    }
    expect([...r.schemas.values()].map((s) => s.name)).toContain("bodylink.ApiState");
    // The robot in 3D: transforms at 20 Hz and the scene every second, on the channels the viewers know by schema.
    const topicCount = (t: string) => r.messages.filter((m) => r.channels.get(m.channelId)!.topic === t).length;
    expect(topicCount(`/${body}/tf`)).toBeGreaterThan(10);
    expect(topicCount(`/${body}/scene`)).toBeGreaterThan(0);
    expect(topicCount("/log")).toBe(topicCount("/events")); // each event as foxglove.Log too
    expect(topicCount("/log")).toBeGreaterThan(0);
    expect(r.schemas.get(r.channels.get([...r.channels.values()].find((c) => c.topic === `/${body}/tf`)!.id)!.schemaId)!.name).toBe("foxglove.FrameTransforms");
    expect(r.schemas.get([...r.channels.values()].find((c) => c.topic === `/${body}/scene`)!.schemaId)!.name).toBe("foxglove.SceneUpdate");
    // The body's world (or none): in every state, and the transforms' root.
    const json = (t: string) => r.messages.filter((m) => r.channels.get(m.channelId)!.topic === t).map((m) => JSON.parse(new TextDecoder().decode(m.data)) as Record<string, unknown>);
    const states = json(`/${body}/state`);
    expect(states.length).toBeGreaterThan(10);
    for (const s of states) expect("sim" in s).toBe(TEST_SIM === "physics");
    const parents = new Set(json(`/${body}/tf`).flatMap((m) => (m.transforms as Array<{ parent_frame_id: string }>).map((t) => t.parent_frame_id)));
    expect(parents.has("world")).toBe(TEST_SIM === "physics");
    for (const m of r.messages) {
      const ch = r.channels.get(m.channelId)!;
      if (ch.messageEncoding !== "json") continue;
      const value = JSON.parse(new TextDecoder().decode(m.data)) as unknown;
      const ok = checks.get(ch.schemaId)!.Check(value);
      if (!ok) expect.fail(`${ch.topic}: ${JSON.stringify(value).slice(0, 300)} does not match its schema`);
      // foxglove.* messages also under Foxglove's own definitions (what its panels read).
      const schemaName = r.schemas.get(ch.schemaId)!.name;
      if (schemaName.startsWith("foxglove.")) expect(officialProblems(schemaName, value), ch.topic).toEqual([]);
    }
  }, 60_000);
});
