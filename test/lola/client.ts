/**
 * A minimal LoLA client for tests, shaped like HULKs' and nidhogg's: `read_exact(896)` framing on
 * a Unix stream socket, raw writes for commands.
 */
import { type Server, type Socket, connect, createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { LolaLogLevel } from "../../src/serve/lola/server.js";

let n = 0;
/** A fresh socket path under the OS temp dir (short: Unix socket paths are limited to ~107 bytes). */
export function tmpSocketPath(): string {
  return join(tmpdir(), `bl-lola-${process.pid}-${++n}.sock`);
}

export class TestLolaClient {
  readonly socket: Socket;
  #chunks: Buffer[] = [];
  #pending = 0;
  #waiter: { n: number; resolve: (b: Buffer) => void; reject: (e: Error) => void } | null = null;
  #ended = false;
  /** Every byte received, in order (for tests that look at the raw stream). */
  received = 0;
  readonly closed: Promise<void>;

  private constructor(socket: Socket) {
    this.socket = socket;
    socket.on("data", (b: Buffer) => {
      this.#chunks.push(b);
      this.#pending += b.length;
      this.received += b.length;
      this.#tryResolve();
    });
    this.closed = new Promise((resolve) => {
      socket.on("close", () => {
        this.#ended = true;
        const w = this.#waiter;
        if (w && this.#pending < w.n) {
          this.#waiter = null;
          w.reject(new Error(`connection closed with ${this.#pending} of ${w.n} bytes`));
        }
        resolve();
      });
    });
    socket.on("error", () => {});
  }

  static connect(path: string): Promise<TestLolaClient> {
    return new Promise((resolve, reject) => {
      const s = connect(path);
      s.once("connect", () => resolve(new TestLolaClient(s)));
      s.once("error", reject);
    });
  }

  get pending(): number {
    return this.#pending;
  }
  get ended(): boolean {
    return this.#ended;
  }

  /** Resolve exactly `n` bytes (read_exact), or reject if the connection closes first. */
  readExact(n: number, timeoutMs = 5000): Promise<Buffer> {
    if (this.#waiter) throw new Error("one read at a time");
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#waiter = null;
        reject(new Error(`timed out waiting for ${n} bytes (have ${this.#pending})`));
      }, timeoutMs);
      this.#waiter = {
        n,
        resolve: (b) => {
          clearTimeout(timer);
          resolve(b);
        },
        reject: (e) => {
          clearTimeout(timer);
          reject(e);
        },
      };
      this.#tryResolve();
      if (this.#waiter && this.#ended) {
        this.#waiter = null;
        clearTimeout(timer);
        reject(new Error(`connection closed with ${this.#pending} of ${n} bytes`));
      }
    });
  }

  /** The next sensor message. */
  frame(): Promise<Buffer> {
    return this.readExact(896);
  }

  /** Everything received until the server closes the connection. */
  async rest(): Promise<Buffer> {
    await this.closed;
    const b = Buffer.concat(this.#chunks);
    this.#chunks = [];
    this.#pending = 0;
    return b;
  }

  /** Drop whatever is buffered (frames the test does not care about). */
  discard(): void {
    this.#chunks = [];
    this.#pending = 0;
  }

  send(bytes: Uint8Array): Promise<void> {
    return new Promise((resolve, reject) => this.socket.write(bytes, (e) => (e ? reject(e) : resolve())));
  }

  close(): Promise<void> {
    this.socket.destroy();
    return this.closed;
  }

  #tryResolve(): void {
    const w = this.#waiter;
    if (!w || this.#pending < w.n) return;
    const all = this.#chunks.length === 1 ? this.#chunks[0]! : Buffer.concat(this.#chunks);
    const out = Buffer.from(all.subarray(0, w.n));
    const rest = all.subarray(w.n);
    this.#chunks = rest.length > 0 ? [rest] : [];
    this.#pending = rest.length;
    this.#waiter = null;
    w.resolve(out);
  }
}

/** Wait (real time, polling every few ms) until `cond` holds. For socket round trips, not for timing. */
export async function until(cond: () => boolean, what: string, timeoutMs = 5000): Promise<void> {
  const t0 = Date.now();
  while (!cond()) {
    if (Date.now() - t0 > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 2));
  }
}

export interface LogLine {
  level: LolaLogLevel;
  message: string;
}

/** A raw socket server on `path`: the test decides every byte. `close()` ends its connections and stops it. */
export async function rawSocketServer(
  path: string,
  onConnection: (s: Socket, n: number) => void,
): Promise<{ server: Server; connections: () => number; received: Buffer[]; close: () => Promise<void> }> {
  let n = 0;
  const received: Buffer[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((s) => {
    sockets.add(s);
    s.on("data", (b) => received.push(b));
    s.on("error", () => {});
    s.on("close", () => sockets.delete(s));
    onConnection(s, ++n);
  });
  await new Promise<void>((resolve) => server.listen(path, resolve));
  const close = () =>
    new Promise<void>((resolve) => {
      for (const s of sockets) s.destroy();
      server.close(() => resolve());
    });
  return { server, connections: () => n, received, close };
}
