/**
 * bodylink verify: recordings of the simulator re-decode into the recorded LoLA messages bit for
 * bit; one altered frame is reported with its frame, key, index and both values; the same holds
 * for a usbmon capture (written by a test-side writer that follows the format's documentation)
 * plus a LoLA dump.
 */
import { execFile } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { McapStreamReader } from "@mcap/core";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { DECOMPRESS_HANDLERS, loadZstd } from "../../src/record/mcap-io.js";
import { Kind } from "../../src/wire/chestboard/constants.js";
import { decodeFrame, encodeFrame } from "../../src/wire/chestboard/frame.js";
import { verifyCapture, verifyRecording } from "../../src/verify/verify.js";
import { formatVerifyResult } from "../../src/verify/verifier.js";
import { type RecordedSim, driveWithLola, recordedSim, tmpDir } from "../record/helpers.js";
import { pcapFile, pcapngFile, usbmonPacket } from "./usbmon-writer.js";
import { rewriteRecording } from "../support/mcap-rewrite.js";

const run = promisify(execFile);
const bin = join(process.cwd(), "bin/bodylink.js");

let sim: RecordedSim | null = null;
afterEach(async () => {
  await sim?.close();
  sim = null;
});

let dir: string;
let recording: string;
beforeAll(async () => {
  await loadZstd();
  dir = tmpDir();
  recording = join(dir, "sim.mcap");
  const s = await recordedSim(recording);
  await s.cycles(30);
  await driveWithLola(s, 25); // stiffness 0.5 commanded: LoLA's Stiffness is not all zeros
  await s.cycles(20);
  await s.close();
});

/** The number of the answer frame decoded last before LoLA message `n` (file order). */
function frameBefore(path: string, n: number): number {
  const r = new McapStreamReader({ decompressHandlers: DECOMPRESS_HANDLERS });
  r.append(readFileSync(path));
  const topics = new Map<number, string>();
  let inCount = 0;
  let lolaCount = 0;
  for (let rec = r.nextRecord(); rec; rec = r.nextRecord()) {
    if (rec.type === "Channel") topics.set(rec.id, rec.topic);
    if (rec.type !== "Message") continue;
    const t = topics.get(rec.channelId);
    if (t === "/nao/chestboard/in") inCount++;
    if (t === "/lola/sensor" && ++lolaCount === n) return inCount;
  }
  throw new Error(`fewer than ${n} LoLA messages`);
}

/** The answer frame `frame` with the first joint board's first position count changed by `delta` (CRC resealed). */
function alterPosition(frame: Uint8Array, delta: number): { bytes: Uint8Array; bus: number; address: number } {
  const d = decodeFrame(frame);
  if (!d.ok) throw new Error("test frame does not decode");
  const i = d.messages.findIndex((m) => m.kind === Kind.JointState);
  const m = d.messages[i]!;
  const payload = m.payload.slice();
  const raw = payload[0]! | (payload[1]! << 8);
  payload[0] = (raw + delta) & 0xff;
  payload[1] = ((raw + delta) >> 8) & 0xff;
  const messages = d.messages.map((x, k) => (k === i ? { ...x, payload } : { ...x, payload: x.payload.slice() }));
  return { bytes: encodeFrame(messages), bus: m.bus, address: m.address };
}

describe("bodylink verify on a recording", () => {
  it("re-decodes every frame into the recorded LoLA messages, every value bit-identical", async () => {
    const { result: r } = await verifyRecording(recording);
    expect(r.messages).toBeGreaterThanOrEqual(75);
    expect(r.valuesPerMessage).toBe(161);
    expect(r.values).toBe(r.messages * 161);
    expect(r.identicalValues).toBe(r.values);
    expect(r.identicalMessages).toBe(r.messages);
    expect(r.answerFrames).toBeGreaterThan(r.messages);
    const text = formatVerifyResult("sim.mcap", r).join("\n");
    expect(text).toContain(`${r.values.toLocaleString("en-US")} values in ${r.messages} of LoLA's messages came out bit-identical.`);
  });

  it("one altered answer frame is reported with the frame, key, index and both values, and exits non-zero", async () => {
    // Answer frames come before cycles' LoLA messages; alter the one decoded just before message 40.
    const altered = join(dir, "altered.mcap");
    const target = frameBefore(recording, 40);
    let bus = 0;
    await rewriteRecording(recording, altered, {
      edit: (topic, n, data) => {
        if (topic !== "/nao/chestboard/in" || n !== target) return data;
        const a = alterPosition(data, 3);
        bus = a.bus;
        return a.bytes;
      },
    });
    expect(bus).toBeGreaterThan(0);
    const { result: r } = await verifyRecording(altered);
    expect(r.values - r.identicalValues).toBe(1);
    expect(r.identicalMessages).toBe(r.messages - 1);
    const d = r.differences[0]!;
    expect(d.message).toBe(40);
    expect(d.key).toBe("Position");
    expect(d.frame).toBe(target);
    expect(d.recorded).not.toBe(d.redecoded);
    expect(Math.abs(d.recorded - d.redecoded)).toBeGreaterThan(0);
    const text = formatVerifyResult("altered.mcap", r).join("\n");
    expect(text).toMatch(new RegExp(`message 40 at \\+[0-9.]+ s: Position\\[${d.index}\\] recorded .* \\(0x[0-9a-f]{8}\\), re-decoded .* \\(0x[0-9a-f]{8}\\); answer frame ${target} at`));

    // The CLI: exit 0 for the good one, non-zero with the code for the altered one.
    const ok = await run(process.execPath, [bin, "verify", recording]);
    expect(ok.stdout).toMatch(/came out bit-identical\.\n$/);
    const bad = await run(process.execPath, [bin, "verify", altered]).then(
      () => null,
      (e: { code: number; stdout: string; stderr: string }) => e,
    );
    expect(bad?.code).toBe(1);
    expect(bad?.stdout).toMatch(/Position\[/);
    expect(bad?.stderr.trim()).toMatch(/^bodylink: 1 values differ \(in 1 of \d+ LoLA messages\).*\[BL_ERR_VERIFY_DIFFERENT\]$/);
  }, 60_000);

  it("a recording with no frames or no LoLA messages is a clear input error", async () => {
    const noLola = join(dir, "nolola.mcap");
    await rewriteRecording(recording, noLola, { edit: (topic, _n, data) => (topic === "/lola/sensor" ? new Uint8Array(0) : data) });
    const { result } = await verifyRecording(noLola);
    expect(result.malformedMessages).toBe(result.messages); // empty messages do not decode: all reported
    await expect(verifyRecording(join(dir, "missing.mcap"))).rejects.toThrow(/cannot read/);
  });
});

/** The recording's chest-board traffic as usbmon packets: bulk OUT submissions with data, bulk IN completions with data, acks, and another device's noise. */
async function captureFromRecording(src: string, alterIn?: number): Promise<Array<{ timeNs: bigint; bytes: Uint8Array }>> {
  const r = new McapStreamReader({ decompressHandlers: DECOMPRESS_HANDLERS });
  r.append(readFileSync(src));
  const topics = new Map<number, string>();
  const out: Array<{ timeNs: bigint; bytes: Uint8Array }> = [];
  let id = 1n;
  let inN = 0;
  for (let rec = r.nextRecord(); rec; rec = r.nextRecord()) {
    if (rec.type === "Channel") topics.set(rec.id, rec.topic);
    if (rec.type !== "Message") continue;
    const t = topics.get(rec.channelId);
    const timeNs = rec.logTime;
    if (t === "/nao/chestboard/out") {
      out.push({ timeNs, bytes: usbmonPacket({ id, type: "S", xferType: 3, epnum: 0x01, timeNs, data: rec.data }) });
      out.push({ timeNs, bytes: usbmonPacket({ id: id++, type: "C", xferType: 3, epnum: 0x01, timeNs, length: rec.data.length, lenCap: 0, flagData: 0x3e }) });
      // another device on the bus (a keyboard): must be ignored
      out.push({ timeNs, bytes: usbmonPacket({ type: "C", xferType: 1, epnum: 0x81, devnum: 2, timeNs, data: Uint8Array.of(0, 0, 4, 0, 0, 0, 0, 0) }) });
    } else if (t === "/nao/chestboard/in") {
      inN++;
      const data = alterIn === inN ? alterPosition(rec.data, 3).bytes : rec.data;
      out.push({ timeNs, bytes: usbmonPacket({ id, type: "S", xferType: 3, epnum: 0x81, timeNs, length: 512, lenCap: 0 }) });
      out.push({ timeNs, bytes: usbmonPacket({ id: id++, type: "C", xferType: 3, epnum: 0x81, timeNs, data }) });
    } else if (t === "/nao/chestboard/transfer") {
      out.push({ timeNs, bytes: usbmonPacket({ type: "C", xferType: 2, epnum: 0x80, timeNs, data: Uint8Array.of(0x2a, 1, 2, 3, 4) }) });
    }
  }
  return out;
}

describe("bodylink verify on a usbmon capture plus a LoLA dump", () => {
  it("pairs by time: every value bit-identical, in pcap (µs, ns, big-endian, 48-byte headers) and pcapng", async () => {
    const packets = await captureFromRecording(recording);
    const variants: Array<[string, Uint8Array]> = [
      ["us.pcap", pcapFile(packets)],
      ["ns.pcap", pcapFile(packets, { nanos: true })],
      ["be.pcap", pcapFile(packets, { bigEndian: true })],
      ["ng.pcapng", pcapngFile(packets)],
      ["ng-us.pcapng", pcapngFile(packets, { tsresol: 6 })],
    ];
    // LINKTYPE_USB_LINUX (189): the 48-byte header.
    const short = packets.map((p) => ({ timeNs: p.timeNs, bytes: Uint8Array.from([...p.bytes.subarray(0, 48), ...p.bytes.subarray(64)]) }));
    variants.push(["189.pcap", pcapFile(short, { linkType: 189 })]);
    for (const [name, bytes] of variants) {
      const path = join(dir, name);
      writeFileSync(path, bytes);
      const { result: r, notes } = await verifyCapture(path, recording);
      expect(notes, name).toEqual([]);
      expect(r.messages, name).toBeGreaterThanOrEqual(75);
      expect(r.identicalValues, name).toBe(r.values);
    }
  });

  it("an altered answer frame in the capture is reported, and the CLI exits non-zero", async () => {
    const path = join(dir, "altered.pcap");
    const target = frameBefore(recording, 50);
    writeFileSync(path, pcapFile(await captureFromRecording(recording, target)));
    const { result: r } = await verifyCapture(path, recording);
    expect(r.values - r.identicalValues).toBe(1);
    expect(r.differences[0]).toMatchObject({ key: "Position", frame: target, message: 50 });
    const bad = await run(process.execPath, [bin, "verify", path, "--lola", recording]).then(
      () => null,
      (e: { code: number; stdout: string }) => e,
    );
    expect(bad?.code).toBe(1);
    expect(bad?.stdout).toMatch(new RegExp(`answer frame ${target} at`));
    const noLola = await run(process.execPath, [bin, "verify", path]).then(
      () => null,
      (e: { code: number; stderr: string }) => e,
    );
    expect(noLola?.code).toBe(2);
    expect(noLola?.stderr).toMatch(/--lola/);
  }, 60_000);

  it("a capture started after HAL read the preferences needs --prefs (a bodylink recording holds them)", async () => {
    const all = await captureFromRecording(recording);
    // Drop everything before the first LoLA message's time minus a little: the preference reads go.
    const late = all.slice(Math.floor(all.length / 2));
    const path = join(dir, "late.pcap");
    writeFileSync(path, pcapFile(late));
    await expect(verifyCapture(path, recording)).rejects.toThrow(/does not contain the preference block.*--prefs/);
    const { result: r } = await verifyCapture(path, recording, { prefsPath: recording });
    expect(r.messages).toBeGreaterThan(0);
  });
});
