/**
 * One check, one message: `record --info`, `verify` and `replay` on a file that is not MCAP (empty,
 * text) all say "not an MCAP file" with the same code; `replay` is NAO-only and refuses another
 * body's recording in one line that says so.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startRuntime } from "../../src/cli/serve.js";
import { cli, expectOneErrorLine } from "../support/cli.js";
import { useRuntimeDir } from "../support/runtime-dir.js";
import { SIM_RUNTIME_OPTIONS } from "../support/sim-runtime.js";

useRuntimeDir("bodylink-mcapin-rt-");
const dir = mkdtempSync(join(tmpdir(), "bodylink-mcapin-"));
const env = { ...process.env, BODYLINK_RUNTIME_DIR: join(dir, "run") };
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const empty = join(dir, "empty.mcap");
const text = join(dir, "notes.mcap");
const p7 = join(dir, "arm.mcap");

beforeAll(async () => {
  writeFileSync(empty, "");
  writeFileSync(text, "these are my notes, not a recording\n");
  const rt = await startRuntime({ ...SIM_RUNTIME_OPTIONS, body: "p7", seed: 3, record: p7 });
  await new Promise((r) => setTimeout(r, 400));
  await rt.close();
}, 60_000);

describe("a file that is not MCAP", () => {
  for (const [what, file, reason] of [
    ["empty", empty, "not an MCAP file (it is empty)"],
    ["text", text, "not an MCAP file (no header)"],
  ] as const) {
    it(`${what}: record --info, verify and replay say the same line`, async () => {
      const lines = await Promise.all([cli(env, "record", "--info", file), cli(env, "verify", file), cli(env, "replay", file, "--api-port", "0", "--no-lola")]);
      for (const r of lines) expect(expectOneErrorLine(r, "BL_ERR_RECORD_READ")).toBe(`cannot read ${file}: ${reason}`);
    }, 60_000);
  }
});

describe("replay is NAO-only", () => {
  it("a P7 recording is refused in one line naming the body, before anything starts", async () => {
    const r = await cli(env, "replay", p7, "--api-port", "0", "--no-lola");
    expect(expectOneErrorLine(r, "BL_ERR_REPLAY_INPUT")).toMatch(/^cannot replay: .*arm\.mcap records a p7 \(metadata body=p7\): replay works on NAO recordings/);
    expect(r.stdout).toBe("");
  }, 60_000);
});
