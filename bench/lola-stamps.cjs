/**
 * Bench-only instrumentation for `npm run bench -- lola-upstream` (never loaded in production):
 * preloaded with `node --require` into the processes of the bench (it runs in worker threads too),
 * it stamps, with process.hrtime.bigint() (CLOCK_MONOTONIC: comparable across processes), every
 * socket read and write of a LoLA-sized chunk:
 *   kind 1: a 'data' event (or a net.connect onread callback) of a chunk that is a whole number of
 *           896-byte sensor messages (stamped when the JS callback starts; the hash is of its last message),
 *   kind 2: the start of a write of an 896-byte sensor message, kind 3: that write returned,
 *   kind 4: the start of a write of a command (any other length ≥ 64 bytes), kind 5: it returned.
 * Writes are stamped on both paths a LoLA peer uses: `socket.write` and `fs.writeSync` on the
 * socket's descriptor (our LoLA server's frame write, one write(2) without stream machinery).
 * Each message is named by a 32-bit FNV-1a hash of its 896 bytes: the proxy forwards the upstream's
 * bytes unchanged, so the same hash follows one message through every process. At the thread's
 * exit the stamps go to $BL_BENCH_STAMPS/<pid>-<thread>.bin as float64 triples (kind, hash, µs
 * since $BL_BENCH_T0_NS). Preallocated: stamping allocates nothing per message.
 */
"use strict";
const dir = process.env.BL_BENCH_STAMPS;
if (dir) {
  const net = require("node:net");
  const { writeFileSync } = require("node:fs");
  const { threadId } = require("node:worker_threads");
  const t0 = BigInt(process.env.BL_BENCH_T0_NS ?? "0");
  const MAX = 1 << 17;
  const stamps = new Float64Array(MAX * 3);
  let n = 0;
  const hash = (b, off) => {
    let h = 0x811c9dc5;
    for (let i = off; i < off + 896; i++) h = Math.imul(h ^ b[i], 0x01000193);
    return h >>> 0;
  };
  const stamp = (kind, h) => {
    if (n >= MAX) return;
    const i = 3 * n++;
    stamps[i] = kind;
    stamps[i + 1] = h;
    stamps[i + 2] = Number(process.hrtime.bigint() - t0) / 1000;
  };
  const write = net.Socket.prototype.write;
  net.Socket.prototype.write = function stampedWrite(chunk, ...rest) {
    const len = chunk?.length ?? 0;
    if (len === 896 && typeof chunk !== "string") {
      const h = hash(chunk, 0);
      stamp(2, h);
      const r = write.call(this, chunk, ...rest);
      stamp(3, h);
      return r;
    }
    if (len >= 64) {
      stamp(4, 0);
      const r = write.call(this, chunk, ...rest);
      stamp(5, 0);
      return r;
    }
    return write.call(this, chunk, ...rest);
  };
  // The LoLA server writes each frame with fs.writeSync(fd, buf, offset, length) (src/serve/lola/server.ts);
  // ESM imports of node:fs see the patched function once the builtin exports are synced.
  const fs = require("node:fs");
  const writeSync = fs.writeSync;
  fs.writeSync = function stampedWriteSync(fd, buf, offset, length, ...rest) {
    if (typeof buf === "string" || !buf) return writeSync.call(this, fd, buf, offset, length, ...rest);
    const off = typeof offset === "number" ? offset : 0;
    const len = typeof length === "number" ? length : buf.length - off;
    const kind = len === 896 ? 2 : len >= 64 ? 4 : 0;
    if (kind === 0) return writeSync.call(this, fd, buf, offset, length, ...rest);
    const h = kind === 2 ? hash(buf, off) : 0;
    stamp(kind, h);
    const r = writeSync.call(this, fd, buf, offset, length, ...rest);
    stamp(kind + 1, h);
    return r;
  };
  // A client that reads into its own buffer (net.connect's onread: the proxy's upstream socket)
  // emits no 'data': its callback is stamped as kind 1 instead.
  const connect = net.connect;
  net.connect = net.createConnection = function stampedConnect(opts, ...rest) {
    const cb = opts && typeof opts === "object" && opts.onread ? opts.onread.callback : null;
    if (cb) {
      const buffer = opts.onread.buffer;
      opts = {
        ...opts,
        onread: {
          buffer,
          callback(nread, buf) {
            if (nread >= 896 && nread % 896 === 0) stamp(1, hash(buf, nread - 896));
            return cb(nread, buf);
          },
        },
      };
    }
    return connect.call(this, opts, ...rest);
  };
  require("node:module").syncBuiltinESMExports();
  const emit = net.Socket.prototype.emit;
  net.Socket.prototype.emit = function stampedEmit(event, chunk, ...rest) {
    if (event === "data" && chunk && chunk.length >= 896 && chunk.length % 896 === 0) stamp(1, hash(chunk, chunk.length - 896));
    return emit.call(this, event, chunk, ...rest);
  };
  process.on("exit", () => {
    try {
      writeFileSync(`${dir}/${process.pid}-${threadId}.bin`, Buffer.from(stamps.buffer, 0, n * 24));
    } catch {
      // the bench reports a missing file
    }
  });
}
