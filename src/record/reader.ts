/**
 * Reading recordings back, with the MCAP library's own readers:
 *
 * - {@link readRecordingInfo}: what `bodylink record --info` prints. A finished file is read
 *   through its summary (McapIndexedReader); a file without one (the recorder was killed, the
 *   disk filled) is streamed record by record (McapStreamReader) up to its last complete record,
 *   and the answer says it was cut short and where.
 * - {@link streamRecording}: every message in file order (the order the real-time side wrote
 *   them, which is what verify and replay pair frames and LoLA messages by), for finished and cut
 *   files alike.
 */
import { open, stat } from "node:fs/promises";
import { McapIndexedReader, McapStreamReader, type TypedMcapRecord } from "@mcap/core";
import { hasChestBoard } from "../bodies/parts.js";
import { BodylinkError, fileErrorText } from "../errors.js";
import { ChunkTooLargeError, DECOMPRESS_HANDLERS, FileReadable, loadZstd } from "./mcap-io.js";
import { METADATA_NAME } from "./channels.js";

export interface ChannelInfo {
  readonly id: number;
  readonly topic: string;
  readonly messageEncoding: string;
  /** Schema name and encoding, or null for a raw channel. */
  readonly schema: { readonly name: string; readonly encoding: string } | null;
  readonly messages: number;
}

export interface RecordingInfo {
  readonly path: string;
  readonly sizeBytes: number;
  /** True when the file has its summary and footer (the recorder finished). */
  readonly complete: boolean;
  /** For a cut file: the byte offset after its last complete record; else null. */
  readonly readableUpToByte: number | null;
  /** True when the file grew while it was read: a recorder is still writing it (not cut short). */
  readonly stillWriting: boolean;
  readonly profile: string;
  readonly library: string;
  readonly messages: number;
  readonly chunks: number;
  readonly compression: readonly string[];
  /** Log times of the first and last message, ns since the epoch (null when there are none). */
  readonly startNs: bigint | null;
  readonly endNs: bigint | null;
  readonly durationS: number;
  readonly channels: readonly ChannelInfo[];
  readonly attachments: ReadonlyArray<{ readonly name: string; readonly bytes: number }>;
  readonly metadata: ReadonlyArray<{ readonly name: string; readonly values: Readonly<Record<string, string>> }>;
}

export interface RecordedMessage {
  readonly topic: string;
  readonly channelId: number;
  readonly logTimeNs: bigint;
  readonly data: Uint8Array;
}

const READ_BYTES = 1 << 20;

/** Refuse, in words, a path that is missing or not a file (a directory opens, then fails to read). */
async function readableFile(path: string): Promise<void> {
  let isFile: boolean;
  try {
    isFile = (await stat(path)).isFile();
  } catch (e) {
    throw new BodylinkError("BL_ERR_RECORD_READ", path, fileErrorText(e));
  }
  if (!isFile) throw new BodylinkError("BL_ERR_RECORD_READ", path, "not a file (a directory?)");
  await requireMcapMagic(path);
}

/** MCAP's magic, the file's first bytes (the spec's Magic: 0x89 "MCAP" "0" "\r\n"). */
const MCAP_MAGIC = Uint8Array.of(0x89, 0x4d, 0x43, 0x41, 0x50, 0x30, 0x0d, 0x0a);

/**
 * The one check every reader of a recording makes first (`record --info`, `verify`, `replay`,
 * `export`): an empty file, a text file, a capture or anything else without MCAP's magic is
 * "not an MCAP file", in the same words for all of them.
 */
async function requireMcapMagic(path: string): Promise<void> {
  const head = new Uint8Array(MCAP_MAGIC.length);
  let n: number;
  try {
    const fh = await open(path, "r");
    try {
      n = (await fh.read(head, 0, head.length, 0)).bytesRead;
    } finally {
      await fh.close();
    }
  } catch (e) {
    throw new BodylinkError("BL_ERR_RECORD_READ", path, fileErrorText(e));
  }
  if (n === 0) throw new BodylinkError("BL_ERR_RECORD_READ", path, "not an MCAP file (it is empty)");
  if (n < head.length || !head.every((b, i) => b === MCAP_MAGIC[i])) throw new BodylinkError("BL_ERR_RECORD_READ", path, "not an MCAP file (no header)");
}

/** Stream every record of `path` (file order). Yields the stream's records; the last value says where it stopped. */
async function* records(path: string): AsyncGenerator<TypedMcapRecord, { complete: boolean; consumed: number; size: number; grew: boolean }> {
  await loadZstd();
  await readableFile(path);
  let fh: Awaited<ReturnType<typeof open>>;
  try {
    fh = await open(path, "r");
  } catch (e) {
    throw new BodylinkError("BL_ERR_RECORD_READ", path, fileErrorText(e));
  }
  try {
    const size = (await fh.stat()).size;
    const reader = new McapStreamReader({ decompressHandlers: DECOMPRESS_HANDLERS, includeChunks: true });
    const buf = new Uint8Array(READ_BYTES);
    let pos = 0;
    for (;;) {
      const { bytesRead } = await fh.read(buf, 0, READ_BYTES, pos);
      if (bytesRead === 0) break;
      pos += bytesRead;
      reader.append(buf.subarray(0, bytesRead));
      for (;;) {
        let rec: TypedMcapRecord | undefined;
        try {
          rec = reader.nextRecord();
        } catch (e) {
          if (e instanceof ChunkTooLargeError) throw new BodylinkError("BL_ERR_RECORD_READ", path, e.message);
          throw new BodylinkError("BL_ERR_RECORD_READ", path, `not a readable MCAP file (${(e as Error).message})`);
        }
        if (!rec) break;
        yield rec;
      }
      if (reader.done()) break;
    }
    // A file still being written grows while it is read: its size is what was there at the end.
    const after = (await fh.stat()).size;
    return { complete: reader.done(), consumed: pos - reader.bytesRemaining(), size: Math.max(size, after, pos), grew: after > size || pos > size };
  } finally {
    await fh.close();
  }
}

/** Every message of `path` in file order, with its topic; `onEnd` learns whether the file was complete. */
export async function* streamRecording(path: string, onEnd?: (r: { complete: boolean; consumed: number; size: number; grew: boolean }) => void): AsyncGenerator<RecordedMessage> {
  const topics = new Map<number, string>();
  const it = records(path);
  try {
    for (;;) {
      const n = await it.next();
      if (n.done) {
        onEnd?.(n.value);
        return;
      }
      const r = n.value;
      if (r.type === "Channel") topics.set(r.id, r.topic);
      else if (r.type === "Message") yield { topic: topics.get(r.channelId) ?? `#${r.channelId}`, channelId: r.channelId, logTimeNs: r.logTime, data: r.data };
    }
  } finally {
    await it.return({ complete: false, consumed: 0, size: 0, grew: false }); // closes the file when the caller stops early
  }
}

/** Attachments of `path` by name (streamed, so a cut file's early attachments are found too). */
export async function readAttachments(path: string): Promise<Map<string, Uint8Array>> {
  const out = new Map<string, Uint8Array>();
  const it = records(path);
  for (;;) {
    const n = await it.next();
    if (n.done) return out;
    if (n.value.type === "Attachment") out.set(n.value.name, n.value.data);
  }
}

export async function readRecordingInfo(path: string): Promise<RecordingInfo> {
  await loadZstd();
  await readableFile(path);
  let readable: FileReadable;
  try {
    readable = await FileReadable.open(path);
  } catch (e) {
    throw new BodylinkError("BL_ERR_RECORD_READ", path, fileErrorText(e));
  }
  const size = Number(await readable.size());
  try {
    const r = await McapIndexedReader.Initialize({ readable, decompressHandlers: DECOMPRESS_HANDLERS });
    const counts = r.statistics?.channelMessageCounts ?? new Map<number, bigint>();
    const channels = [...r.channelsById.values()].map((c) => {
      const s = c.schemaId ? r.schemasById.get(c.schemaId) : undefined;
      return { id: c.id, topic: c.topic, messageEncoding: c.messageEncoding, schema: s ? { name: s.name, encoding: s.encoding } : null, messages: Number(counts.get(c.id) ?? 0n) };
    });
    const metadata: Array<{ name: string; values: Record<string, string> }> = [];
    for await (const m of r.readMetadata()) metadata.push({ name: m.name, values: Object.fromEntries(m.metadata) });
    const attachments: Array<{ name: string; bytes: number }> = [];
    for await (const a of r.readAttachments()) attachments.push({ name: a.name, bytes: a.data.length });
    const startNs = r.statistics && r.statistics.messageCount > 0n ? r.statistics.messageStartTime : null;
    const endNs = r.statistics && r.statistics.messageCount > 0n ? r.statistics.messageEndTime : null;
    return {
      path,
      sizeBytes: size,
      complete: true,
      readableUpToByte: null,
      stillWriting: false,
      profile: r.header.profile,
      library: r.header.library,
      messages: Number(r.statistics?.messageCount ?? 0n),
      chunks: r.chunkIndexes.length,
      compression: [...new Set(r.chunkIndexes.map((c) => c.compression || "none"))],
      startNs,
      endNs,
      durationS: startNs !== null && endNs !== null ? Number(endNs - startNs) / 1e9 : 0,
      channels,
      attachments,
      metadata,
    };
  } catch {
    // No summary (or a damaged one): stream what is there.
  } finally {
    await readable.close();
  }
  return streamedInfo(path);
}

async function streamedInfo(path: string): Promise<RecordingInfo> {
  let profile = "";
  let library = "";
  const schemas = new Map<number, { name: string; encoding: string }>();
  const channels = new Map<number, { id: number; topic: string; messageEncoding: string; schemaId: number; messages: number }>();
  const attachments: Array<{ name: string; bytes: number }> = [];
  const metadata: Array<{ name: string; values: Record<string, string> }> = [];
  const compression = new Set<string>();
  let messages = 0;
  let chunks = 0;
  let startNs: bigint | null = null;
  let endNs: bigint | null = null;
  const it = records(path);
  let end: { complete: boolean; consumed: number; size: number; grew: boolean };
  for (;;) {
    const n = await it.next();
    if (n.done) {
      end = n.value;
      break;
    }
    const r = n.value;
    if (r.type === "Header") {
      profile = r.profile;
      library = r.library;
    } else if (r.type === "Schema") schemas.set(r.id, { name: r.name, encoding: r.encoding });
    else if (r.type === "Channel") {
      if (!channels.has(r.id)) channels.set(r.id, { id: r.id, topic: r.topic, messageEncoding: r.messageEncoding, schemaId: r.schemaId, messages: 0 });
    } else if (r.type === "Chunk") {
      chunks++;
      compression.add(r.compression || "none");
    } else if (r.type === "Message") {
      messages++;
      const c = channels.get(r.channelId);
      if (c) c.messages++;
      if (startNs === null || r.logTime < startNs) startNs = r.logTime;
      if (endNs === null || r.logTime > endNs) endNs = r.logTime;
    } else if (r.type === "Attachment") attachments.push({ name: r.name, bytes: r.data.length });
    else if (r.type === "Metadata") metadata.push({ name: r.name, values: Object.fromEntries(r.metadata) });
  }
  if (!profile && messages === 0) throw new BodylinkError("BL_ERR_RECORD_READ", path, "not an MCAP file (no header)");
  return {
    path,
    sizeBytes: end.size,
    complete: end.complete,
    readableUpToByte: end.complete ? null : end.consumed,
    stillWriting: !end.complete && end.grew,
    profile,
    library,
    messages,
    chunks,
    compression: [...compression],
    startNs,
    endNs,
    durationS: startNs !== null && endNs !== null ? Number(endNs - startNs) / 1e9 : 0,
    channels: [...channels.values()].map((c) => ({ id: c.id, topic: c.topic, messageEncoding: c.messageEncoding, schema: schemas.get(c.schemaId) ?? null, messages: c.messages })),
    attachments,
    metadata,
  };
}

/** `bodylink record --info`'s text. */
/**
 * Why `path` cannot be verified or replayed when it records another body than the NAO (its
 * metadata's body), else null. For verify's and replay's errors: they read NAO chest-board frames.
 */
export async function notANaoRecording(path: string, what: "verify" | "replay"): Promise<string | null> {
  let body: string | undefined;
  try {
    body = (await readRecordingInfo(path)).metadata.find((m) => m.name === METADATA_NAME)?.values.body;
  } catch {
    return null; // unreadable: the caller's own error says what is missing
  }
  if (!body || hasChestBoard(body)) return null; // verify and replay read chest-board frames
  return `${path} records a ${body} (metadata body=${body}): ${what} works on NAO recordings (chest-board frames and LoLA messages); read its /${body}/state with any MCAP reader (docs/recordings.md)`;
}

export function formatRecordingInfo(i: RecordingInfo): string[] {
  const lines: string[] = [];
  const start = i.startNs !== null ? new Date(Number(i.startNs / 1_000_000n)).toISOString() : "-";
  lines.push(
    `${i.path}: ${(i.sizeBytes / 1e6).toFixed(2)} MB, ${i.durationS.toFixed(1)} s from ${start}, ${i.messages.toLocaleString("en-US")} messages in ${i.chunks} chunks (${i.compression.join(", ") || "none"})`,
  );
  if (i.complete) lines.push("complete: summary and footer present");
  else if (i.stillWriting)
    lines.push(
      `STILL BEING WRITTEN: it grew while it was read (a recorder is writing it; its summary comes when it stops); read up to byte ${i.readableUpToByte?.toLocaleString("en-US")} of ${i.sizeBytes.toLocaleString("en-US")}, counts below are what was read`,
    );
  else
    lines.push(
      `CUT SHORT: no summary or footer (the recorder did not finish: killed, or the disk filled); readable up to byte ${i.readableUpToByte?.toLocaleString("en-US")} of ${i.sizeBytes.toLocaleString("en-US")}, counts below are what was read`,
    );
  const w = Math.max(5, ...i.channels.map((c) => c.topic.length));
  const e = Math.max(8, ...i.channels.map((c) => c.messageEncoding.length));
  lines.push(`  ${"topic".padEnd(w)}  ${"encoding".padEnd(e)}  ${"schema".padEnd(22)}  messages`);
  for (const c of i.channels) {
    const schema = c.schema ? `${c.schema.name} (${c.schema.encoding})` : "(raw, docs/recordings.md)";
    lines.push(`  ${c.topic.padEnd(w)}  ${c.messageEncoding.padEnd(e)}  ${schema.padEnd(22)}  ${c.messages.toLocaleString("en-US")}`);
  }
  for (const a of i.attachments) lines.push(`attachment ${a.name}: ${a.bytes} bytes`);
  for (const m of i.metadata)
    lines.push(
      `metadata ${m.name}: ${Object.entries(m.values)
        .map(([k, v]) => `${k}=${v}`)
        .join(" ")}`,
    );
  return lines;
}
