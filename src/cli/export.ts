/**
 * `bodylink export lerobot OUT_DIR RECORDING.mcap…`: recordings → a LeRobot dataset (v2.1 by
 * default, what openpi reads; `--format v3.0`). The mapping per body, the resampling and the
 * layout: src/export/lerobot.ts and docs/recordings.md, "Train from a recording".
 */
import { readdir } from "node:fs/promises";
import type { Command } from "commander";
import { BodylinkError } from "../errors.js";
import { STREAM_RATE_HZ } from "../bodies/link.js";
import { EPISODE_SPLITS, type EpisodeSplit, LEROBOT_FORMATS, type LerobotFormat } from "../export/formats.js";
import { parseChoice, parseIntOption } from "./errors.js";

/** An OUT_DIR that already holds files would mix two datasets: refuse it. */
async function emptyOrMissing(dir: string): Promise<void> {
  let entries: string[];
  try {
    entries = await readdir(dir);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return;
    if ((e as NodeJS.ErrnoException).code === "ENOTDIR") throw new BodylinkError("BL_ERR_EXPORT_INPUT", `${dir} is a file, not a directory`);
    throw e;
  }
  if (entries.length > 0) throw new BodylinkError("BL_ERR_EXPORT_INPUT", `${dir} is not empty; give a new directory (a dataset is written whole)`);
}

export function registerExport(program: Command): void {
  const exp = program.command("export").description("turn recordings into datasets other tools read");
  exp
    .command("lerobot <outDir> <recordings...>")
    .description("write a LeRobot dataset (observation.state, action, timestamp, indices; meta/info.json, tasks, episodes, stats) from recordings of one body (NAO, P7, TNY-360)")
    .option("--format <version>", `LeRobot dataset format: ${LEROBOT_FORMATS.join(" | ")} (v2.1: what openpi reads)`, parseChoice("--format", LEROBOT_FORMATS), "v2.1")
    .option("--fps <n>", `frames per second (default: the robot API's rate, ${STREAM_RATE_HZ})`, parseIntOption("--fps", 1, 1000))
    .option("--episodes <split>", "an episode per recording file (file) or per control session, lease acquired to released (control)", parseChoice("--episodes", EPISODE_SPLITS), "file")
    .option("--task <text>", "the task (language instruction) of every episode", "bodylink recording")
    .action(async (outDir: string, recordings: string[], o: { format: LerobotFormat; fps?: number; episodes: EpisodeSplit; task: string }) => {
      await emptyOrMissing(outDir);
      const { exportLerobot } = await import("../export/lerobot.js");
      const s = await exportLerobot({ outDir, recordings, format: o.format, episodes: o.episodes, task: o.task, ...(o.fps === undefined ? {} : { fps: o.fps }) });
      console.log(`${s.body} → LeRobot ${s.format} dataset in ${outDir}: ${s.episodes.length} episode(s), ${s.totalFrames} frames at ${s.fps} fps`);
      for (const e of s.episodes) console.log(`  episode ${e.episodeIndex}: ${e.frames} frames (${((e.toMs - e.fromMs) / 1000).toFixed(2)} s) from ${e.recording}`);
    });
}
