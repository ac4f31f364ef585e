import { crc32 as zlibCrc32 } from "node:zlib";
import { describe, expect, it } from "vitest";
import { PREF_COUNT, interpretPreferences } from "../../src/bodies/nao/prefs.js";
import { SimChestboard } from "../../src/sim/nao/chestboard.js";
import { type ChestboardTransport, TRANSFER_TIMEOUT, type TransferDone } from "../../src/transport/chestboard.js";
import { ChestboardLink, ExchangeOutcome } from "../../src/transport/chestboard-link.js";
import { PREFS, USB } from "../../src/wire/chestboard/constants.js";
import { encodeFrame } from "../../src/wire/chestboard/frame.js";
import { decodeBoardConfiguration, encodeBoardConfiguration } from "../../src/wire/chestboard/handshake.js";
import { decodePreferenceBlock, encodePreferenceBlock, PrefType, prefPiece } from "../../src/wire/chestboard/prefs.js";
import { bytes, u16le, u32le, u8 } from "../helpers/bytes.js";

/** Records every transfer the link makes, delegating to a simulated board. */
class Recorder implements ChestboardTransport {
  readonly name = "recorder";
  readonly log: string[] = [];
  constructor(readonly inner: ChestboardTransport) {}
  bulkOut(d: Uint8Array, n: number, t: number, done: TransferDone) {
    this.log.push(`out ${n} ${t}ms`);
    this.inner.bulkOut(d, n, t, done);
  }
  vendorIn(r: number, into: Uint8Array, n: number, done: TransferDone) {
    this.log.push(`vendor 0x${r.toString(16)} ${n}`);
    this.inner.vendorIn(r, into, n, done);
  }
  bulkIn(into: Uint8Array, t: number, done: TransferDone) {
    this.log.push(`in ${into.length} ${t}ms`);
    this.inner.bulkIn(into, t, done);
  }
  async close() {}
}

const frameOf = () => encodeFrame([{ kind: 0x05, bus: 0, address: 3, payload: Uint8Array.of(3) }]);

describe("the exchange state machine", () => {
  it("runs bulk OUT, ack 0x14, bulk IN with the seed's sizes and timeouts", () => {
    const sim = new SimChestboard();
    const rec = new Recorder(sim);
    const link = new ChestboardLink(rec);
    const f = frameOf();
    let result: ExchangeOutcome | null = null;
    link.exchange(f, f.length, (o) => {
      result = o;
    });
    expect(result).toBe(ExchangeOutcome.Answered);
    expect(rec.log).toEqual([`out ${f.length} 20ms`, "vendor 0x14 5", "in 512 20ms"]);
  });
  it("the acknowledgement is 0x2a then the CRC-32 of the frame, little-endian", () => {
    const sim = new SimChestboard();
    const f = frameOf();
    sim.bulkOut(f, f.length, 20, () => {});
    const ack = new Uint8Array(5);
    sim.vendorIn(USB.REQ_ACK, ack, 5, () => {});
    expect([...ack]).toEqual([...bytes(u8(0x2a), u32le(zlibCrc32(f.subarray(0, f.length - 4))))]);
  });
  it("a CRC mismatch in the ack is an unacknowledged frame: counted, reported, no answer read", () => {
    const sim = new SimChestboard();
    const rec = new Recorder(sim);
    const link = new ChestboardLink(rec);
    sim.corruptAcks = 1;
    const f = frameOf();
    const outcomes: ExchangeOutcome[] = [];
    link.exchange(f, f.length, (o) => outcomes.push(o));
    link.exchange(f, f.length, (o) => outcomes.push(o)); // the retry on the next cycle
    expect(outcomes).toEqual([ExchangeOutcome.Unacknowledged, ExchangeOutcome.Answered]);
    expect(link.counters.unacknowledged).toBe(1);
    expect(rec.log.slice(0, 3)).toEqual([`out ${f.length} 20ms`, "vendor 0x14 5", `out ${f.length} 20ms`]);
  });
  it("a bulk read that times out asks for the status with 0x15 (2 bytes)", () => {
    const sim = new SimChestboard();
    const rec = new Recorder(sim);
    const link = new ChestboardLink(rec);
    sim.dropAnswers = 1;
    const f = frameOf();
    let out: ExchangeOutcome | null = null;
    link.exchange(f, f.length, (o) => {
      out = o;
    });
    expect(out).toBe(ExchangeOutcome.NoAnswer);
    expect(rec.log.at(-1)).toBe("vendor 0x15 2");
    expect(link.lastStatus).toBe(0); // normal mode, no board started yet
    expect(link.counters.noAnswer).toBe(1);
  });
  it("a transport that throws fails the exchange instead of wedging the link", () => {
    const broken: ChestboardTransport = {
      name: "broken",
      bulkOut: () => {
        throw new Error("libusb exploded");
      },
      vendorIn: (_r, _i, _n, done) => done(TRANSFER_TIMEOUT),
      bulkIn: (_i, _t, done) => done(TRANSFER_TIMEOUT),
      close: async () => {},
    };
    const link = new ChestboardLink(broken);
    const f = frameOf();
    let out: ExchangeOutcome | null = null;
    link.exchange(f, f.length, (o) => {
      out = o;
    });
    expect(out).toBe(ExchangeOutcome.WriteFailed);
    expect(link.busy).toBe(false);
  });
});

describe("preference block", () => {
  it("is read in 145 pieces of 32 bytes, the last of 27", async () => {
    expect(PREFS.PIECES).toBe(145);
    expect(prefPiece(144)).toEqual({ offset: 4608, length: 27 });
    const sim = new SimChestboard();
    const rec = new Recorder(sim);
    const link = new ChestboardLink(rec);
    const r = await link.readPreferences();
    expect(r.ok).toBe(true);
    expect(rec.log.filter((l) => l.startsWith("out")).length).toBe(145);
    if (r.ok) expect([...r.block]).toEqual([...sim.flash]);
  });
  it("holds the 76 values HAL logs", async () => {
    const link = new ChestboardLink(new SimChestboard({ seed: 3 }));
    const r = await link.readPreferences();
    if (!r.ok) throw new Error(r.reason);
    const d = decodePreferenceBlock(r.block);
    if (!d.ok) throw new Error(d.reason);
    expect(d.entries.length).toBe(76);
    expect(PREF_COUNT).toBe(76);
    const p = interpretPreferences(d.entries);
    expect(p.ok).toBe(true);
    if (p.ok) {
      expect(p.prefs.bodyId).toHaveLength(20);
      expect(p.prefs.jointZeroCounts).toHaveLength(25);
      expect(p.prefs.serials.size).toBe(19);
    }
  });
  it("a corrupted piece is caught by the CRC and reported", async () => {
    const sim = new SimChestboard();
    sim.corruptPrefPieces.add(17);
    const r = await new ChestboardLink(sim).readPreferences();
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.reason).toMatch(/CRC mismatch: stored 0x[0-9a-f]{8}, computed 0x[0-9a-f]{8}/);
  });
  it("a piece that never answers is reported with its index after three tries", async () => {
    const sim = new SimChestboard();
    sim.silentPrefPieces.add(144);
    const r = await new ChestboardLink(sim).readPreferences();
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.reason).toMatch(/piece 144 \(offset 4608\) failed/);
  });
  it("round-trips typed entries and rejects bad blocks without throwing", () => {
    const block = encodePreferenceBlock([
      { key: "A", type: PrefType.F32, value: 1.5 },
      { key: "B", type: PrefType.Str, value: "6.0.0" },
      { key: "C", type: PrefType.U16, value: 8192 },
    ]);
    const d = decodePreferenceBlock(block);
    expect(d.ok && d.entries).toEqual([
      { key: "A", type: PrefType.F32, value: 1.5 },
      { key: "B", type: PrefType.Str, value: "6.0.0" },
      { key: "C", type: PrefType.U16, value: 8192 },
    ]);
    expect(decodePreferenceBlock(block.subarray(0, 100)).ok).toBe(false);
    // A valid CRC over entries that run off the end: reported, not thrown.
    const bad = block.slice();
    bad[6] = 0xff; // entry count
    new DataView(bad.buffer).setUint32(4631, zlibCrc32(bad.subarray(0, 4631)), true);
    const r = decodePreferenceBlock(bad);
    expect(r.ok).toBe(false);
  });
});

describe("motor-board handshake", () => {
  const storedSerials = (sim: SimChestboard) => {
    const p = interpretPreferences(sim.preferenceEntries);
    if (!p.ok) throw new Error(p.reason);
    return p.prefs.serials;
  };
  it("golden: the 32-byte configuration answer", () => {
    const answer = bytes(
      new Array(16).fill(0), // 16 status bytes
      u32le(0x12345678), // serial
      u8(11), // configuration version
      u8(3), // hardware revision
      u8(1), // board type: joint
      u8(2), // joint count
      u16le(16384), // encoder counts per turn
      u16le(160), // current LSB, 0.1 mA
      u8(2), // temperature step, °C
      [0, 0, 0], // reserved
    );
    const c = decodeBoardConfiguration(answer);
    expect(c).toMatchObject({ serial: 0x12345678, configVersion: 11, hardwareRevision: 3, boardType: 1, jointCount: 2, encoderCountsPerTurn: 16384, currentLsbDeciMa: 160, temperatureStepC: 2 });
    expect([...encodeBoardConfiguration(c!)]).toEqual([...answer]);
    expect(decodeBoardConfiguration(answer.subarray(0, 31))).toBeNull();
  });
  it("accepts version 11 with the default list [10, 11] and starts every board", async () => {
    const sim = new SimChestboard();
    const reports = await new ChestboardLink(sim).handshake([10, 11], storedSerials(sim));
    expect(reports).toHaveLength(15);
    expect(reports.every((r) => r.accepted && r.started && r.attempts === 1 && r.configVersion === 11)).toBe(true);
    expect(sim.isStarted("HeadBoard")).toBe(true);
    expect(reports.filter((r) => r.serialMismatch)).toEqual([]);
    expect(reports.find((r) => r.name === "LeftFootBoard")!.serial).toBe(0); // foot boards send 0, not a mismatch
  });
  it("accepts version 10 boards with --accept-board-version 10", async () => {
    const sim = new SimChestboard({ boardVersions: Object.fromEntries(["HeadBoard", "LeftHipBoard"].map((n) => [n, 10])) });
    const reports = await new ChestboardLink(sim).handshake([10], storedSerials(sim));
    expect(reports.find((r) => r.name === "HeadBoard")).toMatchObject({ accepted: true, configVersion: 10 });
    expect(reports.find((r) => r.name === "LeftHipBoard")).toMatchObject({ accepted: true, configVersion: 10 });
  });
  it("asks a rejected board three times in all, then leaves it uninitialized", async () => {
    const sim = new SimChestboard(); // all version 11
    const rec = new Recorder(sim);
    const reports = await new ChestboardLink(rec).handshake([10], storedSerials(sim));
    const head = reports.find((r) => r.name === "HeadBoard")!;
    expect(head).toMatchObject({ accepted: false, started: false, attempts: 3, configVersion: 11 });
    expect(head.reason).toBe("configuration version 11 not in accepted [10]");
    expect(sim.isStarted("HeadBoard")).toBe(false);
    // 15 boards in batches of 8: 2 frames per round, 3 rounds, no start frame.
    expect(rec.log.filter((l) => l.startsWith("out")).length).toBe(6);
  });
  it("reports a serial that differs from the stored one", async () => {
    const sim = new SimChestboard();
    sim.setBoardSerial("LeftArmBoard", 42);
    const reports = await new ChestboardLink(sim).handshake([10, 11], storedSerials(sim));
    expect(reports.find((r) => r.name === "LeftArmBoard")).toMatchObject({ serial: 42, serialMismatch: true, accepted: true });
  });
});

describe("chest-board tools on the link", () => {
  it("chest-version, chest-mode, and harakiri powering off the simulated body", async () => {
    const sim = new SimChestboard();
    const link = new ChestboardLink(sim);
    expect(await link.readFirmwareVersion()).toBe("3.4.1207");
    expect(await link.readMode()).toEqual({ code: 0, name: "Normal" });
    await link.harakiri(false);
    expect(sim.poweredOff).toBe(true);
    await expect(link.readMode()).rejects.toThrow(/bulk write failed/);
  });
  it("harakiri -r reboots and the board keeps answering", async () => {
    const sim = new SimChestboard();
    const link = new ChestboardLink(sim);
    await link.harakiri(true);
    expect(sim.rebooted).toBe(1);
    expect(sim.poweredOff).toBe(false);
  });
});
