/**
 * An MCAP writer that follows the spec's record order to the letter (foxglove/mcap
 * website/docs/spec), built on @mcap/core's record serialisers (McapRecordBuilder,
 * McapChunkBuilder): the bytes of each record are the library's, the order is ours.
 *
 * Why not @mcap/core's McapWriter (2.2.2): it writes a channel's Schema and Channel records only
 * with the channel's first message, so a channel that never gets one (no LoLA client, no P7
 * command) is only in the summary, which the spec forbids (summary records "are duplicates of …
 * records throughout the Data section"; `mcap doctor` calls it an error). Here `registerSchema` and
 * `registerChannel` write their record into the data section at once: before the first chunk for
 * what is known at start, or into the open chunk ahead of any message that uses it.
 *
 * The rest is what McapWriter does: chunks (compressed by `compressChunk`) with their Message
 * Index records, the data section CRC in DataEnd, and a summary with every schema and channel,
 * Statistics, Metadata, Attachment and Chunk Indexes, Summary Offsets and the summary CRC.
 *
 * Consumer side (the recorder's drain): allocates. Callers await each call before the next.
 */
import { crc32 } from "node:zlib";
import { McapChunkBuilder, McapRecordBuilder, Opcode, type IWritable, type McapTypes } from "@mcap/core";

export interface StrictMcapWriterOptions {
  readonly writable: IWritable;
  /** Uncompressed bytes of messages per chunk before it is closed. Defaults to 1 MiB. */
  readonly chunkSize?: number;
  /** Compresses a chunk's records; without one chunks are stored as they are. */
  readonly compressChunk?: (data: Uint8Array) => { compression: string; compressedData: Uint8Array };
}

export class StrictMcapWriter {
  readonly #writable: IWritable;
  readonly #chunkSize: number;
  readonly #compress: StrictMcapWriterOptions["compressChunk"];
  readonly #out = new McapRecordBuilder();
  readonly #chunk = new McapChunkBuilder({ useMessageIndex: true });
  readonly #schemas = new Map<number, McapTypes.Schema>();
  readonly #channels = new Map<number, McapTypes.Channel>();
  readonly #chunkIndexes: McapTypes.ChunkIndex[] = [];
  readonly #attachmentIndexes: McapTypes.AttachmentIndex[] = [];
  readonly #metadataIndexes: McapTypes.MetadataIndex[] = [];
  readonly #perChannel = new Map<number, bigint>();
  #dataCrc = 0;
  #messages = 0n;
  #startTime = 0n;
  #endTime = 0n;
  #attachments = 0;
  #metadata = 0;
  #started = false;
  #ended = false;

  constructor(opts: StrictMcapWriterOptions) {
    this.#writable = opts.writable;
    this.#chunkSize = opts.chunkSize ?? 1024 * 1024;
    this.#compress = opts.compressChunk;
  }

  /** Magic and Header. */
  async start(header: McapTypes.Header): Promise<void> {
    if (this.#started) throw new Error("StrictMcapWriter: start() twice");
    this.#started = true;
    this.#out.writeMagic();
    this.#out.writeHeader(header);
    await this.#flushData();
  }

  /** Writes the Schema record now (data section) and returns its id (1, 2, …). */
  async registerSchema(info: Omit<McapTypes.Schema, "id">): Promise<number> {
    this.#open();
    const schema = { ...info, id: this.#schemas.size + 1 };
    this.#schemas.set(schema.id, schema);
    if (this.#chunk.numMessages > 0) this.#chunk.addSchema(schema);
    else {
      this.#out.writeSchema(schema);
      await this.#flushData();
    }
    return schema.id;
  }

  /** Writes the Channel record now (data section) and returns its id (0, 1, …). Its schema must be registered. */
  async registerChannel(info: Omit<McapTypes.Channel, "id">): Promise<number> {
    this.#open();
    if (info.schemaId !== 0 && !this.#schemas.has(info.schemaId)) throw new Error(`StrictMcapWriter: channel ${info.topic} uses schema ${info.schemaId}, which was not registered`);
    const channel = { ...info, id: this.#channels.size };
    this.#channels.set(channel.id, channel);
    if (this.#chunk.numMessages > 0) this.#chunk.addChannel(channel);
    else {
      this.#out.writeChannel(channel);
      await this.#flushData();
    }
    return channel.id;
  }

  async addMessage(message: McapTypes.Message): Promise<void> {
    this.#open();
    if (!this.#channels.has(message.channelId)) throw new Error(`StrictMcapWriter: a message on channel ${message.channelId}, which was not registered`);
    if (this.#messages === 0n || message.logTime < this.#startTime) this.#startTime = message.logTime;
    if (this.#messages === 0n || message.logTime > this.#endTime) this.#endTime = message.logTime;
    this.#messages++;
    this.#perChannel.set(message.channelId, (this.#perChannel.get(message.channelId) ?? 0n) + 1n);
    this.#chunk.addMessage(message);
    if (this.#chunk.byteLength > this.#chunkSize) await this.#finishChunk();
  }

  async addAttachment(attachment: McapTypes.Attachment): Promise<void> {
    this.#open();
    const offset = this.#writable.position();
    const length = this.#out.writeAttachment(attachment);
    this.#attachments++;
    this.#attachmentIndexes.push({
      offset,
      length,
      logTime: attachment.logTime,
      createTime: attachment.createTime,
      dataSize: BigInt(attachment.data.byteLength),
      name: attachment.name,
      mediaType: attachment.mediaType,
    });
    await this.#flushData();
  }

  async addMetadata(metadata: McapTypes.Metadata): Promise<void> {
    this.#open();
    const offset = this.#writable.position();
    const length = this.#out.writeMetadata(metadata);
    this.#metadata++;
    this.#metadataIndexes.push({ offset, length, name: metadata.name });
    await this.#flushData();
  }

  /** The open chunk, DataEnd, the summary and the footer. */
  async end(): Promise<void> {
    this.#open();
    await this.#finishChunk();
    this.#ended = true;
    this.#out.writeDataEnd({ dataSectionCrc: this.#dataCrc });
    await this.#write();

    const summaryStart = this.#writable.position();
    let summaryCrc = 0;
    const offsets: McapTypes.SummaryOffset[] = [];
    const group = async (opcode: number, write: () => void): Promise<void> => {
      const groupStart = this.#writable.position();
      write();
      const groupLength = BigInt(this.#out.length);
      if (groupLength > 0n) offsets.push({ groupOpcode: opcode, groupStart, groupLength });
      summaryCrc = crc32(this.#out.buffer, summaryCrc);
      await this.#write();
    };
    await group(Opcode.SCHEMA, () => {
      for (const s of this.#schemas.values()) this.#out.writeSchema(s);
    });
    await group(Opcode.CHANNEL, () => {
      for (const c of this.#channels.values()) this.#out.writeChannel(c);
    });
    await group(Opcode.STATISTICS, () => {
      this.#out.writeStatistics({
        messageCount: this.#messages,
        schemaCount: this.#schemas.size,
        channelCount: this.#channels.size,
        attachmentCount: this.#attachments,
        metadataCount: this.#metadata,
        chunkCount: this.#chunkIndexes.length,
        messageStartTime: this.#startTime,
        messageEndTime: this.#endTime,
        channelMessageCounts: this.#perChannel,
      });
    });
    await group(Opcode.METADATA_INDEX, () => {
      for (const m of this.#metadataIndexes) this.#out.writeMetadataIndex(m);
    });
    await group(Opcode.ATTACHMENT_INDEX, () => {
      for (const a of this.#attachmentIndexes) this.#out.writeAttachmentIndex(a);
    });
    await group(Opcode.CHUNK_INDEX, () => {
      for (const c of this.#chunkIndexes) this.#out.writeChunkIndex(c);
    });
    const summaryOffsetStart = this.#writable.position();
    for (const o of offsets) this.#out.writeSummaryOffset(o);
    summaryCrc = crc32(this.#out.buffer, summaryCrc);
    await this.#write();
    // The footer's CRC covers the summary through the footer's summary_offset_start field.
    const head = new DataView(new ArrayBuffer(1 + 8 + 8 + 8));
    head.setUint8(0, Opcode.FOOTER);
    head.setBigUint64(1, 20n, true);
    head.setBigUint64(9, summaryStart, true);
    head.setBigUint64(17, summaryOffsetStart, true);
    summaryCrc = crc32(new Uint8Array(head.buffer), summaryCrc);
    this.#out.writeFooter({ summaryStart, summaryOffsetStart, summaryCrc });
    this.#out.writeMagic();
    await this.#write();
  }

  #open(): void {
    if (!this.#started) throw new Error("StrictMcapWriter: call start() first");
    if (this.#ended) throw new Error("StrictMcapWriter: already ended");
  }

  /** Closes the open chunk (if it holds messages) and writes it with its Message Index records. */
  async #finishChunk(): Promise<void> {
    const chunk = this.#chunk;
    if (chunk.numMessages === 0) return;
    const records = chunk.buffer;
    const uncompressedCrc = crc32(records);
    const { compression, compressedData } = this.#compress ? this.#compress(records) : { compression: "", compressedData: records };
    const chunkStartOffset = this.#writable.position();
    const chunkLength = this.#out.writeChunk({
      messageStartTime: chunk.messageStartTime,
      messageEndTime: chunk.messageEndTime,
      uncompressedSize: BigInt(records.byteLength),
      uncompressedCrc,
      compression,
      records: compressedData,
    });
    const indexStart = chunkStartOffset + chunkLength;
    const messageIndexOffsets = new Map<number, bigint>();
    let messageIndexLength = 0n;
    for (const index of chunk.indices) {
      messageIndexOffsets.set(index.channelId, indexStart + messageIndexLength);
      messageIndexLength += this.#out.writeMessageIndex(index);
    }
    this.#chunkIndexes.push({
      messageStartTime: chunk.messageStartTime,
      messageEndTime: chunk.messageEndTime,
      chunkStartOffset,
      chunkLength,
      messageIndexOffsets,
      messageIndexLength,
      compression,
      compressedSize: BigInt(compressedData.byteLength),
      uncompressedSize: BigInt(records.byteLength),
    });
    chunk.reset();
    await this.#flushData();
  }

  /** Hands the built records to the file, counting them into the data section's CRC. */
  async #flushData(): Promise<void> {
    this.#dataCrc = crc32(this.#out.buffer, this.#dataCrc);
    await this.#write();
  }

  async #write(): Promise<void> {
    await this.#writable.write(this.#out.buffer);
    this.#out.reset();
  }
}
