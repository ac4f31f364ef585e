/**
 * A test-side usbmon capture writer, written from the formats' documentation (not from our
 * parser): pcap (tcpdump's savefile: 24-byte global header, 16-byte record headers), pcapng
 * (Section Header, Interface Description with if_tsresol, Enhanced Packet blocks) and the Linux
 * usbmon packet header (Documentation/usb/usbmon.rst, struct usbmon_packet: 48 bytes, or 64 for
 * LINKTYPE_USB_LINUX_MMAPPED).
 */
export interface UsbmonFields {
  id?: bigint;
  type: "S" | "C" | "E";
  xferType: number; // 0 iso, 1 interrupt, 2 control, 3 bulk
  epnum: number; // 0x80 | n for IN
  devnum?: number;
  busnum?: number;
  flagSetup?: number; // 0: setup present
  flagData?: number; // 0: data present, else e.g. '<' or '>'
  timeNs: bigint;
  status?: number;
  length?: number; // defaults to data.length
  lenCap?: number; // defaults to data.length
  setup?: number[];
  data?: Uint8Array;
}

export function usbmonPacket(f: UsbmonFields, headerBytes: 48 | 64 = 64): Uint8Array {
  const data = f.data ?? new Uint8Array(0);
  const b = new Uint8Array(headerBytes + data.length);
  const v = new DataView(b.buffer);
  v.setBigUint64(0, f.id ?? 0xffff88000000n, true); // id
  b[8] = f.type.charCodeAt(0); // type
  b[9] = f.xferType; // xfer_type
  b[10] = f.epnum; // epnum
  b[11] = f.devnum ?? 3; // devnum
  v.setUint16(12, f.busnum ?? 1, true); // busnum
  b[14] = f.flagSetup ?? 0x2d; // flag_setup ('-': none)
  b[15] = f.flagData ?? (data.length ? 0 : 0x3c); // flag_data ('<': none)
  v.setBigInt64(16, f.timeNs / 1_000_000_000n, true); // ts_sec
  v.setInt32(24, Number((f.timeNs % 1_000_000_000n) / 1000n), true); // ts_usec
  v.setInt32(28, f.status ?? 0, true); // status
  v.setUint32(32, f.length ?? data.length, true); // length
  v.setUint32(36, f.lenCap ?? data.length, true); // len_cap
  if (f.setup) b.set(f.setup, 40); // setup
  // 48..63 (mmapped only): interval, start_frame, xfer_flags, ndesc: zeros
  b.set(data, headerBytes);
  return b;
}

/** A pcap savefile. `nanos`: the 0xa1b23c4d magic and nanosecond fractions. */
export function pcapFile(
  packets: ReadonlyArray<{ timeNs: bigint; bytes: Uint8Array; origLen?: number }>,
  opts: { linkType?: number; bigEndian?: boolean; nanos?: boolean; snaplen?: number } = {},
): Uint8Array {
  const le = !opts.bigEndian;
  const total = 24 + packets.reduce((n, p) => n + 16 + p.bytes.length, 0);
  const b = new Uint8Array(total);
  const v = new DataView(b.buffer);
  v.setUint32(0, opts.nanos ? 0xa1b23c4d : 0xa1b2c3d4, le); // magic
  v.setUint16(4, 2, le); // version major
  v.setUint16(6, 4, le); // version minor
  v.setInt32(8, 0, le); // thiszone
  v.setUint32(12, 0, le); // sigfigs
  v.setUint32(16, opts.snaplen ?? 262144, le); // snaplen
  v.setUint32(20, opts.linkType ?? 220, le); // network (link type)
  let at = 24;
  for (const p of packets) {
    v.setUint32(at, Number(p.timeNs / 1_000_000_000n), le); // ts_sec
    v.setUint32(at + 4, Number(opts.nanos ? p.timeNs % 1_000_000_000n : (p.timeNs % 1_000_000_000n) / 1000n), le); // ts_usec / ts_nsec
    v.setUint32(at + 8, p.bytes.length, le); // incl_len
    v.setUint32(at + 12, p.origLen ?? p.bytes.length, le); // orig_len
    b.set(p.bytes, at + 16);
    at += 16 + p.bytes.length;
  }
  return b;
}

function pad4(n: number): number {
  return (n + 3) & ~3;
}

/** A pcapng file: one section, one interface (if_tsresol = `tsresol`, default 9: nanoseconds), one Enhanced Packet block per packet. */
export function pcapngFile(packets: ReadonlyArray<{ timeNs: bigint; bytes: Uint8Array }>, opts: { linkType?: number; tsresol?: number } = {}): Uint8Array {
  const blocks: Uint8Array[] = [];
  const block = (type: number, body: Uint8Array) => {
    const len = 12 + pad4(body.length);
    const b = new Uint8Array(len);
    const v = new DataView(b.buffer);
    v.setUint32(0, type, true); // block type
    v.setUint32(4, len, true); // block total length
    b.set(body, 8);
    v.setUint32(len - 4, len, true); // block total length again
    blocks.push(b);
  };
  const shb = new Uint8Array(16);
  const sv = new DataView(shb.buffer);
  sv.setUint32(0, 0x1a2b3c4d, true); // byte-order magic
  sv.setUint16(4, 1, true); // major
  sv.setUint16(6, 0, true); // minor
  sv.setBigInt64(8, -1n, true); // section length: unknown
  block(0x0a0d0d0a, shb);
  const tsresol = opts.tsresol ?? 9;
  const idb = new Uint8Array(8 + 8 + 4);
  const iv = new DataView(idb.buffer);
  iv.setUint16(0, opts.linkType ?? 220, true); // link type
  iv.setUint32(4, 262144, true); // snaplen
  iv.setUint16(8, 9, true); // option if_tsresol
  iv.setUint16(10, 1, true); // option length
  idb[12] = tsresol; // 10^-tsresol s
  iv.setUint16(16, 0, true); // opt_endofopt
  block(1, idb);
  const unitsPerS = 10n ** BigInt(tsresol);
  for (const p of packets) {
    const body = new Uint8Array(20 + pad4(p.bytes.length));
    const bv = new DataView(body.buffer);
    const ts = (p.timeNs * unitsPerS) / 1_000_000_000n;
    bv.setUint32(0, 0, true); // interface id
    bv.setUint32(4, Number(ts >> 32n), true); // timestamp high
    bv.setUint32(8, Number(ts & 0xffffffffn), true); // timestamp low
    bv.setUint32(12, p.bytes.length, true); // captured length
    bv.setUint32(16, p.bytes.length, true); // original length
    body.set(p.bytes, 20);
    block(6, body);
  }
  const total = blocks.reduce((n, b) => n + b.length, 0);
  const out = new Uint8Array(total);
  let at = 0;
  for (const b of blocks) {
    out.set(b, at);
    at += b.length;
  }
  return out;
}
