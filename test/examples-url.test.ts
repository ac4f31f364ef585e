/**
 * The SDK examples take the runtime's URL as their "no runtime" error says: `--url URL`, else
 * $BODYLINK_URL, else the default port.
 */
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const run = promisify(execFile);

describe("examples --url", () => {
  for (const file of ["examples/nao.ts", "examples/any-body.ts"]) {
    it(`${file} connects where --url says (nothing there: one line naming that URL)`, async () => {
      const env = { ...process.env };
      delete env.BODYLINK_URL;
      const r = await run(process.execPath, ["--import", "tsx", file, "--url", "http://127.0.0.1:9"], { env, timeout: 60_000 }).catch((e: { code: number; stdout: string; stderr: string }) => e);
      expect("code" in r ? r.code : 0).toBe(1);
      const lines = r.stderr.trim().split("\n");
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(/no runtime answers at http:\/\/127\.0\.0\.1:9\b.*\[BL_ERR_CLI_NO_RUNTIME\]$/);
    }, 60_000);
  }
});
