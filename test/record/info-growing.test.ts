/**
 * `record --info` on a file a recorder is still writing: the size it reports is never smaller than
 * what it read ("readable up to byte 413,887 of 369,430" was), and it says the file is still being
 * written rather than cut short.
 */
import { appendFileSync, copyFileSync, readFileSync, statSync, truncateSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { formatRecordingInfo, readRecordingInfo, streamRecording } from "../../src/record/reader.js";
import { recordedSim, tmpDir } from "./helpers.js";

describe("record --info on a growing file", () => {
  it("reports a size at least what it read, and STILL BEING WRITTEN when the file grew while read", async () => {
    const dir = tmpDir();
    const path = join(dir, "full.mcap");
    const sim = await recordedSim(path, { chunkBytes: 16 * 1024 });
    await sim.cycles(200);
    await sim.close();
    const bytes = readFileSync(path);
    for (let round = 0; round < 5; round++) {
      const growing = join(dir, `growing-${round}.mcap`);
      copyFileSync(path, growing);
      truncateSync(growing, Math.floor(bytes.length * 0.4));
      // A recorder appending as fast as the event loop turns while --info reads.
      let at = Math.floor(bytes.length * 0.4);
      let appending = true;
      const append = () => {
        if (!appending || at >= Math.floor(bytes.length * 0.8)) return;
        appendFileSync(growing, bytes.subarray(at, at + 2048));
        at += 2048;
        setImmediate(append);
      };
      setImmediate(append);
      const info = await readRecordingInfo(growing);
      appending = false;
      expect(info.complete).toBe(false);
      expect(info.readableUpToByte!).toBeLessThanOrEqual(info.sizeBytes);
      expect(info.sizeBytes).toBeLessThanOrEqual(statSync(growing).size);
      if (info.stillWriting) {
        expect(formatRecordingInfo(info)[1]).toMatch(/^STILL BEING WRITTEN: it grew while it was read/);
      } else expect(formatRecordingInfo(info)[1]).toMatch(/^CUT SHORT/);
    }
    // Whether the appends above land inside the read is up to the scheduler (a loaded machine can
    // finish the read first): the invariants held either way. Growth itself, deterministically: the
    // same reader, grown after its first record (after it took the file's size).
    const grown = join(dir, "grown.mcap");
    copyFileSync(path, grown);
    truncateSync(grown, Math.floor(bytes.length * 0.4));
    let end: { complete: boolean; grew: boolean; size: number } | null = null;
    let first = true;
    for await (const _ of streamRecording(grown, (e) => (end = e))) {
      if (first) appendFileSync(grown, bytes.subarray(Math.floor(bytes.length * 0.4), Math.floor(bytes.length * 0.6)));
      first = false;
    }
    expect(end).toMatchObject({ complete: false, grew: true });
    expect(end!.size).toBe(statSync(grown).size);
    const whenGrown = await readRecordingInfo(grown); // not growing now: cut short at its new size
    expect(whenGrown.sizeBytes).toBe(Math.floor(bytes.length * 0.6));
    expect(formatRecordingInfo({ ...whenGrown, stillWriting: true })[1]).toMatch(/^STILL BEING WRITTEN: it grew while it was read/);
    // A file that does not grow is cut short, as before.
    const cut = join(dir, "cut.mcap");
    copyFileSync(path, cut);
    truncateSync(cut, Math.floor(bytes.length * 0.5));
    const still = await readRecordingInfo(cut);
    expect(still.stillWriting).toBe(false);
  }, 60_000);
});
