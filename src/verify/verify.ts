/**
 * `bodylink verify`'s inputs: a bodylink recording (raw frames and LoLA messages in one MCAP
 * file, in the order the real-time side saw them), or a usbmon capture of the chest board's USB
 * traffic plus a LoLA dump (an MCAP with `/lola/upstream/sensor` or `/lola/sensor`), paired by
 * time. Both end in the same {@link Verifier}.
 */
import { readFile } from "node:fs/promises";
import { BodylinkError } from "../errors.js";
import { PREFS_ATTACHMENT } from "../record/channels.js";
import { PreferenceAssembler } from "../record/prefs-from-frames.js";
import { notANaoRecording, readAttachments, streamRecording } from "../record/reader.js";
import { PREFS } from "../wire/chestboard/constants.js";
import { parseCapture, usbChestboardTransfers } from "./pcap.js";
import { Verifier, type VerifyResult } from "./verifier.js";

export const LOLA_TOPICS = ["/lola/sensor", "/lola/upstream/sensor"] as const;

export interface VerifyOptions {
  /** Keep at most this many differences for the report. Defaults to 20. */
  maxDifferences?: number;
  /** A preference block to use when the input has none: a raw 4,635-byte file, or a bodylink recording. */
  prefsPath?: string;
  /** Which LoLA channel to compare. Defaults to the first of LOLA_TOPICS present. */
  lolaTopic?: string;
  /** usbmon only: added to the LoLA dump's times before pairing, ms. Defaults to 0. */
  offsetMs?: number;
  /** usbmon only: the chest board's "bus.device" (e.g. "1.3"). Defaults to the device with the most bulk traffic on EP1. */
  usbDevice?: string;
}

export interface VerifyReport {
  readonly result: VerifyResult;
  readonly notes: readonly string[];
}

/** The preference block: from `--prefs`, else the recording's attachment, else assembled from its answer frames. */
async function prefsFromFile(path: string): Promise<Uint8Array | null> {
  let bytes: Uint8Array;
  try {
    bytes = await readFile(path);
  } catch (e) {
    throw new BodylinkError("BL_ERR_VERIFY_INPUT", `--prefs ${path}: ${(e as Error).message}`);
  }
  if (bytes.length === PREFS.BLOCK_BYTES) return bytes;
  const fromRecording = await prefsFromRecording(path).catch((e: unknown) => {
    if (e instanceof BodylinkError && e.code === "BL_ERR_RECORD_READ") return null; // neither: said below
    throw e;
  });
  if (!fromRecording) throw new BodylinkError("BL_ERR_VERIFY_INPUT", `--prefs ${path}: neither a ${PREFS.BLOCK_BYTES}-byte preference block nor a recording that holds one`);
  return fromRecording;
}

async function prefsFromRecording(path: string): Promise<Uint8Array | null> {
  const assembler = new PreferenceAssembler();
  for await (const m of streamRecording(path)) {
    if (m.topic === "/nao/chestboard/in" && assembler.push(m.data)) return assembler.result();
  }
  // Attachments are not messages: look for the one the recorder writes.
  return (await readAttachments(path)).get(PREFS_ATTACHMENT) ?? null;
}

/** Verify a bodylink recording. */
export async function verifyRecording(path: string, opts: VerifyOptions = {}): Promise<VerifyReport> {
  const notes: string[] = [];
  const prefs = opts.prefsPath ? await prefsFromFile(opts.prefsPath) : await prefsFromRecording(path);
  if (!prefs)
    throw new BodylinkError("BL_ERR_VERIFY_INPUT", (await notANaoRecording(path, "verify")) ?? `${path} holds no preference block (no ${PREFS_ATTACHMENT}, no preference reads); pass --prefs FILE`);
  const v = new Verifier(prefs, { maxDifferences: opts.maxDifferences });
  let topic = opts.lolaTopic ?? null;
  let frames = 0;
  let complete = true;
  for await (const m of streamRecording(path, (e) => (complete = e.complete))) {
    if (m.topic === "/nao/chestboard/in") {
      frames++;
      v.answer(m.data, m.data.length, m.logTimeNs);
    } else if (m.topic === "/nao/chestboard/out") v.command(m.data, m.data.length);
    else if ((topic === null && (LOLA_TOPICS as readonly string[]).includes(m.topic)) || m.topic === topic) {
      topic ??= m.topic;
      v.lola(m.data, m.logTimeNs);
    }
  }
  if (!complete) notes.push(`${path} was cut short (no summary); verified up to its last complete chunk`);
  if (frames === 0)
    throw new BodylinkError(
      "BL_ERR_VERIFY_INPUT",
      `${path} holds no raw chest-board frames (/nao/chestboard/in); for a LoLA dump, pass the usbmon capture too: bodylink verify CAPTURE.pcap --lola ${path}`,
    );
  if (v.result().messages === 0) throw new BodylinkError("BL_ERR_VERIFY_INPUT", `${path} holds no LoLA messages (${LOLA_TOPICS.join(" or ")})`);
  return { result: v.result(), notes };
}

/** Verify a usbmon capture against a LoLA dump, paired by time. */
export async function verifyCapture(capturePath: string, lolaPath: string, opts: VerifyOptions = {}): Promise<VerifyReport> {
  const notes: string[] = [];
  let bytes: Uint8Array;
  try {
    bytes = await readFile(capturePath);
  } catch (e) {
    throw new BodylinkError("BL_ERR_VERIFY_INPUT", `${capturePath}: ${(e as Error).message}`);
  }
  let transfers: ReturnType<typeof usbChestboardTransfers>;
  try {
    const cap = parseCapture(bytes);
    notes.push(...cap.notes);
    transfers = usbChestboardTransfers(cap.packets, opts.usbDevice);
  } catch (e) {
    throw new BodylinkError("BL_ERR_VERIFY_INPUT", `${capturePath}: ${(e as Error).message}`);
  }
  notes.push(...transfers.notes);
  let prefs: Uint8Array | null = null;
  if (opts.prefsPath) prefs = await prefsFromFile(opts.prefsPath);
  else {
    const a = new PreferenceAssembler();
    for (const t of transfers.list) if (t.direction === "in" && a.push(t.data)) break;
    prefs = a.result();
    if (!prefs) throw new BodylinkError("BL_ERR_VERIFY_INPUT", `${capturePath} does not contain the preference block (start the capture before HAL: docs/recordings.md), or pass --prefs FILE`);
  }
  // The LoLA dump's messages with their times.
  const lola: Array<{ timeNs: bigint; data: Uint8Array }> = [];
  let topic = opts.lolaTopic ?? null;
  const offsetNs = BigInt(Math.round((opts.offsetMs ?? 0) * 1e6));
  for await (const m of streamRecording(lolaPath)) {
    if ((topic === null && (LOLA_TOPICS as readonly string[]).includes(m.topic)) || m.topic === topic) {
      topic ??= m.topic;
      lola.push({ timeNs: m.logTimeNs + offsetNs, data: m.data });
    }
  }
  if (lola.length === 0) throw new BodylinkError("BL_ERR_VERIFY_INPUT", `${lolaPath} holds no LoLA messages (${LOLA_TOPICS.join(" or ")})`);
  if (offsetNs !== 0n) notes.push(`LoLA times shifted by ${opts.offsetMs} ms`);
  const v = new Verifier(prefs!, { maxDifferences: opts.maxDifferences });
  // Merge by time; at equal times USB first (a frame completed at t was decoded before a message sent at t).
  let j = 0;
  const list = transfers.list;
  for (const m of lola) {
    while (j < list.length && list[j]!.timeNs <= m.timeNs) {
      const t = list[j++]!;
      if (t.direction === "in") v.answer(t.data, t.data.length, t.timeNs);
      else v.command(t.data, t.data.length);
    }
    v.lola(m.data, m.timeNs);
  }
  const first = lola[0]!.timeNs;
  const last = lola[lola.length - 1]!.timeNs;
  const inside = list.filter((t) => t.timeNs >= first && t.timeNs <= last).length;
  if (inside === 0) notes.push("no USB transfer falls between the first and the last LoLA message: are the two captures from the same run (and the same clock)?");
  return { result: v.result(), notes };
}
