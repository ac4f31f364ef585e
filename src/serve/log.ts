/**
 * Client-supplied text in log lines (docs/security.md): a lease owner, a LoLA key, an e-stop
 * reason may hold newlines or terminal escapes; written raw they forge log lines or drive the
 * operator's terminal. `escapeForLog` keeps printable text as it is and writes every control
 * character (C0, DEL, C1, and the line/paragraph separators) as a \uXXXX escape, and bounds the
 * length. Pure; browser-safe.
 */

/** Longest client text a log line carries (the rest is cut with "…"). */
export const MAX_LOGGED_TEXT = 200;

export function escapeForLog(text: string, max = MAX_LOGGED_TEXT): string {
  const cut = text.length > max ? `${text.slice(0, max)}…` : text;
  // biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
  return cut.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}
