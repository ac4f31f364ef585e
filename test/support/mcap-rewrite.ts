/**
 * Copies a recording through the MCAP library (not our writer): `order` may reorder its messages,
 * `edit` change a message's bytes (`n`: the message's 1-based count on its topic, in the source's
 * order). Header, schemas, channels, metadata and attachments are kept.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { McapStreamReader, type McapTypes, McapWriter, TempBuffer } from "@mcap/core";
import { compressZstd, DECOMPRESS_HANDLERS, loadZstd } from "../../src/record/mcap-io.js";

export interface RecordedMessage {
  readonly topic: string;
  readonly rec: McapTypes.Message;
}

export async function rewriteRecording(
  src: string,
  dst: string,
  how: { edit?: (topic: string, n: number, data: Uint8Array) => Uint8Array; order?: (messages: RecordedMessage[]) => RecordedMessage[] },
): Promise<void> {
  await loadZstd();
  const r = new McapStreamReader({ decompressHandlers: DECOMPRESS_HANDLERS });
  r.append(readFileSync(src));
  const out = new TempBuffer();
  const w = new McapWriter({ writable: out, compressChunk: compressZstd });
  const topics = new Map<number, string>();
  const ids = new Map<number, number>();
  const schemas = new Map<number, number>();
  const seen = new Map<string, number>();
  let messages: RecordedMessage[] = [];
  for (let rec = r.nextRecord(); rec; rec = r.nextRecord()) {
    if (rec.type === "Header") await w.start(rec);
    else if (rec.type === "Schema") schemas.set(rec.id, await w.registerSchema({ name: rec.name, encoding: rec.encoding, data: rec.data }));
    else if (rec.type === "Channel") {
      topics.set(rec.id, rec.topic);
      ids.set(rec.id, await w.registerChannel({ topic: rec.topic, messageEncoding: rec.messageEncoding, schemaId: rec.schemaId ? schemas.get(rec.schemaId)! : 0, metadata: rec.metadata }));
    } else if (rec.type === "Metadata") await w.addMetadata(rec);
    else if (rec.type === "Attachment") await w.addAttachment(rec);
    else if (rec.type === "Message") {
      const topic = topics.get(rec.channelId)!;
      const n = (seen.get(topic) ?? 0) + 1;
      seen.set(topic, n);
      messages.push({ topic, rec: how.edit ? { ...rec, data: how.edit(topic, n, rec.data) } : rec });
    }
  }
  if (how.order) messages = how.order(messages);
  for (const { rec } of messages) await w.addMessage({ ...rec, channelId: ids.get(rec.channelId)! });
  await w.end();
  writeFileSync(dst, out.get());
}
