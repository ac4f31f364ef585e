/**
 * File adapters for @mcap/core (its writer and readers take small interfaces, not paths) and the
 * chunk compression both sides agree on (zstd through @foxglove/wasm-zstd, which Foxglove's own
 * reader uses too).
 *
 * {@link FileWritable} never makes the writer wait for the disk: `write` copies the buffer into a
 * queue and resolves at once; the queue drains through libuv's thread pool in order. The first
 * failure (ENOSPC, EIO, …) is latched: every later `write` rejects with it, so the recorder stops
 * with one clear line and the runtime goes on.
 */
import { type FileHandle, open } from "node:fs/promises";
import zstd from "@foxglove/wasm-zstd";
import type { IReadable, IWritable } from "@mcap/core";

/** More than this many bytes waiting for the disk is a failure too (the disk cannot keep up). */
const MAX_PENDING_BYTES = 64 * 1024 * 1024;

let zstdReady: Promise<boolean> | null = null;
/** Resolves once the zstd WebAssembly module is loaded (compress/decompress are synchronous after). */
export function loadZstd(): Promise<boolean> {
  zstdReady ??= zstd.isLoaded;
  return zstdReady;
}

/** MCAP `compressChunk` for the writer: zstd level 1 (fast; recordings of frames compress ~5x). Call `loadZstd()` first. */
export function compressZstd(data: Uint8Array): { compression: string; compressedData: Uint8Array } {
  return { compression: "zstd", compressedData: zstd.compress(data, 1) };
}

/**
 * The most a chunk may declare uncompressed, bytes (64 MiB): bodylink's recorder writes 256 KiB
 * chunks, the mcap CLI 4 MiB. zstd decompresses into a buffer of the declared size at once, so a
 * 37 KB file can declare (and honestly hold: zstd's run-length blocks) 1 GB of zeros; the size is
 * checked before anything is allocated.
 */
export const MAX_CHUNK_BYTES = 64 * 1024 * 1024;

/** A chunk declares more than MAX_CHUNK_BYTES: refused before decompressing. */
export class ChunkTooLargeError extends Error {
  constructor(declaredBytes: bigint, compression: string) {
    super(
      `a ${compression} chunk declares ${declaredBytes.toLocaleString("en-US")} bytes uncompressed, more than the ${MAX_CHUNK_BYTES / 1024 / 1024} MiB bodylink decompresses per chunk (its recorder writes 256 KiB chunks); refused before allocating`,
    );
  }
}

/** `decompressHandlers` for McapIndexedReader / McapStreamReader: refuses a chunk over MAX_CHUNK_BYTES. Call `loadZstd()` first. */
export const DECOMPRESS_HANDLERS = {
  zstd: (buffer: Uint8Array, decompressedSize: bigint): Uint8Array => {
    if (decompressedSize > BigInt(MAX_CHUNK_BYTES)) throw new ChunkTooLargeError(decompressedSize, "zstd");
    return zstd.decompress(buffer, Number(decompressedSize));
  },
};

export class FileWritable implements IWritable {
  readonly path: string;
  #fh: FileHandle | null;
  #position = 0n;
  #written = 0;
  #pending: Uint8Array[] = [];
  #pendingBytes = 0;
  #flushing: Promise<void> | null = null;
  #error: Error | null = null;

  private constructor(path: string, fh: FileHandle) {
    this.path = path;
    this.#fh = fh;
  }

  /** Create (or truncate) `path`. Rejects with the system's error (EACCES, ENOENT …). */
  static async open(path: string): Promise<FileWritable> {
    return new FileWritable(path, await open(path, "w"));
  }

  /** The first write error, or null. */
  get error(): Error | null {
    return this.#error;
  }

  /** Bytes handed to the writer (the file's size once flushed). */
  get bytes(): number {
    return Number(this.#position);
  }

  /** Bytes the disk has taken. */
  get writtenBytes(): number {
    return this.#written;
  }

  position(): bigint {
    return this.#position;
  }

  write(buffer: Uint8Array): Promise<void> {
    if (this.#error) return Promise.reject(this.#error);
    // The writer reuses its buffer after this resolves: keep a copy.
    this.#pending.push(buffer.slice());
    this.#pendingBytes += buffer.length;
    this.#position += BigInt(buffer.length);
    if (this.#pendingBytes > MAX_PENDING_BYTES) {
      this.#error = new Error(`the disk is not keeping up (${(this.#pendingBytes / 1e6).toFixed(0)} MB waiting)`);
      return Promise.reject(this.#error);
    }
    this.#flushing ??= this.#flush();
    return Promise.resolve();
  }

  async #flush(): Promise<void> {
    try {
      while (this.#pending.length > 0 && !this.#error) {
        const parts = this.#pending;
        this.#pending = [];
        const total = parts.reduce((n, p) => n + p.length, 0);
        const joined = parts.length === 1 ? parts[0]! : Buffer.concat(parts, total);
        let off = 0;
        while (off < joined.length) {
          const { bytesWritten } = await this.#fh!.write(joined, off, joined.length - off);
          if (bytesWritten <= 0) throw new Error("the file took no bytes");
          off += bytesWritten;
        }
        this.#written += total;
        this.#pendingBytes -= total;
      }
    } catch (e) {
      this.#error ??= e as Error;
    } finally {
      this.#flushing = null;
    }
  }

  /** Wait until everything queued is on disk (or failed). */
  async flush(): Promise<void> {
    while (this.#flushing) await this.#flushing;
    if (this.#error) throw this.#error;
  }

  /** Flush and close. Rejects with the latched error if writing failed (the file is closed either way). */
  async close(): Promise<void> {
    try {
      await this.flush();
    } finally {
      const fh = this.#fh;
      this.#fh = null;
      await fh?.close().catch(() => {});
    }
  }
}

/** IReadable over a file, for McapIndexedReader. */
export class FileReadable implements IReadable {
  readonly #fh: FileHandle;
  readonly #size: bigint;
  private constructor(fh: FileHandle, size: bigint) {
    this.#fh = fh;
    this.#size = size;
  }
  static async open(path: string): Promise<FileReadable> {
    const fh = await open(path, "r");
    const st = await fh.stat();
    return new FileReadable(fh, BigInt(st.size));
  }
  async size(): Promise<bigint> {
    return this.#size;
  }
  async read(offset: bigint, size: bigint): Promise<Uint8Array> {
    const n = Number(size);
    const buf = new Uint8Array(n);
    let got = 0;
    while (got < n) {
      const { bytesRead } = await this.#fh.read(buf, got, n - got, Number(offset) + got);
      if (bytesRead === 0) throw new Error(`short read at ${Number(offset) + got}`);
      got += bytesRead;
    }
    return buf;
  }
  close(): Promise<void> {
    return this.#fh.close();
  }
}
