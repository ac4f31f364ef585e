/**
 * A strict MCAP checker for tests, written from the spec (foxglove/mcap website/docs/spec) with its
 * own record parser, so a fault of @mcap/core's builder is not hidden by the same library's reader.
 *
 * It enforces what `mcap doctor` and a strict reader do, and a little more:
 * - magic at both ends, the Header first, a DataEnd whose CRC is the data section's;
 * - every Schema before the first Channel that uses it, every Channel before its first Message,
 *   all in the data section (top level or inside a chunk); repeated records identical;
 * - chunks: only Schema, Channel and Message inside, uncompressed size and CRC, start/end times;
 * - Message Index records after each chunk listing exactly that chunk's messages per channel;
 * - the summary: Schema and Channel records that are duplicates of the data section's (none only
 *   in the summary, none missing), Statistics equal to the counts, Chunk, Attachment and Metadata
 *   indexes that point at those records, Summary Offsets covering their groups, the summary CRC;
 * - attachments' CRCs;
 * - log-time order in file order (counted; `requireLogTimeOrder` makes a step back an error).
 *
 * Returns what it found; `problems` is empty for a file that passes.
 */
import { readFileSync } from "node:fs";
import { crc32 } from "node:zlib";
import zstd from "@foxglove/wasm-zstd";

const MAGIC = [0x89, 0x4d, 0x43, 0x41, 0x50, 0x30, 0x0d, 0x0a];
/** Opcodes, spec "Records". */
export const OP = {
  header: 0x01,
  footer: 0x02,
  schema: 0x03,
  channel: 0x04,
  message: 0x05,
  chunk: 0x06,
  messageIndex: 0x07,
  chunkIndex: 0x08,
  attachment: 0x09,
  attachmentIndex: 0x0a,
  statistics: 0x0b,
  metadata: 0x0c,
  metadataIndex: 0x0d,
  summaryOffset: 0x0e,
  dataEnd: 0x0f,
} as const;

export interface StrictSchema {
  id: number;
  name: string;
  encoding: string;
  data: Uint8Array;
}
export interface StrictChannel {
  id: number;
  schemaId: number;
  topic: string;
  messageEncoding: string;
  metadata: Map<string, string>;
}
export interface StrictMessage {
  channelId: number;
  sequence: number;
  logTime: bigint;
  publishTime: bigint;
  data: Uint8Array;
}

export interface StrictReport {
  readonly problems: string[];
  readonly profile: string;
  readonly schemas: Map<number, StrictSchema>;
  readonly channels: Map<number, StrictChannel>;
  /** Every message, file order. */
  readonly messages: StrictMessage[];
  readonly chunks: number;
  /** Messages whose log time is before the one before them in the file. */
  readonly logTimeStepsBack: number;
  readonly metadata: Map<string, Map<string, string>>;
  readonly attachments: string[];
}

export interface StrictOptions {
  /** A message earlier than the one before it in the file is a problem (else only counted). Default false. */
  requireLogTimeOrder?: boolean;
}

class Cursor {
  readonly v: DataView;
  constructor(
    readonly b: Uint8Array,
    public o = 0,
    readonly end = b.length,
  ) {
    this.v = new DataView(b.buffer, b.byteOffset, b.byteLength);
  }
  need(n: number, what: string): void {
    if (this.o + n > this.end) throw new Error(`${what}: needs ${n} bytes at ${this.o}, record ends at ${this.end}`);
  }
  u8(): number {
    this.need(1, "u8");
    return this.v.getUint8(this.o++);
  }
  u16(): number {
    this.need(2, "u16");
    const x = this.v.getUint16(this.o, true);
    this.o += 2;
    return x;
  }
  u32(): number {
    this.need(4, "u32");
    const x = this.v.getUint32(this.o, true);
    this.o += 4;
    return x;
  }
  u64(): bigint {
    this.need(8, "u64");
    const x = this.v.getBigUint64(this.o, true);
    this.o += 8;
    return x;
  }
  bytes(n: number): Uint8Array {
    this.need(n, "bytes");
    const x = this.b.subarray(this.o, this.o + n);
    this.o += n;
    return x;
  }
  str(): string {
    return new TextDecoder("utf-8", { fatal: true }).decode(this.bytes(this.u32()));
  }
  map<K, V>(key: () => K, value: () => V): Map<K, V> {
    const len = this.u32();
    const stop = this.o + len;
    if (stop > this.end) throw new Error(`map of ${len} bytes overruns the record`);
    const m = new Map<K, V>();
    while (this.o < stop) {
      const k = key();
      if (m.has(k)) throw new Error(`map key ${String(k)} twice`);
      m.set(k, value());
    }
    if (this.o !== stop) throw new Error("map entries overrun its length");
    return m;
  }
}

interface RawRecord {
  op: number;
  /** Offset of the opcode byte (in the file, or in the chunk's records). */
  start: number;
  /** Whole record length: opcode + length + content. */
  length: number;
  body: Cursor;
}

function* records(b: Uint8Array, from: number, to: number): Generator<RawRecord> {
  let o = from;
  while (o < to) {
    if (o + 9 > to) throw new Error(`truncated record header at ${o}`);
    const v = new DataView(b.buffer, b.byteOffset + o, 9);
    const op = v.getUint8(0);
    const len = v.getBigUint64(1, true);
    if (BigInt(o + 9) + len > BigInt(to)) throw new Error(`record 0x${op.toString(16)} at ${o} of ${len} bytes overruns ${to}`);
    const n = Number(len);
    yield { op, start: o, length: 9 + n, body: new Cursor(b, o + 9, o + 9 + n) };
    o += 9 + n;
  }
}

function parseSchema(c: Cursor): StrictSchema {
  return { id: c.u16(), name: c.str(), encoding: c.str(), data: c.bytes(c.u32()) };
}
function parseChannel(c: Cursor): StrictChannel {
  return {
    id: c.u16(),
    schemaId: c.u16(),
    topic: c.str(),
    messageEncoding: c.str(),
    metadata: c.map(
      () => c.str(),
      () => c.str(),
    ),
  };
}
function parseMessage(c: Cursor): StrictMessage {
  return { channelId: c.u16(), sequence: c.u32(), logTime: c.u64(), publishTime: c.u64(), data: c.bytes(c.end - c.o) };
}
const sameBytes = (a: Uint8Array, b: Uint8Array): boolean => a.length === b.length && a.every((x, i) => x === b[i]);
const sameSchema = (a: StrictSchema, b: StrictSchema): boolean => a.id === b.id && a.name === b.name && a.encoding === b.encoding && sameBytes(a.data, b.data);
const sameChannel = (a: StrictChannel, b: StrictChannel): boolean =>
  a.id === b.id &&
  a.schemaId === b.schemaId &&
  a.topic === b.topic &&
  a.messageEncoding === b.messageEncoding &&
  a.metadata.size === b.metadata.size &&
  [...a.metadata].every(([k, v]) => b.metadata.get(k) === v);

interface ChunkSeen {
  start: number;
  length: number;
  messageStartTime: bigint;
  messageEndTime: bigint;
  compression: string;
  compressedSize: bigint;
  uncompressedSize: bigint;
  /** channel → [logTime, offset in the chunk's records] */
  messages: Map<number, Array<[bigint, bigint]>>;
  /** channel → offset of its Message Index record */
  indexOffsets: Map<number, bigint>;
  indexLength: bigint;
}

let zstdLoaded: Promise<boolean> | null = null;
/** Load the zstd module once (call before {@link checkMcapStrict}). */
export function loadStrictZstd(): Promise<boolean> {
  zstdLoaded ??= zstd.isLoaded;
  return zstdLoaded;
}

export function checkMcapFileStrict(path: string, opts: StrictOptions = {}): StrictReport {
  return checkMcapStrict(new Uint8Array(readFileSync(path)), opts);
}

/** Check one MCAP file's bytes. Call (and await) {@link loadStrictZstd} first for zstd chunks. */
export function checkMcapStrict(file: Uint8Array, opts: StrictOptions = {}): StrictReport {
  const problems: string[] = [];
  const bad = (p: string): void => {
    if (problems.length < 50) problems.push(p);
  };
  const schemas = new Map<number, StrictSchema>();
  const channels = new Map<number, StrictChannel>();
  const messages: StrictMessage[] = [];
  const metadata = new Map<string, Map<string, string>>();
  const metadataAt = new Map<number, { length: number; name: string }>();
  const attachments: string[] = [];
  const attachmentAt = new Map<number, { length: number; name: string; logTime: bigint; createTime: bigint; mediaType: string; dataSize: bigint }>();
  const chunks: ChunkSeen[] = [];
  const counts = new Map<number, bigint>();
  let profile = "";
  let stepsBack = 0;
  let lastLog: bigint | null = null;
  const report = (): StrictReport => ({ problems, profile, schemas, channels, messages, chunks: chunks.length, logTimeStepsBack: stepsBack, metadata, attachments });

  if (file.length < 8 + 9 + 8 || !MAGIC.every((m, i) => file[i] === m)) {
    bad("no MCAP magic at the start");
    return report();
  }
  if (!MAGIC.every((m, i) => file[file.length - 8 + i] === m)) {
    bad("no MCAP magic at the end (no footer: the file was cut)");
    return report();
  }
  // The footer: the last record before the closing magic (opcode, 8-byte length 20, 20 bytes).
  const footerAt = file.length - 8 - 29;
  const fv = new DataView(file.buffer, file.byteOffset + footerAt, 29);
  if (fv.getUint8(0) !== OP.footer || fv.getBigUint64(1, true) !== 20n) {
    bad("no Footer record before the closing magic");
    return report();
  }
  const summaryStart = Number(fv.getBigUint64(9, true));
  const summaryOffsetStart = Number(fv.getBigUint64(17, true));
  const summaryCrc = fv.getUint32(25, true);

  // ---- data section ----
  const schemaSeen = (s: StrictSchema, where: string): void => {
    if (s.id === 0) return bad(`${where}: a Schema record with id 0 (reserved: no schema)`);
    const prev = schemas.get(s.id);
    if (prev && !sameSchema(prev, s)) bad(`${where}: schema ${s.id} repeated with different content`);
    schemas.set(s.id, s);
  };
  const channelSeen = (ch: StrictChannel, where: string): void => {
    if (ch.schemaId !== 0 && !schemas.has(ch.schemaId)) bad(`${where}: channel ${ch.id} (${ch.topic}) uses schema ${ch.schemaId} before its Schema record`);
    const prev = channels.get(ch.id);
    if (prev && !sameChannel(prev, ch)) bad(`${where}: channel ${ch.id} repeated with different content`);
    channels.set(ch.id, ch);
  };
  const messageSeen = (m: StrictMessage, where: string): void => {
    if (!channels.has(m.channelId)) bad(`${where}: a message on channel ${m.channelId} before its Channel record`);
    if (lastLog !== null && m.logTime < lastLog) {
      stepsBack++;
      if (opts.requireLogTimeOrder && stepsBack <= 3) {
        bad(`${where}: log time goes back: ${m.logTime} after ${lastLog} (${channels.get(m.channelId)?.topic ?? m.channelId})`);
      }
    }
    lastLog = m.logTime;
    messages.push(m);
    counts.set(m.channelId, (counts.get(m.channelId) ?? 0n) + 1n);
  };

  let dataEndAt = -1;
  let lastChunk: ChunkSeen | null = null;
  let seenHeader = false;
  try {
    for (const r of records(file, 8, file.length - 8)) {
      const where = `record 0x${r.op.toString(16).padStart(2, "0")} at byte ${r.start}`;
      const c = r.body;
      if (!seenHeader) {
        if (r.op !== OP.header) {
          bad(`${where}: the first record is not the Header`);
          return report();
        }
        profile = c.str();
        c.str();
        seenHeader = true;
        continue;
      }
      if (r.op === OP.dataEnd) {
        dataEndAt = r.start;
        const crc = c.u32();
        const actual = crc32(file.subarray(0, r.start));
        if (crc === 0) bad(`${where}: DataEnd carries no data section CRC`);
        else if (crc !== actual) bad(`${where}: data section CRC 0x${crc.toString(16)}, the bytes give 0x${actual.toString(16)}`);
        break;
      }
      if (r.op !== OP.messageIndex) lastChunk = null;
      switch (r.op) {
        case OP.header:
          bad(`${where}: a second Header`);
          break;
        case OP.schema:
          schemaSeen(parseSchema(c), where);
          break;
        case OP.channel:
          channelSeen(parseChannel(c), where);
          break;
        case OP.message:
          messageSeen(parseMessage(c), where);
          break;
        case OP.chunk: {
          const seen = readChunk(r, where, { schemaSeen, channelSeen, messageSeen, bad });
          chunks.push(seen);
          lastChunk = seen;
          break;
        }
        case OP.messageIndex: {
          if (!lastChunk) {
            bad(`${where}: a Message Index that follows no chunk`);
            break;
          }
          const ch = c.u16();
          const len = c.u32();
          const entries: Array<[bigint, bigint]> = [];
          const stop = c.o + len;
          while (c.o < stop) entries.push([c.u64(), c.u64()]);
          lastChunk.indexOffsets.set(ch, BigInt(r.start));
          lastChunk.indexLength += BigInt(r.length);
          const want = lastChunk.messages.get(ch) ?? [];
          const key = (e: [bigint, bigint]) => `${e[0]}@${e[1]}`;
          const a = entries.map(key).sort();
          const b = want.map(key).sort();
          if (a.length !== b.length || a.some((x, i) => x !== b[i]))
            bad(`${where}: the Message Index of channel ${ch} lists ${a.length} messages, the chunk holds ${b.length} (or at other offsets/times)`);
          break;
        }
        case OP.attachment: {
          const logTime = c.u64();
          const createTime = c.u64();
          const name = c.str();
          const mediaType = c.str();
          const size = c.u64();
          c.bytes(Number(size));
          const crcAt = c.o;
          const crc = c.u32();
          const actual = crc32(file.subarray(r.start + 9, crcAt));
          if (crc !== 0 && crc !== actual) bad(`${where}: attachment ${name} CRC 0x${crc.toString(16)}, the bytes give 0x${actual.toString(16)}`);
          attachments.push(name);
          attachmentAt.set(r.start, { length: r.length, name, logTime, createTime, mediaType, dataSize: size });
          break;
        }
        case OP.metadata: {
          const name = c.str();
          metadata.set(
            name,
            c.map(
              () => c.str(),
              () => c.str(),
            ),
          );
          metadataAt.set(r.start, { length: r.length, name });
          break;
        }
        case OP.footer:
        case OP.chunkIndex:
        case OP.attachmentIndex:
        case OP.statistics:
        case OP.metadataIndex:
        case OP.summaryOffset:
          bad(`${where}: a summary record in the data section`);
          break;
        default:
          break; // unknown opcodes are allowed (and skipped)
      }
    }
  } catch (e) {
    bad(`unreadable data section: ${(e as Error).message}`);
    return report();
  }
  if (dataEndAt < 0) {
    bad("no DataEnd record");
    return report();
  }
  for (const ch of chunks) {
    for (const id of ch.messages.keys()) if (!ch.indexOffsets.has(id)) bad(`chunk at ${ch.start}: no Message Index for channel ${id}`);
  }

  // ---- summary section ----
  const summaryEnd = summaryOffsetStart || footerAt;
  if (summaryStart === 0) {
    bad("no summary section (footer summary_start 0)");
    return report();
  }
  if (summaryStart !== dataEndAt + 13) bad(`the summary starts at ${summaryStart}, not right after DataEnd (${dataEndAt + 13})`);
  const summarySchemas = new Map<number, StrictSchema>();
  const summaryChannels = new Map<number, StrictChannel>();
  const groups = new Map<number, { start: number; end: number }>();
  let stats: {
    messageCount: bigint;
    schemaCount: number;
    channelCount: number;
    attachmentCount: number;
    metadataCount: number;
    chunkCount: number;
    start: bigint;
    end: bigint;
    perChannel: Map<number, bigint>;
  } | null = null;
  const chunkIndexes: Array<Omit<ChunkSeen, "messages">> = [];
  const attachmentIndexes: Array<{ offset: number; length: number; logTime: bigint; createTime: bigint; dataSize: bigint; name: string; mediaType: string }> = [];
  const metadataIndexes: Array<{ offset: number; length: number; name: string }> = [];
  const offsets: Array<{ op: number; start: number; length: number }> = [];
  try {
    let prevOp = -1;
    for (const r of records(file, summaryStart, footerAt)) {
      const where = `summary record 0x${r.op.toString(16).padStart(2, "0")} at byte ${r.start}`;
      const c = r.body;
      if (r.start >= summaryEnd && r.op !== OP.summaryOffset) bad(`${where}: not a Summary Offset in the summary offset section`);
      if (r.start < summaryEnd) {
        if (r.op !== prevOp) {
          if (groups.has(r.op)) bad(`${where}: records of this kind are not grouped together`);
          groups.set(r.op, { start: r.start, end: r.start + r.length });
        } else groups.get(r.op)!.end = r.start + r.length;
        prevOp = r.op;
      }
      switch (r.op) {
        case OP.schema: {
          const s = parseSchema(c);
          summarySchemas.set(s.id, s);
          const d = schemas.get(s.id);
          if (!d) bad(`${where}: schema ${s.id} (${s.name}) is only in the summary, not in the data section`);
          else if (!sameSchema(d, s)) bad(`${where}: schema ${s.id} differs from the data section's`);
          break;
        }
        case OP.channel: {
          const ch = parseChannel(c);
          summaryChannels.set(ch.id, ch);
          const d = channels.get(ch.id);
          if (!d) bad(`${where}: channel ${ch.id} (${ch.topic}) is only in the summary, not in the data section`);
          else if (!sameChannel(d, ch)) bad(`${where}: channel ${ch.id} differs from the data section's`);
          break;
        }
        case OP.statistics:
          stats = {
            messageCount: c.u64(),
            schemaCount: c.u16(),
            channelCount: c.u32(),
            attachmentCount: c.u32(),
            metadataCount: c.u32(),
            chunkCount: c.u32(),
            start: c.u64(),
            end: c.u64(),
            perChannel: c.map(
              () => c.u16(),
              () => c.u64(),
            ),
          };
          break;
        case OP.chunkIndex:
          chunkIndexes.push({
            messageStartTime: c.u64(),
            messageEndTime: c.u64(),
            start: Number(c.u64()),
            length: Number(c.u64()),
            indexOffsets: c.map(
              () => c.u16(),
              () => c.u64(),
            ),
            indexLength: c.u64(),
            compression: c.str(),
            compressedSize: c.u64(),
            uncompressedSize: c.u64(),
          });
          break;
        case OP.attachmentIndex:
          attachmentIndexes.push({ offset: Number(c.u64()), length: Number(c.u64()), logTime: c.u64(), createTime: c.u64(), dataSize: c.u64(), name: c.str(), mediaType: c.str() });
          break;
        case OP.metadataIndex:
          metadataIndexes.push({ offset: Number(c.u64()), length: Number(c.u64()), name: c.str() });
          break;
        case OP.summaryOffset:
          if (r.start < summaryEnd) bad(`${where}: a Summary Offset before summary_offset_start`);
          offsets.push({ op: c.u8(), start: Number(c.u64()), length: Number(c.u64()) });
          break;
        default:
          bad(`${where}: a record that does not belong in the summary`);
      }
    }
  } catch (e) {
    bad(`unreadable summary section: ${(e as Error).message}`);
    return report();
  }
  const summaryCrcActual = crc32(file.subarray(summaryStart, footerAt + 1 + 8 + 16));
  if (summaryCrc === 0) bad("the footer carries no summary CRC");
  else if (summaryCrc !== summaryCrcActual) bad(`summary CRC 0x${summaryCrc.toString(16)}, the bytes give 0x${summaryCrcActual.toString(16)}`);

  for (const [id, s] of schemas) if (!summarySchemas.has(id)) bad(`schema ${id} (${s.name}) is in the data section but not repeated in the summary`);
  for (const [id, ch] of channels) if (!summaryChannels.has(id)) bad(`channel ${id} (${ch.topic}) is in the data section but not repeated in the summary`);

  // Statistics.
  if (!stats) bad("no Statistics record");
  else {
    const min = messages.reduce<bigint | null>((a, m) => (a === null || m.logTime < a ? m.logTime : a), null) ?? 0n;
    const max = messages.reduce<bigint | null>((a, m) => (a === null || m.logTime > a ? m.logTime : a), null) ?? 0n;
    const want = {
      messageCount: BigInt(messages.length),
      schemaCount: schemas.size,
      channelCount: channels.size,
      attachmentCount: attachmentAt.size,
      metadataCount: metadataAt.size,
      chunkCount: chunks.length,
      start: min,
      end: max,
    };
    for (const k of Object.keys(want) as Array<keyof typeof want>) {
      if (stats[k] !== want[k]) bad(`Statistics ${k} ${stats[k]}, the file holds ${want[k]}`);
    }
    for (const [id, n] of counts) if (stats.perChannel.get(id) !== n) bad(`Statistics: channel ${id} ${stats.perChannel.get(id) ?? "absent"}, the file holds ${n} messages`);
    for (const [id, n] of stats.perChannel) if (!counts.has(id) && n !== 0n) bad(`Statistics: channel ${id} ${n} messages, the file holds none`);
  }

  // Chunk indexes.
  if (chunkIndexes.length !== chunks.length) bad(`${chunkIndexes.length} Chunk Index records for ${chunks.length} chunks`);
  for (const ch of chunks) {
    const ix = chunkIndexes.find((x) => x.start === ch.start);
    if (!ix) {
      bad(`the chunk at ${ch.start} has no Chunk Index`);
      continue;
    }
    const fields = ["length", "messageStartTime", "messageEndTime", "indexLength", "compression", "compressedSize", "uncompressedSize"] as const;
    for (const f of fields) if (ix[f] !== ch[f]) bad(`Chunk Index of the chunk at ${ch.start}: ${f} ${String(ix[f])}, the chunk's ${String(ch[f])}`);
    if (ix.indexOffsets.size !== ch.indexOffsets.size || [...ch.indexOffsets].some(([k, v]) => ix.indexOffsets.get(k) !== v))
      bad(`Chunk Index of the chunk at ${ch.start}: message index offsets differ from where they are`);
  }
  // Attachment and metadata indexes.
  if (attachmentIndexes.length !== attachmentAt.size) bad(`${attachmentIndexes.length} Attachment Index records for ${attachmentAt.size} attachments`);
  for (const ix of attachmentIndexes) {
    const a = attachmentAt.get(ix.offset);
    if (!a) bad(`Attachment Index ${ix.name} points at ${ix.offset}, where no attachment starts`);
    else if (a.length !== ix.length || a.name !== ix.name || a.logTime !== ix.logTime || a.createTime !== ix.createTime || a.mediaType !== ix.mediaType || a.dataSize !== ix.dataSize)
      bad(`Attachment Index ${ix.name} differs from its attachment`);
  }
  if (metadataIndexes.length !== metadataAt.size) bad(`${metadataIndexes.length} Metadata Index records for ${metadataAt.size} metadata records`);
  for (const ix of metadataIndexes) {
    const m = metadataAt.get(ix.offset);
    if (!m || m.length !== ix.length || m.name !== ix.name) bad(`Metadata Index ${ix.name} does not point at its record`);
  }
  // Summary offsets: one per group, exactly covering it.
  for (const [op, g] of groups) {
    const o = offsets.find((x) => x.op === op);
    if (!o) bad(`no Summary Offset for the group of opcode 0x${op.toString(16)}`);
    else if (o.start !== g.start || o.length !== g.end - g.start) bad(`Summary Offset of opcode 0x${op.toString(16)}: ${o.start}+${o.length}, the group is ${g.start}+${g.end - g.start}`);
  }
  for (const o of offsets) if (!groups.has(o.op)) bad(`Summary Offset for opcode 0x${o.op.toString(16)}, which has no group`);
  return report();
}

interface Sinks {
  schemaSeen(s: StrictSchema, where: string): void;
  channelSeen(c: StrictChannel, where: string): void;
  messageSeen(m: StrictMessage, where: string): void;
  bad(p: string): void;
}

function readChunk(r: RawRecord, where: string, sinks: Sinks): ChunkSeen {
  const c = r.body;
  const messageStartTime = c.u64();
  const messageEndTime = c.u64();
  const uncompressedSize = c.u64();
  const uncompressedCrc = c.u32();
  const compression = c.str();
  const size = c.u64();
  const compressed = c.bytes(Number(size));
  const seen: ChunkSeen = {
    start: r.start,
    length: r.length,
    messageStartTime,
    messageEndTime,
    compression,
    compressedSize: size,
    uncompressedSize,
    messages: new Map(),
    indexOffsets: new Map(),
    indexLength: 0n,
  };
  let data: Uint8Array;
  if (compression === "") data = compressed;
  else if (compression === "zstd") data = zstd.decompress(compressed, Number(uncompressedSize));
  else {
    sinks.bad(`${where}: compression ${JSON.stringify(compression)} this checker does not read`);
    return seen;
  }
  if (BigInt(data.length) !== uncompressedSize) sinks.bad(`${where}: ${data.length} bytes uncompressed, the chunk says ${uncompressedSize}`);
  if (uncompressedCrc === 0) sinks.bad(`${where}: the chunk carries no CRC`);
  else if (crc32(data) !== uncompressedCrc) sinks.bad(`${where}: chunk CRC 0x${uncompressedCrc.toString(16)}, the records give 0x${crc32(data).toString(16)}`);
  let min: bigint | null = null;
  let max: bigint | null = null;
  for (const inner of records(data, 0, data.length)) {
    const w = `${where}, inner record 0x${inner.op.toString(16)} at ${inner.start}`;
    if (inner.op === OP.schema) sinks.schemaSeen(parseSchema(inner.body), w);
    else if (inner.op === OP.channel) sinks.channelSeen(parseChannel(inner.body), w);
    else if (inner.op === OP.message) {
      const m = parseMessage(inner.body);
      sinks.messageSeen(m, w);
      const list = seen.messages.get(m.channelId) ?? [];
      list.push([m.logTime, BigInt(inner.start)]);
      seen.messages.set(m.channelId, list);
      if (min === null || m.logTime < min) min = m.logTime;
      if (max === null || m.logTime > max) max = m.logTime;
    } else sinks.bad(`${w}: only Schema, Channel and Message records belong in a chunk`);
  }
  if ((min ?? 0n) !== messageStartTime || (max ?? 0n) !== messageEndTime) sinks.bad(`${where}: message times ${messageStartTime}..${messageEndTime}, its messages span ${min}..${max}`);
  return seen;
}
