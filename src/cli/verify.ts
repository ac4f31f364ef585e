/**
 * `bodylink verify FILE`: re-decode every raw chest-board frame with the current decoder and
 * compare with the LoLA messages recorded beside them, bit for bit. FILE is a bodylink recording,
 * or a usbmon capture (pcap / pcapng) with `--lola DUMP.mcap`. Exit 0 only when every value is
 * identical. The robot recipe is in docs/recordings.md.
 */
import { open, stat } from "node:fs/promises";
import type { Command } from "commander";
import { BodylinkError, fileErrorText } from "../errors.js";
import type { VerifyReport } from "../verify/verify.js";
import { CliError, parseIntOption } from "./errors.js";

async function isCapture(path: string): Promise<boolean> {
  let fh: Awaited<ReturnType<typeof open>>;
  try {
    if (!(await stat(path)).isFile()) throw new BodylinkError("BL_ERR_VERIFY_INPUT", `${path}: not a file (a directory?)`);
    fh = await open(path, "r");
  } catch (e) {
    if (e instanceof BodylinkError) throw e;
    throw new BodylinkError("BL_ERR_VERIFY_INPUT", `${path}: ${fileErrorText(e)}`);
  }
  try {
    const b = new Uint8Array(4);
    await fh.read(b, 0, 4, 0);
    const m = new DataView(b.buffer).getUint32(0, true);
    return [0x0a0d0d0a, 0xa1b2c3d4, 0xa1b23c4d, 0xd4c3b2a1, 0x4d3cb2a1].includes(m);
  } finally {
    await fh.close();
  }
}

export function registerVerify(program: Command): void {
  program
    .command("verify <file>")
    .description("re-decode every recorded chest-board frame with the current decoder and compare with the recorded LoLA messages, bit for bit (exit 0 only when all are identical)")
    .option("--lola <dump>", "with a usbmon capture (pcap/pcapng) as FILE: the LoLA messages, an MCAP with /lola/upstream/sensor or /lola/sensor")
    .option("--prefs <file>", "the preference block, when the input has none: a raw 4,635-byte block or a bodylink recording")
    .option("--lola-topic <topic>", "which LoLA channel to compare (default: /lola/sensor, else /lola/upstream/sensor)")
    .option("--offset-ms <ms>", "usbmon: shift the LoLA dump's times by this much before pairing", (v: string) => {
      const n = Number(v);
      if (!Number.isFinite(n) || Math.abs(n) > 60_000) throw new CliError(`--offset-ms must be a number of milliseconds within ±60000, got ${JSON.stringify(v)}`, 2);
      return n;
    })
    .option("--usb-device <bus.dev>", "usbmon: the chest board's bus and device number (default: the device with the most bulk traffic on EP1)")
    .option("--max-differences <n>", "list at most this many differences", parseIntOption("--max-differences", 0, 1_000_000), 20)
    .option("--json", "print the result as JSON")
    .action(async (file: string, o: { lola?: string; prefs?: string; lolaTopic?: string; offsetMs?: number; usbDevice?: string; maxDifferences: number; json?: boolean }) => {
      const [{ formatVerifyResult }, { verifyCapture, verifyRecording }] = await Promise.all([import("../verify/verifier.js"), import("../verify/verify.js")]);
      const opts = { maxDifferences: o.maxDifferences, prefsPath: o.prefs, lolaTopic: o.lolaTopic, offsetMs: o.offsetMs, usbDevice: o.usbDevice };
      let report: VerifyReport;
      if (await isCapture(file)) {
        if (!o.lola) throw new CliError(`${file} is a packet capture: pass the LoLA messages recorded with it (--lola DUMP.mcap); docs/recordings.md has the recipe`, 2);
        report = await verifyCapture(file, o.lola, opts);
      } else {
        if (o.lola) throw new CliError("--lola goes with a usbmon capture; a bodylink recording holds its own LoLA messages", 2);
        report = await verifyRecording(file, opts);
      }
      const r = report.result;
      if (o.json) console.log(JSON.stringify({ ...r, notes: report.notes }, (_k, v) => (typeof v === "bigint" ? v.toString() : v), 2));
      else {
        for (const n of report.notes) console.log(`note: ${n}`);
        for (const l of formatVerifyResult(o.lola ? `${file} + ${o.lola}` : file, r)) console.log(l);
      }
      if (r.identicalValues !== r.values) throw new BodylinkError("BL_ERR_VERIFY_DIFFERENT", (r.values - r.identicalValues).toLocaleString("en-US"), r.messages - r.identicalMessages, r.messages);
    });
}
