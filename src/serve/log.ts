/**
 * Client-supplied text in log lines (docs/security.md): a lease owner, a LoLA key, an e-stop
 * reason may hold newlines or terminal escapes; written raw they forge log lines or drive the
 * operator's terminal. `escapeForLog` keeps printable text as it is and writes every control
 * character (C0, DEL, C1, and the line/paragraph separators) as a \uXXXX escape, and bounds the
 * length. Pure; browser-safe. Also the log's choices (`serve --log-format`, `--log-level`), here
 * so the CLI's flags read them without loading pino (logger.ts).
 */
import type { LevelWithSilent } from "pino";

export const LOG_FORMATS = ["pretty", "json"] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

/** pino's levels, most severe first; `silent` logs nothing. */
export const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const satisfies readonly LevelWithSilent[];
export type LogLevel = (typeof LOG_LEVELS)[number];

/** Longest client text a log line carries (the rest is cut with "…"). */
export const MAX_LOGGED_TEXT = 200;

export function escapeForLog(text: string, max = MAX_LOGGED_TEXT): string {
  const cut = text.length > max ? `${text.slice(0, max)}…` : text;
  // biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
  return cut.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}
