/**
 * `bodylink lola-dump`: connect to a LoLA socket as a client (Aldebaran's LoLA on a robot, or
 * any LoLA-compatible server), send nothing, and record every sensor message exactly as received,
 * with its time, into an MCAP file (channel `/lola/upstream/sensor`). It is the LoLA half of
 * verify's robot recipe: `bodylink verify CAPTURE.pcap --lola DUMP.mcap` (docs/recordings.md).
 *
 * Framing and reconnects are LolaUpstream's (src/transport/lola-upstream.ts). Not real-time:
 * messages are copied and written as they come; the file is finished on `stop()`.
 */
import { BodylinkError, fileErrorText } from "../errors.js";
import { type Clock, MonotonicClock } from "../runtime/clock.js";
import { LolaUpstream } from "../transport/lola-upstream.js";
import { CHANNEL_BY_RING, METADATA_NAME, RECORDING_FORMAT_VERSION, RECORDING_PROFILE, RING_CHANNEL } from "./channels.js";
import { FileWritable, compressZstd, loadZstd } from "./mcap-io.js";
import { StrictMcapWriter } from "./mcap-writer.js";

export interface LolaDumpOptions {
  /** The LoLA socket. Defaults to /tmp/robocup. */
  lolaPath?: string;
  /** The MCAP file to write. */
  path: string;
  clock?: Clock;
  log?: (level: "info" | "warn", message: string) => void;
}

export class LolaDump {
  readonly path: string;
  messages = 0;
  readonly #upstream: LolaUpstream;
  readonly #writer: StrictMcapWriter;
  readonly #file: FileWritable;
  readonly #channel: number;
  readonly #clock: Clock;
  #chain: Promise<void> = Promise.resolve();
  #error: Error | null = null;

  private constructor(path: string, file: FileWritable, writer: StrictMcapWriter, channel: number, clock: Clock, opts: LolaDumpOptions) {
    this.path = path;
    this.#file = file;
    this.#writer = writer;
    this.#channel = channel;
    this.#clock = clock;
    this.#upstream = new LolaUpstream({
      path: opts.lolaPath ?? "/tmp/robocup",
      tap: { sensor: (b, n) => this.#message(b, n), command: () => {} },
      ...(opts.log ? { log: opts.log } : {}),
    });
  }

  static async start(opts: LolaDumpOptions): Promise<LolaDump> {
    await loadZstd();
    let file: FileWritable;
    try {
      file = await FileWritable.open(opts.path);
    } catch (e) {
      throw new BodylinkError("BL_ERR_RECORD_OPEN", opts.path, fileErrorText(e));
    }
    const clock = opts.clock ?? new MonotonicClock();
    const writer = new StrictMcapWriter({ writable: file, compressChunk: compressZstd, chunkSize: 256 * 1024 });
    await writer.start({ profile: RECORDING_PROFILE, library: "bodylink lola-dump" });
    const spec = CHANNEL_BY_RING.get(RING_CHANNEL.lolaUpstreamSensor)!;
    const channel = await writer.registerChannel({ topic: spec.topic, messageEncoding: spec.messageEncoding, schemaId: 0, metadata: new Map([["description", spec.description]]) });
    await writer.addMetadata({
      name: METADATA_NAME,
      metadata: new Map([
        ["format_version", String(RECORDING_FORMAT_VERSION)],
        ["body", "nao"],
        ["transport", `lola:${opts.lolaPath ?? "/tmp/robocup"}`],
        ["started_epoch_ms", String(clock.epochMs())],
      ]),
    });
    const d = new LolaDump(opts.path, file, writer, channel, clock, opts);
    d.#upstream.start();
    return d;
  }

  get status(): string {
    return this.#upstream.status;
  }

  #message(bytes: Uint8Array, length: number): void {
    if (this.#error) return;
    const data = bytes.slice(0, length);
    const t = BigInt(Math.round(this.#clock.epochMs() * 1000)) * 1000n;
    const sequence = ++this.messages;
    this.#chain = this.#chain
      .then(() => this.#writer.addMessage({ channelId: this.#channel, sequence, logTime: t, publishTime: t, data }))
      .catch((e: Error) => {
        this.#error ??= e;
      });
  }

  /** Disconnect and finish the file. Rejects (BL_ERR_RECORD_WRITE) when writing failed. */
  async stop(): Promise<void> {
    await this.#upstream.close();
    await this.#chain;
    if (!this.#error) {
      try {
        await this.#writer.end();
      } catch (e) {
        this.#error = e as Error;
      }
    }
    await this.#file.close().catch((e: Error) => {
      this.#error ??= e;
    });
    if (this.#error) throw new BodylinkError("BL_ERR_RECORD_WRITE", `cannot write ${this.path}: ${this.#error.message}`);
  }
}
