/** usbmon capture parsing, one hand-built packet per header field (test-side writer: usbmon-writer.ts). */
import { describe, expect, it } from "vitest";
import { parseCapture, usbChestboardTransfers } from "../../src/verify/pcap.js";
import { pcapFile, pcapngFile, usbmonPacket } from "./usbmon-writer.js";

const T = 1_796_000_000_123_456_000n; // ns, a whole microsecond
const one = (bytes: Uint8Array, opts?: Parameters<typeof pcapFile>[1]) => parseCapture(pcapFile([{ timeNs: T, bytes }], opts));

describe("usbmon packet header, field by field (struct usbmon_packet)", () => {
  const base = { type: "C" as const, xferType: 3, epnum: 0x81, timeNs: T, data: Uint8Array.of(1, 2, 3) };
  it("id, type, xfer_type, epnum, devnum, busnum, status, length and data", () => {
    const p = one(usbmonPacket({ ...base, id: 0x1122334455667788n, devnum: 9, busnum: 2, status: -2 })).packets[0]!;
    expect(p.id).toBe(0x1122334455667788n);
    expect(p.type).toBe("C");
    expect(p.xferType).toBe(3);
    expect(p.epnum).toBe(0x81);
    expect(p.devnum).toBe(9);
    expect(p.busnum).toBe(2);
    expect(p.status).toBe(-2);
    expect(p.length).toBe(3);
    expect([...p.data]).toEqual([1, 2, 3]);
    expect(p.timeNs).toBe(T);
  });
  it("flag_data other than 0 means no data, whatever follows", () => {
    const p = one(usbmonPacket({ ...base, flagData: 0x3c })).packets[0]!;
    expect(p.data.length).toBe(0);
  });
  it("len_cap bounds the data (a capture cut by usbmon)", () => {
    const p = one(usbmonPacket({ ...base, lenCap: 2 })).packets[0]!;
    expect([...p.data]).toEqual([1, 2]);
  });
  it("a packet shorter than its header is skipped", () => {
    expect(one(new Uint8Array(40)).packets).toEqual([]);
  });
});

describe("chest-board transfers from packets", () => {
  const frame = Uint8Array.from({ length: 20 }, (_, i) => i);
  const pk = (f: Parameters<typeof usbmonPacket>[0]) => parseCapture(pcapFile([{ timeNs: f.timeNs, bytes: usbmonPacket(f) }])).packets[0]!;
  it("takes bulk OUT EP1 submissions and bulk IN EP1 completions with status 0; nothing else", () => {
    const packets = [
      pk({ type: "S", xferType: 3, epnum: 0x01, timeNs: T, data: frame }), // the frame as sent
      pk({ type: "C", xferType: 3, epnum: 0x01, timeNs: T, length: 20 }), // its completion: no data
      pk({ type: "S", xferType: 3, epnum: 0x81, timeNs: T, length: 512 }), // IN submission: no data
      pk({ type: "C", xferType: 3, epnum: 0x81, timeNs: T + 1000n, data: frame }), // the answer
      pk({ type: "C", xferType: 3, epnum: 0x81, timeNs: T + 2000n, status: -2, length: 0 }), // timed out (unlinked)
      pk({ type: "C", xferType: 2, epnum: 0x80, timeNs: T, data: Uint8Array.of(0x2a, 0, 0, 0, 0) }), // vendor request
      pk({ type: "C", xferType: 3, epnum: 0x82, timeNs: T, data: frame }), // another endpoint
    ];
    const t = usbChestboardTransfers(packets);
    expect(t.list.map((x) => [x.direction, x.timeNs - T])).toEqual([
      ["out", 0n],
      ["in", 1000n],
    ]);
    expect(t.notes).toEqual([]);
  });
  it("picks the device with the most EP1 bulk traffic, says so, and takes --usb-device", () => {
    const packets = [
      pk({ type: "C", xferType: 3, epnum: 0x81, devnum: 3, timeNs: T, data: frame }),
      pk({ type: "C", xferType: 3, epnum: 0x81, devnum: 3, timeNs: T, data: frame }),
      pk({ type: "C", xferType: 3, epnum: 0x81, devnum: 5, timeNs: T, data: frame }),
    ];
    const t = usbChestboardTransfers(packets);
    expect(t.list).toHaveLength(2);
    expect(t.notes[0]).toMatch(/verifying device 1\.3/);
    expect(usbChestboardTransfers(packets, "1.5").list).toHaveLength(1);
    expect(() => usbChestboardTransfers(packets, "five")).toThrow(/BUS\.DEVICE/);
    expect(() => usbChestboardTransfers([])).toThrow(/no bulk transfers on endpoint 1/);
  });
  it("a transfer whose data was not captured (snap length) is counted and named", () => {
    const t = usbChestboardTransfers([pk({ type: "C", xferType: 3, epnum: 0x81, timeNs: T, data: frame, lenCap: 10 })]);
    expect(t.list).toEqual([]);
    expect(t.notes[0]).toMatch(/tcpdump -s 0/);
  });
});

describe("pcap and pcapng containers", () => {
  const pkt = usbmonPacket({ type: "C", xferType: 3, epnum: 0x81, timeNs: T, data: Uint8Array.of(7) });
  it("pcap: microsecond and nanosecond magics, both byte orders", () => {
    for (const opts of [{}, { nanos: true }, { bigEndian: true }, { bigEndian: true, nanos: true }]) expect(one(pkt, opts).packets[0]!.timeNs).toBe(T);
    const ns = parseCapture(pcapFile([{ timeNs: T + 789n, bytes: pkt }], { nanos: true }));
    expect(ns.packets[0]!.timeNs).toBe(T + 789n);
  });
  it("pcap: wrong magic, wrong link type, a cut record and snaplen cuts are named", () => {
    expect(() => parseCapture(new Uint8Array(32).fill(7))).toThrow(/not a pcap or pcapng file \(magic 0x07070707\)/);
    expect(() => parseCapture(Uint8Array.of(0xd4, 0xc3, 0xb2, 0xa1, 5))).toThrow(/global header is cut/);
    expect(() => one(pkt, { linkType: 1 })).toThrow(/link type 1 is not usbmon.*tcpdump -i usbmonN/);
    const f = pcapFile([
      { timeNs: T, bytes: pkt },
      { timeNs: T, bytes: pkt },
    ]);
    const cut = parseCapture(f.subarray(0, f.length - 10));
    expect(cut.packets).toHaveLength(1);
    expect(cut.notes[0]).toMatch(/ends inside packet 2/);
    expect(parseCapture(pcapFile([{ timeNs: T, bytes: pkt, origLen: 9999 }])).notes[0]).toMatch(/snap length.*-s 0/);
  });
  it("pcapng: if_tsresol sets the unit; an undescribed interface and a wrong link type are errors", () => {
    expect(parseCapture(pcapngFile([{ timeNs: T + 5n, bytes: pkt }])).packets[0]!.timeNs).toBe(T + 5n);
    expect(parseCapture(pcapngFile([{ timeNs: T, bytes: pkt }], { tsresol: 6 })).packets[0]!.timeNs).toBe(T);
    expect(parseCapture(pcapngFile([{ timeNs: T, bytes: pkt }], { tsresol: 3 })).packets[0]!.timeNs).toBe((T / 1_000_000n) * 1_000_000n);
    expect(() => parseCapture(pcapngFile([{ timeNs: T, bytes: pkt }], { linkType: 1 }))).toThrow(/link type 1/);
    const f = pcapngFile([{ timeNs: T, bytes: pkt }]);
    const v = new DataView(f.buffer);
    // The Enhanced Packet block follows the 28-byte SHB and the 32-byte IDB: point it at interface 1.
    v.setUint32(28 + 32 + 8, 1, true);
    expect(() => parseCapture(f)).toThrow(/interface that was not described/);
  });
});
