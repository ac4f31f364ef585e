/**
 * The recorder: drains the recording ring into MCAP files (`@mcap/core`'s writer, chunked,
 * zstd-compressed, indexed), one channel per stream (channels.ts).
 *
 * Who runs where: the real-time side only copies bytes into the ring (tap.ts; a cycle listener
 * adds the decoded state). Everything else — JSON, compression, the file — happens here, after
 * a cycle (setImmediate from the cycle listener, so it lands in the slack before the next
 * deadline) and through libuv's thread pool for the disk. The ring is a SharedArrayBuffer, so the
 * same recorder keeps working when the cycle moves into a worker thread.
 *
 * Failure never reaches the runtime: a write error (a full disk, a removed drive) stops the
 * recording with one line and `onStop(reason)`; the robot keeps running. A full ring (the
 * recorder fell seconds behind) is recorded as a `recording_gap` event with the count lost.
 *
 * A killed recorder leaves a file without its summary: every chunk written so far is still
 * readable, and `bodylink record --info` says the file was cut short (info.ts).
 */
import type { EventEmitter } from "node:events";
import { basename, dirname, extname, join } from "node:path";
import { RECORDER_BODIES, type RecordedBody, type RecordedRuntime, type RecordEvent, UNKNOWN_BODY } from "./bodies.js";
import type { CycleListener } from "../runtime/loop.js";
import type { BodyAdapter } from "../serve/api/adapter.js";
import { adapterFor } from "../serve/api/build.js";
import { stateSchema } from "../serve/api/schemas.js";
import { BodylinkError, fileErrorText } from "../errors.js";
import { toHex } from "../wire/bytes.js";
import type { ByteRing, RingRecordHandler } from "../shm/ring.js";
import {
  CHANNELS,
  CHANNEL_BY_RING,
  EVENT_SCHEMA,
  METADATA_NAME,
  PREFS_ATTACHMENT,
  RECORDING_FORMAT_VERSION,
  RECORDING_PROFILE,
  RING_CHANNEL,
  TRANSFER_HEADER_BYTES,
  TRANSFER_OP_NAME,
  TRANSFER_SCHEMA,
  EVENT_LOG_LEVEL,
  LOG_LEVEL,
  VIEWER_3D_CHANNELS,
  channelBody,
} from "./channels.js";
import { type DecodedState, P7_COMMAND_RECORD_SCHEMA, P7_STATE_RECORD_SCHEMA, readP7Command, type StateRecordDecoder, TNY360_STATE_RECORD_SCHEMA } from "./body-state-record.js";
import { LogTimeOrder } from "./log-time-order.js";
import { FileWritable, compressZstd, loadZstd } from "./mcap-io.js";
import { StrictMcapWriter } from "./mcap-writer.js";
import { type ViewerSchema, viewerJson, viewerSchema } from "./viewer-schema.js";
import { SCENE_EVERY_MS, TF_EVERY_MS, Viewer3d } from "./viewer-3d.js";
import { FRAME_TRANSFORMS_SCHEMA, LOG_SCHEMA, SCENE_UPDATE_SCHEMA } from "./foxglove-schemas.js";
import { NAO_STATE_SCHEMA, readNaoStateRecord } from "./nao-state-record.js";
import { PreferenceAssembler } from "./prefs-from-frames.js";
import type { RecordTap } from "./tap.js";

/** Ring size: ~10 s of a NAO's traffic (frames, LoLA, state ≈ 250 kB/s), so a stalled disk or GC never loses data. */
export const RECORD_RING_BYTES = 8 * 1024 * 1024;
/** Chunk size before compression: ~1 s of NAO traffic; compressing one takes ~1 ms here. */
export const DEFAULT_CHUNK_BYTES = 256 * 1024;
const API_STATE_EVERY_MS = 50;
/**
 * How long a message waits in memory for older ones before it is written (log time; see
 * log-time-order.ts). The largest step back measured was 51 ms (an event behind a cycle's state).
 */
export const ORDER_WINDOW_MS = 1000;

export interface RecorderOptions {
  /**
   * The file to write, e.g. "run.mcap". With `splitMb`, files are named run-0001.mcap, run-0002.mcap, …
   * Without one, nothing is written: the recorder only hands messages to its listeners (the live Foxglove server).
   */
  path?: string;
  /** Start a new file once the current one reaches this many MB (10^6 bytes). Defaults to none. */
  splitMb?: number;
  /** Stop after this many seconds. Defaults to none (until `stop()`). */
  durationS?: number;
  /** Uncompressed chunk size, bytes. Defaults to 256 KiB. */
  chunkBytes?: number;
  /**
   * NAO: the raw preference block, when the recording starts after the preference reads have left
   * the ring (the recorder otherwise rebuilds it from the recorded answer frames). Attached to every file.
   */
  prefsBlock?: Uint8Array;
  /** Library name written into the MCAP header. */
  library?: string;
  /** Called once when the recording ends by itself: `reason` null after `durationS`, else why it failed. */
  onStop?: (reason: string | null) => void;
  /** Where the one-line failure report goes. Defaults to stderr. */
  log?: (line: string) => void;
}

export interface RecordingProgress {
  readonly elapsedS: number;
  readonly messages: number;
  /** Bytes written to files so far (all parts). */
  readonly bytes: number;
  readonly mbPerMin: number;
  readonly files: readonly string[];
  /** Records the ring refused (the recorder fell behind). */
  readonly dropped: number;
  readonly stopped: boolean;
  /** Why it stopped on its own, or null. */
  readonly failure: string | null;
}

/** What a recorder records from: the ring the tap writes, and the runtime. */
export interface RecordSource {
  readonly tap: RecordTap;
  /** The body; its `loop` when the core runs on this thread (a threaded core records into `core` instead). */
  readonly robot: RecordedRuntime;
  /** "sim", "usb", "replay", … for the metadata. */
  readonly transport: string;
  /**
   * The threaded core's own ring (src/rt/<body>-worker.ts is its one producer: the state of every
   * cycle, late cycles, the NAO's frames and LoLA bytes), drained beside the tap's, which then
   * carries only the main thread's records (leases, e-stops, the API state, the NAO's link
   * changes). Null when the core runs here.
   */
  readonly core?: ByteRing | null;
}

interface Pending {
  channelId: number;
  logTime: bigint;
  data: Uint8Array;
}

const te = new TextEncoder();
const td = new TextDecoder();

function nsOf(epochMs: number): bigint {
  return BigInt(Math.round(epochMs * 1000)) * 1000n;
}

/** The file name of part `index` (1-based) of a split recording. */
export function splitPath(path: string, index: number): string {
  const ext = extname(path) || ".mcap";
  return join(dirname(path), `${basename(path, extname(path))}-${String(index).padStart(4, "0")}${ext}`);
}

export class Recorder {
  readonly #src: RecordSource;
  readonly #ring: ByteRing;
  readonly #core: ByteRing | null;
  readonly #onHostRecord: RingRecordHandler;
  readonly #onCoreRecord: RingRecordHandler | null;
  readonly #opts: RecorderOptions;
  readonly #log: (line: string) => void;
  readonly #adapter: BodyAdapter | null;
  /** What this body records of its own (record/bodies.ts). */
  readonly #body: RecordedBody;
  /** The body's per-cycle state record: its ring channel and decoder (null for a NAO: frames and NaoState). */
  readonly #bodyState: { readonly ring: number; readonly decode: StateRecordDecoder } | null;
  #lastBodyLink = "";
  readonly #prefs = new PreferenceAssembler();
  #prefsBlock: Uint8Array | null = null;
  #prefsAttached = false;
  #writer: StrictMcapWriter | null = null;
  #file: FileWritable | null = null;
  readonly #files: string[] = [];
  #bytesClosed = 0;
  /** Ring channel → MCAP channel id in the current file. */
  #ids = new Map<number, number>();
  readonly #seq = new Map<number, number>();
  readonly #viewers = new Map<number, ViewerSchema>();
  /** The robot in the viewers' 3D panel: its frames and shapes, from the decoded states. */
  readonly #viewer3d: Viewer3d | null;
  readonly #viewer3dChannels: { readonly tf: number; readonly scene: number } | null;
  #lastTfMs = Number.NEGATIVE_INFINITY;
  #lastSceneMs = Number.NEGATIVE_INFINITY;
  readonly #queue = new LogTimeOrder<Pending>(BigInt(ORDER_WINDOW_MS) * 1_000_000n);
  /** Hand every held message to the writer now (flush, stop), not only those past the window. */
  #writeAll = false;
  readonly #listeners: Array<(channel: number, logTimeNs: bigint, data: Uint8Array) => void> = [];
  #pumping: Promise<void> | null = null;
  #messages = 0;
  #droppedSeen = 0;
  #startedMs = 0;
  #stopped = false;
  #stopping: Promise<void> | null = null;
  #failure: string | null = null;
  #drainScheduled = false;
  readonly #unsubscribe: Array<() => void> = [];
  readonly #timers: NodeJS.Timeout[] = [];
  // Per-cycle change detection (perform side: compares, allocates only on a change).
  #lastLate = 0;
  #lastApiSeq = -1;

  private constructor(src: RecordSource, opts: RecorderOptions) {
    this.#src = src;
    this.#ring = src.tap.ring;
    this.#core = src.core ?? null;
    this.#onHostRecord = this.#recordFrom(this.#ring);
    this.#onCoreRecord = this.#core ? this.#recordFrom(this.#core) : null;
    this.#opts = opts;
    this.#log = opts.log ?? ((l) => console.error(l));
    const kind = src.robot.kind;
    this.#body = (RECORDER_BODIES[kind] ?? UNKNOWN_BODY)(src.robot, src.tap, !this.#core);
    this.#bodyState = this.#body.stateRecord;
    let adapter: BodyAdapter | null = null;
    try {
      adapter = adapterFor(src.robot as Parameters<typeof adapterFor>[0]);
    } catch {
      adapter = null; // a runtime the robot API does not know (tests' fakes): no /api/state
    }
    this.#adapter = adapter;
    this.#prefsBlock = opts.prefsBlock ?? null;
    // (A runtime of no registered body, a test's fake, has none.)
    this.#viewer3d = kind in VIEWER_3D_CHANNELS ? new Viewer3d(kind) : null;
    this.#viewer3dChannels = this.#viewer3d ? VIEWER_3D_CHANNELS[kind] : null;
  }

  /** Open the first file and start draining. Rejects (BL_ERR_RECORD_OPEN) when the file cannot be created. */
  static async start(src: RecordSource, opts: RecorderOptions): Promise<Recorder> {
    if (opts.splitMb !== undefined && !(opts.splitMb > 0)) throw new RangeError(`splitMb must be > 0, got ${opts.splitMb}`);
    if (opts.durationS !== undefined && !(opts.durationS > 0)) throw new RangeError(`durationS must be > 0, got ${opts.durationS}`);
    await loadZstd();
    const r = new Recorder(src, opts);
    if (opts.path) await r.#openFile();
    r.#attach();
    return r;
  }

  /** The JSON Schema of a JSON channel (the same one the file declares). */
  schemaFor(ring: number): object {
    return this.#viewer(ring).schema;
  }

  /** Whether a channel is written for this body (NAO channels only on a NAO, /api/state when the API knows the body). */
  hasChannel(ring: number): boolean {
    const c = CHANNEL_BY_RING.get(ring);
    if (!c) return false;
    const body = channelBody(c.topic);
    if (body !== null && body !== this.#src.robot.kind) return false;
    return !(ring === RING_CHANNEL.apiState && !this.#adapter);
  }

  /**
   * Every message, as it leaves the ring (consumer side): ring channel, log time (ns since the
   * epoch), bytes (the file's: a fresh buffer the listener may keep, and must not modify). A
   * listener that throws is dropped. Returns an unsubscribe.
   */
  onMessage(listener: (channel: number, logTimeNs: bigint, data: Uint8Array) => void): () => void {
    this.#listeners.push(listener);
    return () => {
      const i = this.#listeners.indexOf(listener);
      if (i >= 0) this.#listeners.splice(i, 1);
    };
  }

  get files(): readonly string[] {
    return this.#files;
  }

  progress(): RecordingProgress {
    const elapsedS = this.#startedMs ? (this.#src.robot.clock.nowMs() - this.#startedMs) / 1000 : 0;
    const bytes = this.#bytesClosed + (this.#file?.bytes ?? 0);
    return {
      elapsedS,
      messages: this.#messages,
      bytes,
      mbPerMin: elapsedS > 0 ? bytes / 1e6 / (elapsedS / 60) : 0,
      files: [...this.#files],
      dropped: this.#dropped(),
      stopped: this.#stopped,
      failure: this.#failure,
    };
  }

  // ---- producers (main thread, outside the cycle) ---------------------------------------------

  readonly #event: RecordEvent = (type, text, extra) => this.event(type, text, extra);

  /** Record a runtime event (JSON) through the ring, so it sits in order with the frames. */
  event(type: string, text: string, extra: Record<string, unknown> = {}): void {
    if (this.#stopped) return;
    this.#src.tap.event(type, this.#cycleSeq(), text, extra);
  }

  /** The runtime's cycle count (a threaded core's: its host's count, or the NAO's mirrored state's). */
  #cycleSeq(): number {
    return this.#body.cycleSeq();
  }

  #dropped(): number {
    return this.#ring.dropped + (this.#core?.dropped ?? 0);
  }

  #attach(): void {
    const robot = this.#src.robot;
    this.#startedMs = robot.clock.nowMs();
    this.#unsubscribe.push(robot.onCycle(this.#onCycle));
    const auth = robot.authority;
    const onAcquired = (info: { owner: string; source: string; expiresAtEpochMs: number }) =>
      this.event("lease_acquired", `${info.owner} (${info.source}) took control`, { owner: info.owner, source: info.source });
    const onReleased = (info: { owner: string; source: string }, why: string) =>
      this.event("lease_released", `${info.owner} (${info.source}) lost control: ${why}`, { owner: info.owner, source: info.source, why });
    auth.on("acquired", onAcquired);
    auth.on("released", onReleased);
    this.#unsubscribe.push(() => {
      auth.off("acquired", onAcquired);
      auth.off("released", onReleased);
    });
    // The latched e-stop's events (docs/security.md), where the authority has them.
    const em = auth as unknown as EventEmitter;
    const onEstop = (e: unknown) => this.event("estop", `emergency stop latched${describe(e)}`, { detail: plain(e) });
    const onReset = (_state: unknown, by: unknown) => this.event("estop_reset", `emergency stop reset${describe(by)}`, { detail: plain(by) });
    em.on("estop", onEstop);
    em.on("reset", onReset);
    this.#unsubscribe.push(() => {
      em.off("estop", onEstop);
      em.off("reset", onReset);
    });
    this.#unsubscribe.push(...this.#body.attach(this.#event));
    this.event("recording_started", this.#files[0] ? `recording to ${this.#files[0]}` : "live stream (no file)", { body: robot.kind, transport: this.#src.transport });
    if (this.#adapter) this.#timers.push(setInterval(() => this.#apiState(), API_STATE_EVERY_MS));
    // Drains also when no cycle runs (a paused replay, a stopped body).
    this.#timers.push(setInterval(() => this.#drain(), 100));
    if (this.#opts.durationS) {
      this.#timers.push(
        setTimeout(() => {
          void this.stop().then(() => this.#opts.onStop?.(null));
        }, this.#opts.durationS * 1000),
      );
    }
    for (const t of this.#timers) t.unref();
  }

  /** Perform side: the decoded state, and events on a change. */
  readonly #onCycle: CycleListener = () => {
    this.#body.cycle(this.#event); // an in-thread robot's state (a threaded core records its own); the body's events
    const late = this.#core ? this.#lastLate : this.#src.robot.loop!.timing.lateCycles; // a threaded core records its own
    if (late !== this.#lastLate) {
      const n = late - this.#lastLate;
      this.#lastLate = late;
      if (n > 0) this.event("late_cycle", `cycle started late (${late} so far)`, { late_cycles: late });
    }
    if (!this.#drainScheduled) {
      this.#drainScheduled = true;
      setImmediate(this.#drainSoon);
    }
  };

  readonly #drainSoon = (): void => {
    this.#drainScheduled = false;
    this.#drain();
  };

  #apiState(): void {
    const a = this.#adapter!;
    const src = a.source();
    if (!src || src.seq === this.#lastApiSeq) return;
    this.#lastApiSeq = src.seq;
    const fields = a.read("stream");
    if (!fields) return;
    const msg = { type: "state", body: a.kind, seq: src.seq, timestamp_ms: src.timestampMs, epoch_ms: src.epochMs, link: src.link, ...fields };
    const b = this.#json(RING_CHANNEL.apiState, msg);
    this.#src.tap.bytes(RING_CHANNEL.apiState, 0, b, b.length);
  }

  // ---- consumer --------------------------------------------------------------------------------

  #drain(): void {
    if (this.#stopped && !this.#stopping) return;
    const dropped = this.#dropped();
    if (dropped !== this.#droppedSeen) {
      const n = dropped - this.#droppedSeen;
      this.#droppedSeen = dropped;
      const gap = te.encode(JSON.stringify({ type: "recording_gap", seq: this.#cycleSeq(), text: `${n} records lost: the recorder fell behind and the ring was full`, lost: n }));
      this.#enqueue(RING_CHANNEL.event, this.#src.robot.clock.epochMs(), gap);
    }
    // The core's first: its frames are older than what the main thread recorded since the last drain.
    if (this.#core) this.#core.drain(this.#onCoreRecord!);
    this.#ring.drain(this.#onHostRecord);
  }

  #recordFrom(ring: ByteRing): RingRecordHandler {
    return (channel, _flags, timeMs, offset, length) => this.#onRecord(ring, channel, timeMs, offset, length);
  }

  #onRecord(ring: ByteRing, channel: number, timeMs: number, offset: number, length: number): void {
    const b = ring.bytes;
    let data: Uint8Array;
    if (channel === RING_CHANNEL.naoState) {
      const state = readNaoStateRecord(ring.view, offset);
      data = this.#json(channel, state);
      this.#enqueue(channel, timeMs, data);
      this.#in3d(state as unknown as Record<string, unknown>, timeMs);
      return;
    } else if (channel === RING_CHANNEL.p7Command) {
      const c = readP7Command(ring.view, offset, length);
      if (!c) return;
      data = this.#json(channel, c);
    } else if (this.#bodyState && channel === this.#bodyState.ring) {
      const d = this.#bodyState.decode(b, offset, length);
      if (!d) return; // not this layout's size: a producer of another version (never mixed in one runtime)
      data = this.#json(channel, d.message);
      this.#enqueue(channel, timeMs, data);
      this.#in3d(d.message, timeMs);
      this.#linkFrom(d, timeMs);
      return;
    } else if (channel === RING_CHANNEL.chestTransfer) {
      const v = ring.view;
      const op = v.getUint8(offset);
      data = te.encode(
        JSON.stringify({
          op: TRANSFER_OP_NAME[op] ?? `op_${op}`,
          request: v.getUint8(offset + 1),
          result: v.getInt32(offset + 2, true),
          bytes_hex: toHex(b.subarray(offset + TRANSFER_HEADER_BYTES, offset + length)),
        }),
      );
    } else {
      data = b.slice(offset, offset + length);
      if (channel === RING_CHANNEL.chestIn && !this.#prefsBlock && this.#prefs.push(data)) {
        this.#prefsBlock = this.#prefs.result();
      }
    }
    this.#enqueue(channel, timeMs, data);
  }

  /** The 3D panel's messages for a decoded state: the scene every SCENE_EVERY_MS, the frames (and a physics body's contacts) every TF_EVERY_MS, at the state's time. */
  #in3d(message: Record<string, unknown>, timeMs: number): void {
    const v = this.#viewer3d;
    const ch = this.#viewer3dChannels;
    if (!v || !ch) return;
    if (timeMs - this.#lastTfMs < TF_EVERY_MS && timeMs >= this.#lastTfMs) return;
    const tf = v.transforms(message, nsOf(timeMs));
    if (!tf) return;
    this.#lastTfMs = timeMs;
    // A physics body's world (the state's `sim`): the ground in the scene, the contacts with every transform.
    const contacts = v.contacts(message, nsOf(timeMs));
    if (timeMs - this.#lastSceneMs >= SCENE_EVERY_MS || timeMs < this.#lastSceneMs) {
      this.#lastSceneMs = timeMs;
      this.#enqueue(ch.scene, timeMs, this.#json(ch.scene, v.scene(nsOf(timeMs), contacts !== null)));
    }
    this.#enqueue(ch.tf, timeMs, this.#json(ch.tf, tf));
    if (contacts) this.#enqueue(ch.scene, timeMs, this.#json(ch.scene, contacts));
  }

  /** An event again as foxglove.Log on /log (events are rare: parsing one costs nothing that matters). */
  #logLine(timeMs: number, logTime: bigint, event: Uint8Array): void {
    let e: { type?: unknown; text?: unknown; seq?: unknown };
    try {
      e = JSON.parse(td.decode(event)) as typeof e;
    } catch {
      return; // not JSON: /events keeps it as it came
    }
    const name = typeof e.type === "string" ? e.type : "event";
    const line = {
      timestamp: { sec: Number(logTime / 1_000_000_000n), nsec: Number(logTime % 1_000_000_000n) },
      level: EVENT_LOG_LEVEL[name] ?? LOG_LEVEL.info,
      message: typeof e.text === "string" ? e.text : "",
      name,
      file: "",
      line: typeof e.seq === "number" && Number.isInteger(e.seq) && e.seq >= 0 ? e.seq : 0,
    };
    this.#enqueue(RING_CHANNEL.log, timeMs, this.#json(RING_CHANNEL.log, line));
  }

  /** A link change seen in a body's state record: an event at that cycle's time, whichever thread ran the cycle. */
  #linkFrom(d: DecodedState, timeMs: number): void {
    if (d.link === this.#lastBodyLink) return;
    const from = this.#lastBodyLink;
    this.#lastBodyLink = d.link;
    if (!from) return;
    const ev = te.encode(JSON.stringify({ type: "link", seq: d.cycle, text: `body link ${from} → ${d.link}`, from, to: d.link }));
    this.#enqueue(RING_CHANNEL.event, timeMs, ev);
  }

  #enqueue(channel: number, timeMs: number, data: Uint8Array): void {
    if (this.#stopped && !this.#stopping) return;
    const logTime = nsOf(timeMs);
    if (channel === RING_CHANNEL.event) this.#logLine(timeMs, logTime, data);
    for (const l of [...this.#listeners]) {
      try {
        l(channel, logTime, data);
      } catch {
        this.#listeners.splice(this.#listeners.indexOf(l), 1); // a broken listener must not stop the recording
      }
    }
    if (!this.#opts.path) return;
    this.#queue.push({ channelId: channel, logTime, data });
    void this.#startPump();
  }

  /** One pump at a time; `#pumping` is cleared only after it was set (a pump may end without awaiting). */
  #startPump(): Promise<void> {
    this.#pumping ??= this.#pump().finally(() => {
      this.#pumping = null;
    });
    return this.#pumping;
  }

  async #pump(): Promise<void> {
    try {
      for (let m = this.#queue.shift(this.#writeAll); m && this.#writer; m = this.#queue.shift(this.#writeAll)) {
        if (this.#prefsBlock && !this.#prefsAttached) await this.#attachPrefs();
        const id = this.#ids.get(m.channelId);
        if (id === undefined) continue;
        const sequence = (this.#seq.get(m.channelId) ?? 0) + 1;
        this.#seq.set(m.channelId, sequence);
        await this.#writer.addMessage({ channelId: id, sequence, logTime: m.logTime, publishTime: m.logTime, data: m.data });
        this.#messages++;
        if (this.#opts.splitMb && this.#file!.bytes >= this.#opts.splitMb * 1e6) await this.#rotate();
      }
    } catch (e) {
      this.#fail(e as Error);
    }
  }

  async #attachPrefs(): Promise<void> {
    this.#prefsAttached = true;
    const t = nsOf(this.#src.robot.clock.epochMs());
    await this.#writer!.addAttachment({ name: PREFS_ATTACHMENT, logTime: t, createTime: t, mediaType: "application/octet-stream", data: this.#prefsBlock! });
  }

  async #openFile(): Promise<void> {
    const base = this.#opts.path ?? "";
    const path = this.#opts.splitMb ? splitPath(base, this.#files.length + 1) : base;
    let file: FileWritable;
    try {
      file = await FileWritable.open(path);
    } catch (e) {
      throw new BodylinkError("BL_ERR_RECORD_OPEN", path, fileErrorText(e));
    }
    const writer = new StrictMcapWriter({ writable: file, chunkSize: this.#opts.chunkBytes ?? DEFAULT_CHUNK_BYTES, compressChunk: compressZstd });
    await writer.start({ profile: RECORDING_PROFILE, library: this.#opts.library ?? "bodylink" });
    const ids = new Map<number, number>();
    for (const c of CHANNELS) {
      if (!this.hasChannel(c.ring)) continue;
      let schemaId = 0;
      if (c.schemaName) {
        const schema = this.#viewer(c.ring).schema;
        schemaId = await writer.registerSchema({ name: c.schemaName, encoding: "jsonschema", data: te.encode(JSON.stringify(schema)) });
      }
      const id = await writer.registerChannel({ topic: c.topic, messageEncoding: c.messageEncoding, schemaId, metadata: new Map([["description", c.description]]) });
      ids.set(c.ring, id);
    }
    const meta = new Map<string, string>([
      ["format_version", String(RECORDING_FORMAT_VERSION)],
      ["body", this.#src.robot.kind],
      ["transport", this.#src.transport],
      ["part", String(this.#files.length + 1)],
      ["started_epoch_ms", String(this.#src.robot.clock.epochMs())],
    ]);
    for (const [k, v] of this.#body.metadata()) meta.set(k, v);
    await writer.addMetadata({ name: METADATA_NAME, metadata: meta });
    this.#writer = writer;
    this.#file = file;
    this.#ids = ids;
    this.#files.push(path);
    this.#prefsAttached = false;
  }

  /** A JSON channel's schema in the viewers' one-type-per-property form (viewer-schema.ts), built once. */
  #viewer(ring: number): ViewerSchema {
    let v = this.#viewers.get(ring);
    if (!v) {
      v = viewerSchema(this.#schemaFor(ring));
      this.#viewers.set(ring, v);
    }
    return v;
  }

  /** A JSON channel's message as its schema describes it (nulls left out where the schema says so). */
  #json(ring: number, value: unknown): Uint8Array {
    return te.encode(viewerJson(value, this.#viewer(ring).dropsNulls));
  }

  #schemaFor(ring: number): object {
    if (ring === RING_CHANNEL.naoState) return NAO_STATE_SCHEMA;
    if (ring === RING_CHANNEL.chestTransfer) return TRANSFER_SCHEMA;
    if (ring === RING_CHANNEL.event) return EVENT_SCHEMA;
    if (ring === RING_CHANNEL.p7State) return P7_STATE_RECORD_SCHEMA;
    if (ring === RING_CHANNEL.p7Command) return P7_COMMAND_RECORD_SCHEMA;
    if (ring === RING_CHANNEL.tny360State) return TNY360_STATE_RECORD_SCHEMA;
    const c = CHANNEL_BY_RING.get(ring);
    if (c?.schemaName === FRAME_TRANSFORMS_SCHEMA.title) return FRAME_TRANSFORMS_SCHEMA;
    if (c?.schemaName === SCENE_UPDATE_SCHEMA.title) return SCENE_UPDATE_SCHEMA;
    if (ring === RING_CHANNEL.log) return LOG_SCHEMA;
    return stateSchema(this.#adapter!.schemas.stream, `The robot API's state message (${this.#adapter!.kind})`);
  }

  async #closeFile(): Promise<void> {
    const w = this.#writer;
    const f = this.#file;
    this.#writer = null;
    this.#file = null;
    if (!w || !f) return;
    try {
      await w.end();
    } finally {
      await f.close();
      this.#bytesClosed += f.bytes;
    }
  }

  async #rotate(): Promise<void> {
    await this.#closeFile();
    await this.#openFile();
  }

  #detach(): void {
    for (const u of this.#unsubscribe.splice(0)) u();
    for (const t of this.#timers.splice(0)) clearTimeout(t);
  }

  #fail(e: Error): void {
    if (this.#stopped) return;
    this.#stopped = true;
    const path = this.#files[this.#files.length - 1] ?? this.#opts.path ?? "";
    this.#failure = `cannot write ${path}: ${e.message}`;
    this.#detach();
    this.#queue.clear();
    const f = this.#file;
    this.#file = null;
    this.#writer = null;
    if (f) {
      this.#bytesClosed += f.writtenBytes;
      void f.close().catch(() => {});
    }
    const err = new BodylinkError("BL_ERR_RECORD_WRITE", this.#failure);
    this.#log(`bodylink: ${err.message} [${err.code}]`);
    this.#opts.onStop?.(this.#failure);
  }

  /**
   * Drain the ring now and wait until everything in it was handed to the writer (tests), the
   * messages still inside the order window included.
   */
  async flush(): Promise<void> {
    this.#drain();
    await this.#writeHeld();
  }

  /** Write every held message (flush, stop), in log-time order among themselves. */
  async #writeHeld(): Promise<void> {
    while (this.#pumping) await this.#pumping;
    this.#writeAll = true;
    try {
      await this.#startPump();
    } finally {
      this.#writeAll = false;
    }
  }

  /** Drain what is left, write the summary and close the file. Idempotent. */
  stop(): Promise<void> {
    if (this.#stopping) return this.#stopping;
    if (this.#stopped) return Promise.resolve();
    this.#stopping = (async () => {
      this.event("recording_stopped", "recording stopped");
      this.#detach();
      this.#drain();
      await this.#writeHeld();
      this.#stopped = true;
      if (this.#failure) return;
      try {
        await this.#closeFile();
      } catch (e) {
        this.#stopping = null;
        this.#stopped = false;
        this.#fail(e as Error);
      }
    })();
    return this.#stopping;
  }
}

function plain(e: unknown): unknown {
  try {
    return JSON.parse(JSON.stringify(e ?? null));
  } catch {
    return String(e);
  }
}

function describe(e: unknown): string {
  if (e && typeof e === "object") {
    const o = e as { source?: unknown; reason?: unknown };
    const parts = [o.source ? `by ${String(o.source)}` : "", o.reason ? String(o.reason) : ""].filter(Boolean);
    return parts.length ? ` (${parts.join(": ")})` : "";
  }
  return "";
}

/** For tests and docs: every channel the recorder may write. */
export { CHANNEL_BY_RING };
