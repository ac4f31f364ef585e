/**
 * `bodylink export lerobot`: recordings → a LeRobot dataset (format v2.1, what openpi's pinned
 * LeRobot reads, or v3.0), so a policy trains from what the robot did.
 *
 * - **Episodes**: one per recording file (`episodes: "file"`: from its `recording_started` event
 *   to its `recording_stopped`), or one per control session (`"control"`: from a `lease_acquired`
 *   event to the lease's end, `lease_released` for any reason: released, expired, revoked), the
 *   segments between the recording's own markers of who drove.
 * - **Frames**: resampled to a fixed `fps` (default the robot API's rate, 20 Hz) on the runtime's
 *   monotonic cycle time (`timestamp_ms`): frame k is the newest state at or before t0 + k/fps, where
 *   t0 is the episode's first state. An episode of span S seconds has floor(S × fps) + 1 frames.
 * - **Columns**: `observation.state` and `action` (float32 vectors, named per dimension in
 *   `meta/info.json` `features`), `timestamp` (float32 s since the episode's start, k / fps),
 *   `frame_index`, `episode_index`, `index` (across the dataset), `task_index` (int64).
 * - **Per body** (one table, {@link BODY_EXPORTS}): the action is the targets in effect when the
 *   state was read. The P7's state is its 7 joint positions, its action the targets the arm took
 *   (`/p7/command`: move and servo targets, acting from the cycle after; while nobody holds control,
 *   or before the holder's first command, the arm holds, so the action is the position itself). The
 *   TNY-360's state is its 14 joint positions, its action the 14 targets its core drove to
 *   (`joint_targets`). The NAO's state is LoLA's 25 joint positions, its IMU (accelerometer,
 *   gyroscope, angles) and its 8 FSRs (`/nao/state`), its action the 25 position targets and 25
 *   stiffnesses of the last command frame the core sent the chest board (`/nao/chestboard/out`,
 *   decoded with the recording's preference block: its joints' zero counts).
 * - **Cameras**: none exist yet; `video_path` is in info.json and `observation.images.<cam>`
 *   features can be added beside the state without changing any other file.
 *
 * Parquet is written with hyparquet-writer (pure JS, no native or WASM code, one dependency:
 * its reader, hyparquet): lists as the standard 3-level LIST of FLOAT, as pyarrow writes them,
 * and the `huggingface` schema metadata that `datasets` reads the features from.
 *
 * Prepare side only (a CLI command; reads files, allocates freely).
 */
import { mkdir, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { parquetWriteBuffer } from "hyparquet-writer";
import { type BodyKind, isBodyKind } from "../bodies/registry.js";
import { CommandStiffnessDecoder } from "../bodies/nao/frames.js";
import { LOLA_JOINT_COUNT, LOLA_ORDER } from "../bodies/nao/joints.js";
import { P7_JOINT_NAMES } from "../bodies/p7/joints.js";
import { JOINT_NAMES as TNY_JOINT_NAMES } from "../bodies/tny360/joints.js";
import { BodylinkError } from "../errors.js";
import { channelBody, PREFS_ATTACHMENT } from "../record/channels.js";
import { readAttachments, readRecordingInfo, streamRecording } from "../record/reader.js";
import { STREAM_RATE_HZ } from "../bodies/link.js";
import { preferencesFromBlock } from "../verify/verifier.js";

import { EPISODE_SPLITS, type EpisodeSplit, LEROBOT_FORMATS, type LerobotFormat } from "./formats.js";

export { EPISODE_SPLITS, type EpisodeSplit, LEROBOT_FORMATS, type LerobotFormat };

export interface LerobotExportOptions {
  readonly outDir: string;
  readonly recordings: readonly string[];
  /** Defaults to "v2.1". */
  readonly format?: LerobotFormat;
  /** Frames per second. Defaults to the robot API's stream rate (20). */
  readonly fps?: number;
  /** Defaults to "file". */
  readonly episodes?: EpisodeSplit;
  /** The task every episode gets (LeRobot's language instruction). Defaults to "bodylink recording". */
  readonly task?: string;
}

export interface ExportedEpisode {
  readonly episodeIndex: number;
  readonly recording: string;
  readonly frames: number;
  /** The first and last source state of the episode (runtime cycle time, ms). */
  readonly fromMs: number;
  readonly toMs: number;
}

export interface LerobotExportSummary {
  readonly body: BodyKind;
  readonly format: LerobotFormat;
  readonly fps: number;
  readonly episodes: readonly ExportedEpisode[];
  readonly totalFrames: number;
  /** Every file written, relative to outDir. */
  readonly files: readonly string[];
}

type Json = Record<string, unknown>;

/**
 * What gives each state its action, per recording: it sees the recording's other channels in file
 * order (`topics`), then answers for a state. The action is the targets in effect when the state
 * was read (for the P7 and the NAO those the core applied after the previous cycle).
 */
interface ActionSource {
  readonly topics: readonly string[];
  see(topic: string, data: Uint8Array): void;
  /** Fill `out` for state message `m`; false when there is none yet (the state is skipped). */
  action(m: Json, out: Float32Array): boolean;
}

/** How one body's recording becomes LeRobot vectors. */
interface BodyExport {
  readonly robotType: string;
  readonly stateTopic: string;
  readonly stateNames: readonly string[];
  readonly actionNames: readonly string[];
  /** Fill `out` from a state message; false when the message does not carry it. */
  readonly state: (m: Json, out: Float32Array) => boolean;
  readonly actions: (path: string, t: Timeline) => Promise<ActionSource>;
}

function fill(a: unknown, out: Float32Array, at = 0, n = out.length - at): boolean {
  if (!Array.isArray(a) || a.length !== n) return false;
  for (let i = 0; i < n; i++) {
    const v: unknown = a[i];
    if (typeof v !== "number" || !Number.isFinite(v)) return false;
    out[at + i] = v;
  }
  return true;
}

/** The P7: the last target it took (move or servo) in the current control session; else it holds, and the target is its position. */
function p7Actions(t: Timeline): ActionSource {
  let target: readonly number[] | null = null;
  let next = 0; // t.changes applied so far
  return {
    topics: [],
    see: () => {},
    action(m, out) {
      // Changes due by this state (t.changes is in due order): events up to its seq; commands
      // taken before its cycle (they act from the next).
      while (next < t.changes.length) {
        const c = t.changes[next]!;
        if (c.kind === "target" ? typeof m.cycle !== "number" || c.cycle >= m.cycle : c.seq > (m.seq as number)) break;
        target = c.kind === "target" ? c.positions : null;
        next++;
      }
      return fill(target ?? m.joint_positions, out);
    },
  };
}

/** The NAO: the position targets (rad; hands 0..1) and stiffness of the last command frame sent to the chest board, in LoLA order. */
async function naoActions(path: string): Promise<ActionSource> {
  const block = (await readAttachments(path)).get(PREFS_ATTACHMENT);
  const prefs = block ? preferencesFromBlock(block) : null;
  if (!prefs?.ok) throw new BodylinkError("BL_ERR_EXPORT_INPUT", `${path} has no usable preference block (${PREFS_ATTACHMENT}): the joints' zero offsets turn the command frames' counts into radians`);
  const decoder = new CommandStiffnessDecoder();
  const positions = { into: new Float32Array(LOLA_JOINT_COUNT), zeroCounts: prefs.prefs.jointZeroCounts };
  const stiffness = new Float32Array(LOLA_JOINT_COUNT);
  let seen = false;
  return {
    topics: ["/nao/chestboard/out"],
    see(_topic, data) {
      if (decoder.decode(data, data.length, stiffness, positions)) seen = true;
    },
    action(_m, out) {
      if (!seen) return false;
      out.set(positions.into, 0);
      out.set(stiffness, LOLA_JOINT_COUNT);
      return true;
    },
  };
}

const NAO_SENSORS: ReadonlyArray<readonly [key: string, names: readonly string[]]> = [
  ["accelerometer", ["imu.accelerometer.x", "imu.accelerometer.y", "imu.accelerometer.z"]],
  ["gyroscope", ["imu.gyroscope.x", "imu.gyroscope.y", "imu.gyroscope.z"]],
  ["angles", ["imu.angle.x", "imu.angle.y"]],
  ["fsr", ["LFoot", "RFoot"].flatMap((f) => ["FrontLeft", "FrontRight", "RearLeft", "RearRight"].map((c) => `fsr.${f}.${c}`))],
];

/** Per body. */
export const BODY_EXPORTS: { readonly [K in BodyKind]: BodyExport } = {
  nao: {
    robotType: "nao_v6",
    stateTopic: "/nao/state",
    // LoLA's order and units (/nao/state): the 25 joint positions, then the IMU (m/s², rad/s, rad) and the 8 FSRs (kg).
    stateNames: [...LOLA_ORDER.map((n) => `${n}.pos`), ...NAO_SENSORS.flatMap(([, names]) => names)],
    actionNames: [...LOLA_ORDER.map((n) => `${n}.target`), ...LOLA_ORDER.map((n) => `${n}.stiffness`)],
    state(m, out) {
      if (!fill(m.position, out, 0, LOLA_JOINT_COUNT)) return false;
      let at = LOLA_JOINT_COUNT;
      for (const [key, names] of NAO_SENSORS) {
        if (!fill(m[key], out, at, names.length)) return false;
        at += names.length;
      }
      return true;
    },
    actions: (path) => naoActions(path),
  },
  p7: {
    robotType: "airbot_p7",
    stateTopic: "/p7/state",
    stateNames: P7_JOINT_NAMES.map((n) => `${n}.pos`),
    actionNames: P7_JOINT_NAMES.map((n) => `${n}.pos`),
    state: (m, out) => fill(m.joint_positions, out),
    actions: async (_path, t) => p7Actions(t),
  },
  tny360: {
    robotType: "tny360",
    stateTopic: "/tny360/state",
    stateNames: TNY_JOINT_NAMES.map((n) => `${n}.pos`),
    actionNames: TNY_JOINT_NAMES.map((n) => `${n}.target`),
    state: (m, out) => fill(m.joint_positions, out),
    // The targets its core drove the joints to this cycle, whoever set them.
    actions: async () => ({ topics: [], see: () => {}, action: (m, out) => fill(m.joint_targets, out) }),
  },
};

/** One episode's frames, built while streaming the states (zero-order hold onto the frame grid). */
class Episode {
  readonly states: Float32Array[] = [];
  readonly actions: Float32Array[] = [];
  #t0 = Number.NaN;
  #lastT = Number.NaN;
  #prevState: Float32Array | null = null;
  #prevAction: Float32Array | null = null;
  readonly #periodMs: number;

  constructor(
    readonly recording: string,
    fps: number,
  ) {
    this.#periodMs = 1000 / fps;
  }

  get fromMs(): number {
    return this.#t0;
  }
  get toMs(): number {
    return this.#lastT;
  }

  /** A state at `tMs` (non-decreasing): emit every frame before it from the previous state. */
  push(tMs: number, state: Float32Array, action: Float32Array): void {
    if (Number.isNaN(this.#t0)) this.#t0 = tMs;
    if (tMs < this.#lastT) return; // out of order (not written by the runtime): keep time monotonic
    this.#emitBefore(tMs, false);
    this.#prevState = state.slice();
    this.#prevAction = action.slice();
    this.#lastT = tMs;
  }

  /** The last frames (those at or before the last state's time). */
  finish(): void {
    if (!Number.isNaN(this.#lastT)) this.#emitBefore(this.#lastT, true);
  }

  #emitBefore(tMs: number, inclusive: boolean): void {
    if (!this.#prevState || !this.#prevAction) return;
    for (;;) {
      const frameT = this.#t0 + this.states.length * this.#periodMs;
      if (inclusive ? frameT > tMs + 1e-9 : frameT >= tMs) return;
      this.states.push(this.#prevState);
      this.actions.push(this.#prevAction);
    }
  }
}

/** Control sessions and commands of a recording, in file order (the first pass). */
interface Timeline {
  body: BodyKind | null;
  /** [seq acquired, seq ended] per control session (ended: Infinity when the file ends first). */
  sessions: Array<[number, number]>;
  /**
   * The recording's own window, [seq of recording_started, seq of recording_stopped]: the ring
   * also holds the cycles from the runtime's start to the recorder's (about a second and a half),
   * which `record --duration 10` did not ask for. Unbounded ends when the file lacks the event
   * (a cut file, a later part of a split recording).
   */
  window: [number, number];
  /**
   * Events and commands in the order they take effect (see {@link changeDue}): what changes the
   * drive, and from which state on. Not file order: the host's events and the core's commands reach
   * the file through two rings, and a loaded host drains a command ahead of the lease event before it.
   */
  changes: Array<{ kind: "start" | "end"; seq: number } | { kind: "target"; cycle: number; positions: readonly number[] }>;
}

const decoder = new TextDecoder();

async function firstPass(path: string): Promise<Timeline> {
  const info = await readRecordingInfo(path);
  const meta = info.metadata.find((m) => m.name === "bodylink")?.values.body;
  let body: BodyKind | null = isBodyKind(meta) ? meta : null;
  for (const c of info.channels) body ??= channelBody(c.topic);
  const t: Timeline = { body, sessions: [], changes: [], window: [Number.NEGATIVE_INFINITY, Number.POSITIVE_INFINITY] };
  let open: number | null = null;
  for await (const m of streamRecording(path)) {
    if (m.topic !== "/events" && m.topic !== "/p7/command") continue;
    const j = parseJson(m.data);
    if (!j) continue;
    if (m.topic === "/p7/command") {
      if ((j.command === "move_joints" || j.command === "servo_joints") && Array.isArray(j.positions) && typeof j.cycle === "number")
        t.changes.push({ kind: "target", cycle: j.cycle, positions: j.positions as number[] });
    } else if (typeof j.seq === "number") {
      if (j.type === "recording_started") t.window[0] = j.seq;
      else if (j.type === "recording_stopped") t.window[1] = j.seq;
      else if (j.type === "lease_acquired") {
        if (open !== null) t.sessions.push([open, j.seq]);
        open = j.seq;
        t.changes.push({ kind: "start", seq: j.seq });
      } else if (j.type === "lease_released") {
        if (open !== null) t.sessions.push([open, j.seq]);
        open = null;
        t.changes.push({ kind: "end", seq: j.seq });
      }
    }
  }
  if (open !== null) t.sessions.push([open, Number.POSITIVE_INFINITY]);
  t.changes.sort((a, b) => changeDue(a) - changeDue(b)); // stable: file order among equals
  return t;
}

/**
 * The first state seq (= cycle) a change applies to: an event from its own seq, a command from the
 * cycle after it was taken. At a tie the target sorts first, so a session's start or end clears it.
 */
function changeDue(c: Timeline["changes"][number]): number {
  return c.kind === "target" ? c.cycle + 0.5 : c.seq; // due from cycle + 1, ahead of an event there
}

function parseJson(data: Uint8Array): Json | null {
  try {
    const v: unknown = JSON.parse(decoder.decode(data));
    return v !== null && typeof v === "object" ? (v as Json) : null;
  } catch {
    return null;
  }
}

/** The second pass: stream the body's states, give each its action, cut episodes, resample. */
async function episodesOf(path: string, t: Timeline, spec: BodyExport, fps: number, split: EpisodeSplit): Promise<Episode[]> {
  const out: Episode[] = [];
  const state = new Float32Array(spec.stateNames.length);
  const action = new Float32Array(spec.actionNames.length);
  const actions = await spec.actions(path, t);
  let session = 0; // t.sessions index (control split)
  let current: Episode | null = split === "file" ? new Episode(path, fps) : null;
  for await (const m of streamRecording(path)) {
    if (m.topic !== spec.stateTopic) {
      if (actions.topics.includes(m.topic)) actions.see(m.topic, m.data);
      continue;
    }
    const j = parseJson(m.data);
    const seq = j?.seq;
    const tMs = j?.timestamp_ms;
    if (!j || typeof seq !== "number" || typeof tMs !== "number") continue;
    const hasAction = actions.action(j, action);
    if (seq < t.window[0] || seq > t.window[1]) continue;
    if (split === "control") {
      while (session < t.sessions.length && seq > t.sessions[session]![1]) {
        if (current) out.push(current);
        current = null;
        session++;
      }
      const s = t.sessions[session];
      if (!s || seq < s[0]) continue;
      current ??= new Episode(path, fps);
    }
    if (!hasAction || !spec.state(j, state)) continue;
    current!.push(tMs, state, action);
  }
  if (current) out.push(current);
  for (const e of out) e.finish();
  return out.filter((e) => e.states.length > 0);
}

// --- the dataset files ---

interface Feature {
  readonly dtype: "float32" | "int64";
  readonly shape: readonly number[];
  readonly names: readonly string[] | null;
}

function featuresOf(spec: BodyExport): Record<string, Feature> {
  return {
    "observation.state": { dtype: "float32", shape: [spec.stateNames.length], names: spec.stateNames },
    action: { dtype: "float32", shape: [spec.actionNames.length], names: spec.actionNames },
    timestamp: { dtype: "float32", shape: [1], names: null },
    frame_index: { dtype: "int64", shape: [1], names: null },
    episode_index: { dtype: "int64", shape: [1], names: null },
    index: { dtype: "int64", shape: [1], names: null },
    task_index: { dtype: "int64", shape: [1], names: null },
  };
}

/** The `datasets` library's features for the data files (it reads them from the `huggingface` schema metadata). */
function hfFeatures(features: Record<string, Feature>): string {
  const f: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(features)) {
    f[k] = v.names ? { feature: { dtype: v.dtype, _type: "Value" }, length: v.shape[0], _type: "Sequence" } : { dtype: v.dtype, _type: "Value" };
  }
  return JSON.stringify({ info: { features: f } });
}

/** Rows of the data columns of some episodes. */
interface Rows {
  state: number[][];
  action: number[][];
  timestamp: number[];
  frameIndex: bigint[];
  episodeIndex: bigint[];
  index: bigint[];
  taskIndex: bigint[];
}

function rowsOf(episodes: readonly Episode[], firstEpisode: number, firstIndex: number, fps: number): Rows {
  const r: Rows = { state: [], action: [], timestamp: [], frameIndex: [], episodeIndex: [], index: [], taskIndex: [] };
  let index = firstIndex;
  episodes.forEach((e, i) => {
    for (let k = 0; k < e.states.length; k++) {
      r.state.push(Array.from(e.states[k]!));
      r.action.push(Array.from(e.actions[k]!));
      r.timestamp.push(Math.fround(k / fps));
      r.frameIndex.push(BigInt(k));
      r.episodeIndex.push(BigInt(firstEpisode + i));
      r.index.push(BigInt(index++));
      r.taskIndex.push(0n);
    }
  });
  return r;
}

const LIST_OF_FLOAT = (name: string) =>
  [
    { name, repetition_type: "OPTIONAL", converted_type: "LIST", num_children: 1 },
    { name: "list", repetition_type: "REPEATED", num_children: 1 },
    { name: "element", type: "FLOAT", repetition_type: "OPTIONAL" },
  ] as const;

function dataParquet(rows: Rows, features: Record<string, Feature>): ArrayBuffer {
  return parquetWriteBuffer({
    columnData: [
      { name: "observation.state", data: rows.state },
      { name: "action", data: rows.action },
      { name: "timestamp", data: Float32Array.from(rows.timestamp) },
      { name: "frame_index", data: BigInt64Array.from(rows.frameIndex) },
      { name: "episode_index", data: BigInt64Array.from(rows.episodeIndex) },
      { name: "index", data: BigInt64Array.from(rows.index) },
      { name: "task_index", data: BigInt64Array.from(rows.taskIndex) },
    ],
    schema: [
      { name: "schema", num_children: 7 },
      ...LIST_OF_FLOAT("observation.state"),
      ...LIST_OF_FLOAT("action"),
      { name: "timestamp", type: "FLOAT", repetition_type: "OPTIONAL" },
      { name: "frame_index", type: "INT64", repetition_type: "OPTIONAL" },
      { name: "episode_index", type: "INT64", repetition_type: "OPTIONAL" },
      { name: "index", type: "INT64", repetition_type: "OPTIONAL" },
      { name: "task_index", type: "INT64", repetition_type: "OPTIONAL" },
    ],
    kvMetadata: [{ key: "huggingface", value: hfFeatures(features) }],
    createdBy: "bodylink export lerobot (hyparquet-writer)",
  });
}

/** LeRobot's per-feature statistics: per dimension min, max, mean, std (population), and the count. */
export interface FeatureStats {
  min: number[];
  max: number[];
  mean: number[];
  std: number[];
  count: number[];
}

function statsOfVectors(vs: ReadonlyArray<ArrayLike<number>>): FeatureStats {
  const n = vs[0]?.length ?? 0;
  const min = new Array<number>(n).fill(Number.POSITIVE_INFINITY);
  const max = new Array<number>(n).fill(Number.NEGATIVE_INFINITY);
  const sum = new Array<number>(n).fill(0);
  const sq = new Array<number>(n).fill(0);
  for (const v of vs) {
    for (let i = 0; i < n; i++) {
      const x = v[i]!;
      if (x < min[i]!) min[i] = x;
      if (x > max[i]!) max[i] = x;
      sum[i]! += x;
      sq[i]! += x * x;
    }
  }
  const c = vs.length;
  const mean = sum.map((s) => s / c);
  const std = sq.map((s, i) => Math.sqrt(Math.max(0, s / c - mean[i]! ** 2)));
  return { min, max, mean, std, count: [c] };
}

function statsOfRows(r: Rows): Record<string, FeatureStats> {
  const scalar = (xs: ReadonlyArray<number | bigint>) => statsOfVectors(xs.map((x) => [Number(x)]));
  return {
    "observation.state": statsOfVectors(r.state),
    action: statsOfVectors(r.action),
    timestamp: scalar(r.timestamp),
    frame_index: scalar(r.frameIndex),
    episode_index: scalar(r.episodeIndex),
    index: scalar(r.index),
    task_index: scalar(r.taskIndex),
  };
}

/** Dataset statistics from per-episode ones (count-weighted, as LeRobot's aggregate_stats). */
function aggregate(all: ReadonlyArray<Record<string, FeatureStats>>): Record<string, FeatureStats> {
  const out: Record<string, FeatureStats> = {};
  for (const key of Object.keys(all[0] ?? {})) {
    const parts = all.map((s) => s[key]!);
    const n = parts[0]!.mean.length;
    const total = parts.reduce((a, p) => a + p.count[0]!, 0);
    const mean = new Array<number>(n).fill(0);
    for (const p of parts) for (let i = 0; i < n; i++) mean[i]! += (p.mean[i]! * p.count[0]!) / total;
    const variance = new Array<number>(n).fill(0);
    for (const p of parts) for (let i = 0; i < n; i++) variance[i]! += ((p.std[i]! ** 2 + (p.mean[i]! - mean[i]!) ** 2) * p.count[0]!) / total;
    out[key] = {
      min: mean.map((_, i) => Math.min(...parts.map((p) => p.min[i]!))),
      max: mean.map((_, i) => Math.max(...parts.map((p) => p.max[i]!))),
      mean,
      std: variance.map((v) => Math.sqrt(v)),
      count: [total],
    };
  }
  return out;
}

type SchemaElement = NonNullable<Parameters<typeof parquetWriteBuffer>[0]["schema"]>[number];

const CHUNKS_SIZE = 1000;

async function put(outDir: string, rel: string, data: string | ArrayBuffer, files: string[]): Promise<void> {
  const p = join(outDir, rel);
  await mkdir(dirname(p), { recursive: true });
  await writeFile(p, typeof data === "string" ? data : new Uint8Array(data));
  files.push(rel);
}

const jsonl = (xs: readonly unknown[]) => xs.map((x) => `${JSON.stringify(x)}\n`).join("");

/** Export `recordings` (all of one body) into a LeRobot dataset at `outDir`. */
export async function exportLerobot(opts: LerobotExportOptions): Promise<LerobotExportSummary> {
  const format = opts.format ?? "v2.1";
  const fps = opts.fps ?? STREAM_RATE_HZ;
  const split = opts.episodes ?? "file";
  const task = opts.task ?? "bodylink recording";
  if (!LEROBOT_FORMATS.includes(format)) throw new BodylinkError("BL_ERR_EXPORT_INPUT", `unknown format ${format} (${LEROBOT_FORMATS.join(" or ")})`);
  if (!(fps > 0 && fps <= 1000)) throw new BodylinkError("BL_ERR_EXPORT_INPUT", `--fps must be in (0, 1000], got ${fps}`);
  if (opts.recordings.length === 0) throw new BodylinkError("BL_ERR_EXPORT_INPUT", "no recording given");

  let body: BodyKind | null = null;
  const episodes: Episode[] = [];
  for (const path of opts.recordings) {
    const t = await firstPass(path);
    if (!t.body) throw new BodylinkError("BL_ERR_EXPORT_INPUT", `${path} says no body (no bodylink metadata, no body channel)`);
    if (body && t.body !== body) throw new BodylinkError("BL_ERR_EXPORT_INPUT", `${path} is a ${t.body} recording, the others ${body}: one dataset holds one body`);
    body = t.body;
    const spec = BODY_EXPORTS[t.body];
    const found = await episodesOf(path, t, spec, fps, split);
    if (found.length === 0)
      throw new BodylinkError(
        "BL_ERR_EXPORT_INPUT",
        split === "control"
          ? `${path} has no control session with ${spec.stateTopic} states (episodes per control session: lease_acquired … lease_released)`
          : `${path} has no ${spec.stateTopic} states`,
      );
    episodes.push(...found);
  }
  const spec = BODY_EXPORTS[body!];
  const features = featuresOf(spec);
  const files: string[] = [];
  const totalFrames = episodes.reduce((n, e) => n + e.states.length, 0);
  const perEpisode: Array<Record<string, FeatureStats>> = [];
  let index = 0;
  const rowsPer = episodes.map((e, i) => {
    const r = rowsOf([e], i, index, fps);
    index += e.states.length;
    perEpisode.push(statsOfRows(r));
    return r;
  });
  const common = {
    robot_type: spec.robotType,
    total_episodes: episodes.length,
    total_frames: totalFrames,
    total_tasks: 1,
    chunks_size: CHUNKS_SIZE,
    fps,
    splits: { train: `0:${episodes.length}` },
  };

  if (format === "v2.1") {
    for (let i = 0; i < episodes.length; i++) {
      await put(opts.outDir, `data/chunk-${String(Math.floor(i / CHUNKS_SIZE)).padStart(3, "0")}/episode_${String(i).padStart(6, "0")}.parquet`, dataParquet(rowsPer[i]!, features), files);
    }
    await put(
      opts.outDir,
      "meta/info.json",
      `${JSON.stringify(
        {
          codebase_version: "v2.1",
          ...common,
          total_videos: 0,
          total_chunks: Math.ceil(episodes.length / CHUNKS_SIZE),
          data_path: "data/chunk-{episode_chunk:03d}/episode_{episode_index:06d}.parquet",
          video_path: "videos/chunk-{episode_chunk:03d}/{video_key}/episode_{episode_index:06d}.mp4",
          features,
        },
        null,
        4,
      )}\n`,
      files,
    );
    await put(opts.outDir, "meta/tasks.jsonl", jsonl([{ task_index: 0, task }]), files);
    await put(opts.outDir, "meta/episodes.jsonl", jsonl(episodes.map((e, i) => ({ episode_index: i, tasks: [task], length: e.states.length }))), files);
    await put(opts.outDir, "meta/episodes_stats.jsonl", jsonl(perEpisode.map((stats, i) => ({ episode_index: i, stats }))), files);
  } else {
    // v3.0: every episode in one data file (chunk 000, file 000) until it grows past LeRobot's
    // 100 MB default; a recording's state is far smaller than that.
    const all = rowsOf(episodes, 0, 0, fps);
    await put(opts.outDir, "data/chunk-000/file-000.parquet", dataParquet(all, features), files);
    await put(
      opts.outDir,
      "meta/info.json",
      `${JSON.stringify(
        {
          codebase_version: "v3.0",
          ...common,
          data_files_size_in_mb: 100,
          video_files_size_in_mb: 500,
          data_path: "data/chunk-{chunk_index:03d}/file-{file_index:03d}.parquet",
          video_path: "videos/{video_key}/chunk-{chunk_index:03d}/file-{file_index:03d}.mp4",
          features,
        },
        null,
        4,
      )}\n`,
      files,
    );
    await put(opts.outDir, "meta/stats.json", `${JSON.stringify(aggregate(perEpisode), null, 4)}\n`, files);
    await put(opts.outDir, "meta/tasks.parquet", tasksParquet([task]), files);
    await put(opts.outDir, "meta/episodes/chunk-000/file-000.parquet", episodesParquet(episodes, perEpisode, task), files);
  }
  return {
    body: body!,
    format,
    fps,
    episodes: episodes.map((e, i) => ({ episodeIndex: i, recording: e.recording, frames: e.states.length, fromMs: e.fromMs, toMs: e.toMs })),
    totalFrames,
    files,
  };
}

/** v3.0 meta/tasks.parquet: pandas' frame indexed by the task (LeRobot reads `tasks.index`), with a task_index column. */
function tasksParquet(tasks: readonly string[]): ArrayBuffer {
  const pandas = {
    index_columns: ["task"],
    column_indexes: [{ name: null, field_name: null, pandas_type: "unicode", numpy_type: "object", metadata: { encoding: "UTF-8" } }],
    columns: [
      { name: "task_index", field_name: "task_index", pandas_type: "int64", numpy_type: "int64", metadata: null },
      { name: "task", field_name: "task", pandas_type: "unicode", numpy_type: "object", metadata: null },
    ],
    creator: { library: "bodylink", version: "1" },
    pandas_version: "2.2.3",
  };
  return parquetWriteBuffer({
    columnData: [
      { name: "task_index", data: BigInt64Array.from(tasks, (_, i) => BigInt(i)), type: "INT64" },
      { name: "task", data: [...tasks], type: "STRING" },
    ],
    kvMetadata: [{ key: "pandas", value: JSON.stringify(pandas) }],
    createdBy: "bodylink export lerobot (hyparquet-writer)",
  });
}

/** v3.0 meta/episodes/…parquet: one row per episode, where its rows are, and its stats as `stats/<feature>/<stat>` columns. */
function episodesParquet(episodes: readonly Episode[], stats: ReadonlyArray<Record<string, FeatureStats>>, task: string): ArrayBuffer {
  const n = episodes.length;
  const from: bigint[] = [];
  let at = 0;
  for (const e of episodes) {
    from.push(BigInt(at));
    at += e.states.length;
  }
  const zeros = () => new BigInt64Array(n);
  const columnData: Array<{ name: string; data: unknown[] | BigInt64Array; type?: "INT64" | "STRING" }> = [
    { name: "episode_index", data: BigInt64Array.from(episodes, (_, i) => BigInt(i)), type: "INT64" },
    { name: "tasks", data: episodes.map(() => [task]) },
    { name: "length", data: BigInt64Array.from(episodes, (e) => BigInt(e.states.length)), type: "INT64" },
    { name: "data/chunk_index", data: zeros(), type: "INT64" },
    { name: "data/file_index", data: zeros(), type: "INT64" },
    { name: "dataset_from_index", data: BigInt64Array.from(from), type: "INT64" },
    { name: "dataset_to_index", data: BigInt64Array.from(episodes, (e, i) => from[i]! + BigInt(e.states.length)), type: "INT64" },
    { name: "meta/episodes/chunk_index", data: zeros(), type: "INT64" },
    { name: "meta/episodes/file_index", data: zeros(), type: "INT64" },
  ];
  const schema: SchemaElement[] = [];
  for (const c of columnData) {
    if (c.name === "tasks")
      schema.push(
        { name: "tasks", repetition_type: "OPTIONAL", converted_type: "LIST", num_children: 1 },
        { name: "list", repetition_type: "REPEATED", num_children: 1 },
        { name: "element", type: "BYTE_ARRAY", converted_type: "UTF8", repetition_type: "OPTIONAL" },
      );
    else schema.push({ name: c.name, type: "INT64", repetition_type: "OPTIONAL" });
  }
  for (const key of Object.keys(stats[0] ?? {})) {
    for (const s of ["min", "max", "mean", "std", "count"] as const) {
      const name = `stats/${key}/${s}`;
      columnData.push({ name, data: stats.map((st) => st[key]![s]) });
      schema.push(
        { name, repetition_type: "OPTIONAL", converted_type: "LIST", num_children: 1 },
        { name: "list", repetition_type: "REPEATED", num_children: 1 },
        { name: "element", type: s === "count" ? "INT64" : "DOUBLE", repetition_type: "OPTIONAL" },
      );
    }
  }
  for (const c of columnData) delete c.type; // the explicit schema says it
  const countCols = columnData.filter((c) => c.name.endsWith("/count"));
  for (const c of countCols) c.data = (c.data as number[][]).map((v) => v.map((x) => BigInt(x)));
  return parquetWriteBuffer({
    columnData: columnData as Parameters<typeof parquetWriteBuffer>[0]["columnData"],
    schema: [{ name: "schema", num_children: columnData.length }, ...schema],
    createdBy: "bodylink export lerobot (hyparquet-writer)",
  });
}
