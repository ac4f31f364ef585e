/**
 * `bodylink record FILE.mcap`: run the runtime (like `serve`, same options) and record it;
 * `bodylink record --info FILE.mcap`: channels, schemas, message counts, duration, size, and
 * whether the file was cut short. Formats and channels: docs/recordings.md.
 */
import type { Command } from "commander";
import { formatRecordingInfo, readRecordingInfo } from "../record/reader.js";
import { CliError } from "./errors.js";
import { addServeOptions, runServe } from "./serve.js";

export function registerRecord(program: Command): void {
  addServeOptions(
    program
      .command("record [file]")
      .description("run the runtime like `serve` and record it to an MCAP file (raw chest-board frames, LoLA messages, decoded and API state, events); --info FILE describes a recording")
      .option("--info", "describe an existing recording instead: channels, schemas, counts, duration, size")
      .option("--json", "with --info: print JSON"),
  ).action(async (file: string | undefined, raw: Record<string, unknown>) => {
    if (!file) throw new CliError("record needs a FILE (e.g. bodylink record run.mcap)", 2);
    if (raw.info) {
      const info = await readRecordingInfo(file);
      if (raw.json) console.log(JSON.stringify(info, (_k, v) => (typeof v === "bigint" ? v.toString() : v), 2));
      else for (const l of formatRecordingInfo(info)) console.log(l);
      return;
    }
    await runServe({ ...(raw as Parameters<typeof runServe>[0]), record: file }, { exitWhenRecordingEnds: true });
  });
}
