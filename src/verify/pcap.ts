/**
 * Linux usbmon captures (what `tcpdump -i usbmonN -w capture.pcap` writes), pure: no I/O.
 *
 * Containers:
 * - pcap: a 24-byte global header (magic 0xa1b2c3d4 for microsecond or 0xa1b23c4d for
 *   nanosecond times, in the writer's byte order; version; snaplen; link type), then records of
 *   u32 ts_sec | u32 ts_frac | u32 incl_len | u32 orig_len | data.
 * - pcapng: blocks of u32 type | u32 length | body | u32 length. Section Header (0x0a0d0d0a,
 *   byte-order magic 0x1a2b3c4d), Interface Description (1: u16 link type, u16 reserved,
 *   u32 snaplen, options; `if_tsresol` (9) sets the time unit, default microseconds), Enhanced
 *   Packet (6: u32 interface, u32 ts high, u32 ts low, u32 captured, u32 original, data) and
 *   Simple Packet (3: u32 original, data; no time, so skipped with a note).
 *
 * Link types: 220 LINKTYPE_USB_LINUX_MMAPPED (64-byte header) and 189 LINKTYPE_USB_LINUX
 * (48-byte header). The header (Linux Documentation/usb/usbmon.rst, `struct usbmon_packet`), in
 * the capturing host's byte order (little-endian on a NAO):
 *
 *    0 u64 id         URB tag, same in its submission and completion
 *    8 u8  type       'S' submission, 'C' completion, 'E' error
 *    9 u8  xfer_type  0 isochronous, 1 interrupt, 2 control, 3 bulk
 *   10 u8  epnum      endpoint number, 0x80 set for IN
 *   11 u8  devnum
 *   12 u16 busnum
 *   14 u8  flag_setup 0 when the setup packet is present
 *   15 u8  flag_data  0 when data is present
 *   16 s64 ts_sec
 *   24 s32 ts_usec
 *   28 s32 status     0, or -errno
 *   32 u32 length     data length (submitted for 'S', actual for 'C')
 *   36 u32 len_cap    bytes of data captured here
 *   40 u8[8] setup
 *   48 s32 interval   (mmapped header only, to 64)
 *   52 s32 start_frame
 *   56 u32 xfer_flags
 *   60 u32 ndesc
 *   then len_cap bytes of data.
 *
 * Times come from the pcap record (the usbmon header's own time is the same event's).
 */

export const LINKTYPE_USB_LINUX = 189;
export const LINKTYPE_USB_LINUX_MMAPPED = 220;
export const USBMON_HEADER_BYTES = { [LINKTYPE_USB_LINUX]: 48, [LINKTYPE_USB_LINUX_MMAPPED]: 64 } as const;
export const USB_XFER = { iso: 0, interrupt: 1, control: 2, bulk: 3 } as const;

export interface UsbPacket {
  /** Capture time, ns since the epoch. */
  readonly timeNs: bigint;
  readonly id: bigint;
  /** "S", "C" or "E". */
  readonly type: string;
  readonly xferType: number;
  /** Endpoint with the direction bit (0x81 = EP1 IN). */
  readonly epnum: number;
  readonly devnum: number;
  readonly busnum: number;
  readonly status: number;
  readonly length: number;
  /** The captured data (empty when flag_data says none was captured). */
  readonly data: Uint8Array;
}

export interface Capture {
  readonly linkType: number;
  readonly packets: UsbPacket[];
  readonly notes: string[];
}

/** Parse a pcap or pcapng file of usbmon packets. Throws with what is wrong and where. */
export function parseCapture(b: Uint8Array): Capture {
  if (b.length < 4) throw new Error("not a capture: shorter than any pcap header");
  const v = new DataView(b.buffer, b.byteOffset, b.byteLength);
  if (v.getUint32(0, true) === 0x0a0d0d0a) return parsePcapng(b, v);
  return parsePcap(b, v);
}

function parsePcap(b: Uint8Array, v: DataView): Capture {
  if (b.length < 24) throw new Error("not a pcap file: the 24-byte global header is cut");
  const m = v.getUint32(0, true);
  let le: boolean;
  if (m === 0xa1b2c3d4 || m === 0xa1b23c4d) le = true;
  else if (v.getUint32(0, false) === 0xa1b2c3d4 || v.getUint32(0, false) === 0xa1b23c4d) le = false;
  else throw new Error(`not a pcap or pcapng file (magic ${hex32(m)})`);
  const nanos = v.getUint32(0, le) === 0xa1b23c4d;
  const linkType = v.getUint32(20, le) & 0x0fffffff;
  checkLinkType(linkType);
  const packets: UsbPacket[] = [];
  const notes: string[] = [];
  let at = 24;
  let cut = 0;
  while (at + 16 <= b.length) {
    const sec = BigInt(v.getUint32(at, le));
    const frac = BigInt(v.getUint32(at + 4, le));
    const incl = v.getUint32(at + 8, le);
    const orig = v.getUint32(at + 12, le);
    if (at + 16 + incl > b.length) {
      notes.push(`the capture ends inside packet ${packets.length + 1} (at byte ${at}): the rest is ignored`);
      break;
    }
    if (incl < orig) cut++;
    const p = usbmonPacket(b.subarray(at + 16, at + 16 + incl), linkType, sec * 1_000_000_000n + (nanos ? frac : frac * 1000n));
    if (p) packets.push(p);
    at += 16 + incl;
  }
  if (cut) notes.push(`${cut} packets were cut by the capture's snap length: capture with tcpdump -s 0`);
  return { linkType, packets, notes };
}

function parsePcapng(b: Uint8Array, v: DataView): Capture {
  const packets: UsbPacket[] = [];
  const notes: string[] = [];
  let le = true;
  let at = 0;
  let linkType = -1;
  const ifaces: Array<{ linkType: number; unitsPerSecond: bigint }> = [];
  let simple = 0;
  while (at + 12 <= b.length) {
    const type = v.getUint32(at, le);
    if (type === 0x0a0d0d0a) {
      const bom = v.getUint32(at + 8, true);
      if (bom === 0x1a2b3c4d) le = true;
      else if (bom === 0x4d3c2b1a) le = false;
      else throw new Error(`pcapng section at byte ${at}: bad byte-order magic ${hex32(bom)}`);
      ifaces.length = 0;
    }
    const len = v.getUint32(at + 4, le);
    if (len < 12 || len % 4 !== 0) throw new Error(`pcapng block at byte ${at}: bad length ${len}`);
    if (at + len > b.length) {
      notes.push(`the capture ends inside a block at byte ${at}: the rest is ignored`);
      break;
    }
    if (type === 1) {
      const lt = v.getUint16(at + 8, le);
      let unitsPerSecond = 1_000_000n;
      // options: u16 code, u16 length, value padded to 4
      let o = at + 16;
      while (o + 4 <= at + len - 4) {
        const code = v.getUint16(o, le);
        const olen = v.getUint16(o + 2, le);
        if (code === 0) break;
        if (code === 9 && olen >= 1) {
          const r = b[o + 4]!;
          unitsPerSecond = r & 0x80 ? 2n ** BigInt(r & 0x7f) : 10n ** BigInt(r);
        }
        o += 4 + ((olen + 3) & ~3);
      }
      ifaces.push({ linkType: lt, unitsPerSecond });
      checkLinkType(lt);
      linkType = lt;
    } else if (type === 6) {
      const iface = ifaces[v.getUint32(at + 8, le)];
      if (!iface) throw new Error(`pcapng packet at byte ${at} names an interface that was not described`);
      const ts = (BigInt(v.getUint32(at + 12, le)) << 32n) | BigInt(v.getUint32(at + 16, le));
      const cap = v.getUint32(at + 20, le);
      const timeNs = (ts * 1_000_000_000n) / iface.unitsPerSecond;
      const p = usbmonPacket(b.subarray(at + 28, at + 28 + cap), iface.linkType, timeNs);
      if (p) packets.push(p);
    } else if (type === 3) simple++;
    at += len;
  }
  if (linkType < 0) throw new Error("pcapng file without an interface description");
  if (simple) notes.push(`${simple} simple packet blocks carry no time and were skipped`);
  return { linkType, packets, notes };
}

function checkLinkType(lt: number): void {
  if (lt !== LINKTYPE_USB_LINUX && lt !== LINKTYPE_USB_LINUX_MMAPPED) {
    throw new Error(`link type ${lt} is not usbmon (expected 220 LINKTYPE_USB_LINUX_MMAPPED or 189 LINKTYPE_USB_LINUX): capture with tcpdump -i usbmonN`);
  }
}

/** One usbmon packet, or null when it is too short to hold its header. Little-endian (the NAO's byte order). */
export function usbmonPacket(p: Uint8Array, linkType: number, timeNs: bigint): UsbPacket | null {
  const hb = linkType === LINKTYPE_USB_LINUX ? 48 : 64;
  if (p.length < hb) return null;
  const v = new DataView(p.buffer, p.byteOffset, p.byteLength);
  const flagData = p[15]!;
  const lenCap = v.getUint32(36, true);
  const data = flagData === 0 ? p.subarray(hb, Math.min(p.length, hb + lenCap)) : p.subarray(0, 0);
  return {
    timeNs,
    id: v.getBigUint64(0, true),
    type: String.fromCharCode(p[8]!),
    xferType: p[9]!,
    epnum: p[10]!,
    devnum: p[11]!,
    busnum: v.getUint16(12, true),
    status: v.getInt32(28, true),
    length: v.getUint32(32, true),
    data,
  };
}

export interface ChestboardTransfer {
  readonly timeNs: bigint;
  /** "out": a command frame handed to bulk OUT EP1 (its submission); "in": an answer frame (bulk IN EP1 completion). */
  readonly direction: "out" | "in";
  readonly data: Uint8Array;
}

/**
 * The chest board's frames from a capture: bulk OUT EP1 submissions (their data is the frame
 * as sent) and bulk IN EP1 completions with status 0 and data (the answer). The device is
 * `device` ("bus.dev"), or the one with the most bulk transfers on EP1.
 */
export function usbChestboardTransfers(packets: readonly UsbPacket[], device?: string): { list: ChestboardTransfer[]; notes: string[] } {
  const notes: string[] = [];
  const bulk = packets.filter((p) => p.xferType === USB_XFER.bulk && (p.epnum & 0x7f) === 1);
  let bus: number;
  let dev: number;
  if (device) {
    const m = /^(\d+)\.(\d+)$/.exec(device);
    if (!m) throw new Error(`--usb-device must be BUS.DEVICE (e.g. 1.3), got ${JSON.stringify(device)}`);
    bus = Number(m[1]);
    dev = Number(m[2]);
  } else {
    const count = new Map<string, number>();
    for (const p of bulk) count.set(`${p.busnum}.${p.devnum}`, (count.get(`${p.busnum}.${p.devnum}`) ?? 0) + 1);
    const best = [...count.entries()].sort((a, b) => b[1] - a[1])[0];
    if (!best) throw new Error("no bulk transfers on endpoint 1 in the capture: is this the chest board's bus (lsusb: 'Aldebaran')?");
    [bus, dev] = best[0].split(".").map(Number) as [number, number];
    if (count.size > 1) notes.push(`several devices use bulk EP1; verifying device ${best[0]} (--usb-device to choose)`);
  }
  const list: ChestboardTransfer[] = [];
  let missingData = 0;
  for (const p of bulk) {
    if (p.busnum !== bus || p.devnum !== dev) continue;
    if (p.epnum === 0x01 && p.type === "S") {
      if (p.data.length === p.length && p.length > 0) list.push({ timeNs: p.timeNs, direction: "out", data: p.data });
      else missingData++;
    } else if (p.epnum === 0x81 && p.type === "C" && p.status === 0 && p.length > 0) {
      if (p.data.length === p.length) list.push({ timeNs: p.timeNs, direction: "in", data: p.data });
      else missingData++;
    }
  }
  if (missingData) notes.push(`${missingData} chest-board transfers had no (or cut) data in the capture: capture with tcpdump -s 0 (usbmon passes at most 1 kB per packet by default on some kernels)`);
  list.sort((a, b) => (a.timeNs < b.timeNs ? -1 : a.timeNs > b.timeNs ? 1 : 0));
  return { list, notes };
}

function hex32(n: number): string {
  return `0x${(n >>> 0).toString(16).padStart(8, "0")}`;
}
