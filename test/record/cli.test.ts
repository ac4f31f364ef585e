/** The CLI end to end: record for a while, describe the file, verify it, replay it (the installed entry, bin/bodylink.js). */
import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { tmpDir } from "./helpers.js";

const run = promisify(execFile);
const dir = tmpDir();
const env = { ...process.env, BODYLINK_RUNTIME_DIR: join(dir, "rt") };
const cli = (...args: string[]) => run(process.execPath, ["bin/bodylink.js", ...args], { env, timeout: 90_000 });

describe("bodylink record / verify / replay", () => {
  it("record --duration, record --info, verify and replay --speed agree on one file", async () => {
    const file = join(dir, "cli.mcap");
    const rec = await cli("record", file, "--duration", "2", "--api-port", "0", "--lola-path", join(dir, "lola.sock"), "--no-tny");
    expect(rec.stdout).toMatch(/recording: .*cli\.mcap, for 2 s/);
    expect(rec.stdout).toMatch(/real-time core in its own thread/); // the core records from its worker
    expect(rec.stdout).toMatch(/recorded [\d,]+ messages, [\d.]+ MB in .*cli\.mcap/);
    const info = await cli("record", "--info", file);
    expect(info.stdout).toMatch(/complete: summary and footer present/);
    expect(info.stdout).toMatch(/\/lola\/sensor\s+bodylink\.lola\.msgpack/);
    const v = await cli("verify", file);
    expect(v.stdout).toMatch(/values in [\d,]+ of LoLA's messages came out bit-identical\.\n$/);
    const rp = await cli("replay", file, "--speed", "8", "--api-port", "0", "--lola-path", join(dir, "lola2.sock"));
    expect(rp.stdout).toMatch(/end of the recording: [\d,]+ cycles played; ([\d,]+) of \1 LoLA messages sent were byte-identical to the recording/);
    for (const c of [["record"], ["verify"], ["replay"]]) expect((await cli(...c, "--help")).stdout).toMatch(/^Usage: bodylink/);
  }, 180_000);
});
