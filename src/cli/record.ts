/**
 * `bodylink record FILE.mcap`: run the runtime (like `serve`, same options) and record it;
 * `bodylink record --info FILE.mcap`: channels, schemas, message counts, duration, size, and
 * whether the file was cut short. Formats and channels: docs/recordings.md.
 */
import type { Command } from "commander";
import { CliError, parseIntOption } from "./errors.js";
import { addServeOptions } from "./serve-command.js";

export function registerLolaDump(program: Command): void {
  program
    .command("lola-dump <file>")
    .description("connect to a LoLA socket as a client that sends nothing and record every sensor message exactly as received (the LoLA half of verify's robot recipe)")
    .option("--lola-path <path>", "the LoLA socket", "/tmp/robocup")
    .option("--duration <s>", "stop after N seconds (default: Ctrl-C)", parseIntOption("--duration", 1, 31_536_000))
    .action(async (file: string, o: { lolaPath: string; duration?: number }) => {
      const { LolaDump } = await import("../record/lola-dump.js");
      const dump = await LolaDump.start({ path: file, lolaPath: o.lolaPath });
      console.log(`dumping LoLA messages from ${o.lolaPath} to ${file}${o.duration ? ` for ${o.duration} s` : ""}; Ctrl-C to stop.`);
      const done = new Promise<string>((resolve) => {
        process.once("SIGINT", () => resolve("SIGINT"));
        process.once("SIGTERM", () => resolve("SIGTERM"));
        if (o.duration) setTimeout(() => resolve(`${o.duration} s`), o.duration * 1000).unref();
      });
      const why = await done;
      await dump.stop();
      console.log(`${why}: ${dump.messages.toLocaleString("en-US")} LoLA messages in ${file}`);
      process.exit(0);
    });
}

export function registerRecord(program: Command): void {
  addServeOptions(
    program
      .command("record [file]")
      .description("run the runtime like `serve` and record it to an MCAP file (raw chest-board frames, LoLA messages, decoded and API state, events); --info FILE describes a recording")
      .option("--info", "describe an existing recording instead: channels, schemas, counts, duration, size")
      .option("--json", "with --info: print JSON"),
  ).action(async (file: string | undefined, _raw: Record<string, unknown>, cmd: Command) => {
    const { optionsWithConfig } = await import("./config.js");
    const raw = (await optionsWithConfig(cmd)).opts;
    if (!file) throw new CliError("record needs a FILE (e.g. bodylink record run.mcap)", 2);
    if (raw.info) {
      const { formatRecordingInfo, readRecordingInfo } = await import("../record/reader.js");
      const info = await readRecordingInfo(file);
      if (raw.json) console.log(JSON.stringify(info, (_k, v) => (typeof v === "bigint" ? v.toString() : v), 2));
      else for (const l of formatRecordingInfo(info)) console.log(l);
      return;
    }
    const { runServe } = await import("./serve.js");
    await runServe({ ...(raw as Parameters<typeof runServe>[0]), record: file }, { exitWhenRecordingEnds: true });
  });
}
