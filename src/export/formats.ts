/**
 * The LeRobot export's choices (`bodylink export lerobot --format`, `--episodes`), apart from
 * lerobot.ts so the CLI's flags read them without loading Parquet and the recording reader.
 */
export type LerobotFormat = "v2.1" | "v3.0";
export const LEROBOT_FORMATS: readonly LerobotFormat[] = ["v2.1", "v3.0"];
export type EpisodeSplit = "file" | "control";
export const EPISODE_SPLITS: readonly EpisodeSplit[] = ["file", "control"];
