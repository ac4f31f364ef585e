/**
 * MCAP decompression is bounded (issue 25, Build 5): a 37 KB file holding one honest zstd chunk of
 * 1 GiB of zeros (zstd's run-length blocks: 4 bytes per 128 KiB) is refused by `record --info`'s
 * and verify's readers with one clear error before anything is allocated. The file is built byte
 * by byte (MCAP spec: magic, Header, Chunk, DataEnd, Footer, magic).
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import zstd from "@foxglove/wasm-zstd";
import { describe, expect, it } from "vitest";
import { ChunkTooLargeError, DECOMPRESS_HANDLERS, loadZstd, MAX_CHUNK_BYTES } from "../../src/record/mcap-io.js";
import { readRecordingInfo, streamRecording } from "../../src/record/reader.js";
import { cli, expectOneErrorLine } from "../support/cli.js";
import { tmpDir } from "./helpers.js";

const MAGIC = [0x89, 0x4d, 0x43, 0x41, 0x50, 0x30, 0x0d, 0x0a]; // "\x89MCAP0\r\n"
const u32 = (n: number) => {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(n);
  return [...b];
};
const u64 = (n: bigint) => {
  const b = Buffer.alloc(8);
  b.writeBigUInt64LE(n);
  return [...b];
};
const str = (s: string) => [...u32(Buffer.byteLength(s)), ...Buffer.from(s)];
const record = (op: number, body: number[]) => [op, ...u64(BigInt(body.length)), ...body];

/** A zstd frame of `bytes` zeros in RLE blocks of 128 KiB: honest (it decompresses to exactly that), ~4 bytes per block. */
function zeroFrame(bytes: number): Buffer {
  const BLOCK = 128 * 1024;
  const out: number[] = [
    ...u32(0xfd2fb528), // zstd magic
    0xe0, // frame header descriptor: 8-byte content size, single segment, no checksum
    ...u64(BigInt(bytes)), // frame content size
  ];
  for (let left = bytes; left > 0; left -= BLOCK) {
    const n = Math.min(BLOCK, left);
    const header = (left === n ? 1 : 0) | (1 << 1) | (n << 3); // last block | RLE | size
    out.push(header & 0xff, (header >> 8) & 0xff, (header >> 16) & 0xff, 0x00); // 3-byte block header, the byte repeated
  }
  return Buffer.from(out);
}

function bombFile(path: string, declared: number): number {
  const frame = zeroFrame(declared);
  const bytes = Buffer.from([
    ...MAGIC,
    ...record(0x01, [...str(""), ...str("chunk-bomb")]), // Header: profile, library
    ...record(0x06, [
      ...u64(0n), // message start time
      ...u64(0n), // message end time
      ...u64(BigInt(declared)), // uncompressed size: honest
      ...u32(0), // uncompressed CRC: 0 = not given
      ...str("zstd"), // compression
      ...u64(BigInt(frame.length)), // records: byte length
      ...frame,
    ]),
    ...record(0x0f, u32(0)), // DataEnd: no CRC
    ...record(0x02, [...u64(0n), ...u64(0n), ...u32(0)]), // Footer: no summary
    ...MAGIC,
  ]);
  writeFileSync(path, bytes);
  return bytes.length;
}

describe("MCAP chunk bound", () => {
  it("the zero frame is honest: a small one decompresses to exactly its declared zeros", async () => {
    await zstd.isLoaded;
    const small = zstd.decompress(zeroFrame(300_000), 300_000);
    expect(small.length).toBe(300_000);
    expect(small.every((b) => b === 0)).toBe(true);
  });

  it("a 37 KB file with one 1 GiB zstd chunk is refused by record --info and verify's reader, before allocating", async () => {
    const path = join(tmpDir(), "bomb.mcap");
    const size = bombFile(path, 1024 * 1024 * 1024);
    expect(size).toBeGreaterThan(30_000);
    expect(size).toBeLessThan(40_000);
    const rss0 = process.memoryUsage().rss;
    await expect(readRecordingInfo(path)).rejects.toThrow(/declares 1,073,741,824 bytes uncompressed, more than the 64 MiB .* refused before allocating/);
    const drain = async () => {
      for await (const _ of streamRecording(path));
    };
    await expect(drain()).rejects.toMatchObject({ code: "BL_ERR_RECORD_READ" });
    expect(process.memoryUsage().rss - rss0).toBeLessThan(100 * 1024 * 1024);
  });

  it("a chunk of exactly the bound is decompressed; one byte more is refused", async () => {
    await loadZstd();
    expect(DECOMPRESS_HANDLERS.zstd(zeroFrame(MAX_CHUNK_BYTES), BigInt(MAX_CHUNK_BYTES)).length).toBe(MAX_CHUNK_BYTES);
    expect(() => DECOMPRESS_HANDLERS.zstd(zeroFrame(MAX_CHUNK_BYTES + 1), BigInt(MAX_CHUNK_BYTES + 1))).toThrow(ChunkTooLargeError);
    const over = join(tmpDir(), "over.mcap");
    bombFile(over, MAX_CHUNK_BYTES + 1);
    await expect(readRecordingInfo(over)).rejects.toThrow(/declares 67,108,865 bytes uncompressed/);
  });

  it("the CLI says it in one line: record --info and verify", async () => {
    const dir = tmpDir();
    const path = join(dir, "bomb.mcap");
    bombFile(path, 1024 * 1024 * 1024);
    const env = { ...process.env, BODYLINK_RUNTIME_DIR: join(dir, "rt") };
    for (const args of [
      ["record", "--info", path],
      ["verify", path],
    ]) {
      const r = await cli(env, ...args);
      expect(expectOneErrorLine(r, "BL_ERR_RECORD_READ")).toMatch(/more than the 64 MiB bodylink decompresses per chunk/);
    }
  }, 60_000);
});
