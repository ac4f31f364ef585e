/**
 * The local e-stop socket (docs/security.md, "A stop no HTTP load can block"): a Unix socket beside
 * the runtime's record, `<runtime dir>/<name>.estop` (the directory is 0700, the socket 0600), that
 * `bodylink estop` tries before the robot API. It shares nothing with HTTP: no port, no connection
 * bound of the API's, and, with a threaded core (serve's default), not even the thread: the core's
 * worker serves it beside the cycle (src/rt/core-worker.ts), where the Authority and the latch live,
 * so a main thread wedged by HTTP work, a request flood or a descriptor-hungry client does not hold
 * it back. The core's event loop turns between cycles, so a stop is taken within about one period.
 *
 * Protocol: one JSON line in, one JSON line out, then the server closes.
 *   {"op":"estop","category":0|1?,"reason":"…"?,"source":"…"?}  → {"ok":true,"stopped":true,"estop":{latched,reason,source,since_ms,category,phase}}
 *   {"op":"status"}                                              → {"ok":true,"estop":{…}}
 *   {"op":"reset"} or anything else                              → {"ok":false,"code","message"}
 * A stop needs nothing (stopping is always safe, and the socket's mode already keeps other users
 * out); a **reset is not offered here**: it goes through the robot API, which checks the token and
 * the web rules (docs/security.md). Bounded: 8 connections at once, a line of 1 KiB, 2 s per
 * connection.
 *
 * Prepare side: it allocates per request, and is idle otherwise (nothing per cycle).
 */
import { chmodSync, lstatSync, unlinkSync } from "node:fs";
import { connect, createServer, type Socket } from "node:net";
import { BodylinkError, type ErrorCode } from "../errors.js";
import type { EstopRequest, EstopState, StopCategory } from "../runtime/estop.js";

/** The socket's file name beside the runtime record `<name>.json`. */
export const ESTOP_SOCKET_SUFFIX = ".estop";
const MAX_LINE_BYTES = 1024;
const MAX_CLIENTS = 8;
const CLIENT_TIMEOUT_MS = 2000;
/** sockaddr_un's path: 108 bytes on Linux, with its terminating NUL. */
export const MAX_SOCKET_PATH_BYTES = 107;

/** What the socket stops: a body's robot (in its core's thread, or an in-thread robot on this one). */
export interface EstopSocketTarget {
  estop(req: EstopRequest): EstopState | Promise<EstopState>;
  estopState(): EstopState;
}

/** The latch as the robot API answers it (POST /v1/estop, snake_case). */
export interface EstopSocketLatch {
  readonly latched: boolean;
  readonly reason: string | null;
  readonly source: string | null;
  readonly since_ms: number | null;
  readonly category: StopCategory | null;
  readonly phase: EstopState["phase"];
}

export type EstopSocketReply = { ok: true; stopped?: true; estop: EstopSocketLatch } | { ok: false; code: ErrorCode; message: string };

export interface EstopSocketRequest {
  op: "estop" | "status";
  category?: StopCategory;
  reason?: string;
  source?: string;
}

export interface EstopSocket {
  readonly path: string;
  close(): Promise<void>;
}

const latchOf = (e: EstopState): EstopSocketLatch => ({ latched: e.latched, reason: e.reason, source: e.source, since_ms: e.sinceEpochMs, category: e.category, phase: e.phase });

function refusal(code: ErrorCode, ...args: Array<string | number>): EstopSocketReply {
  const e = new BodylinkError(code, ...args);
  return { ok: false, code, message: e.message };
}

/** One request line → its answer. Never throws. */
async function answer(line: string, target: EstopSocketTarget): Promise<EstopSocketReply> {
  let m: { op?: unknown; category?: unknown; reason?: unknown; source?: unknown };
  try {
    m = JSON.parse(line) as typeof m;
  } catch {
    return refusal("BL_ERR_CMD_INVALID", 'the local e-stop socket takes one JSON line: {"op":"estop"} or {"op":"status"}');
  }
  if (m?.op === "status") return { ok: true, estop: latchOf(target.estopState()) };
  if (m?.op === "reset") return refusal("BL_ERR_ESTOP_SOCKET_RESET");
  if (m?.op !== "estop") return refusal("BL_ERR_CMD_INVALID", `op ${JSON.stringify(String(m?.op)).slice(0, 40)}: the local e-stop socket takes "estop" or "status"`);
  if (m.category !== undefined && m.category !== 0 && m.category !== 1) return refusal("BL_ERR_CMD_INVALID", "category must be 0 or 1");
  const source = typeof m.source === "string" && m.source ? m.source.replace(/[^A-Za-z0-9_-]/g, "_").slice(0, 64) : "local";
  const reason = typeof m.reason === "string" && m.reason.trim() ? m.reason : "emergency stop (local socket)";
  try {
    const e = await target.estop({ source, reason, ...(m.category === undefined ? {} : { category: m.category as StopCategory }) });
    return { ok: true, stopped: true, estop: latchOf(e) };
  } catch (e) {
    return { ok: false, code: e instanceof BodylinkError ? (e.code as ErrorCode) : "BL_ERR_API_INTERNAL", message: (e as Error).message };
  }
}

/**
 * Serve the e-stop socket at `path` (a file of ours left there by a runtime of the same name that
 * died is replaced; anything else at the path is refused). Resolves once it accepts.
 */
export async function serveEstopSocket(path: string, target: EstopSocketTarget): Promise<EstopSocket> {
  if (Buffer.byteLength(path) > MAX_SOCKET_PATH_BYTES)
    throw new BodylinkError("BL_ERR_RUNTIME_DIR", path, `is too long for a socket (${MAX_SOCKET_PATH_BYTES} bytes at most); set BODYLINK_RUNTIME_DIR to a shorter directory`);
  clearStale(path);
  const clients = new Set<Socket>();
  const server = createServer((socket) => {
    if (clients.size >= MAX_CLIENTS) {
      socket.destroy();
      return;
    }
    clients.add(socket);
    socket.on("close", () => clients.delete(socket));
    socket.on("error", () => socket.destroy());
    socket.setTimeout(CLIENT_TIMEOUT_MS, () => socket.destroy());
    let buf = "";
    let done = false;
    socket.on("data", (d: Buffer) => {
      if (done) return;
      buf += d.toString("utf8");
      const nl = buf.indexOf("\n");
      if (nl < 0 && Buffer.byteLength(buf) <= MAX_LINE_BYTES) return;
      done = true;
      const reply = nl < 0 || nl > MAX_LINE_BYTES ? Promise.resolve(refusal("BL_ERR_CMD_INVALID", `a request line has at most ${MAX_LINE_BYTES} bytes`)) : answer(buf.slice(0, nl), target);
      void reply.then((r) => socket.end(`${JSON.stringify(r)}\n`));
    });
  });
  server.maxConnections = 64; // past the 8 served, refused by Node before a listener runs
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(path, () => {
      server.off("error", reject);
      resolve();
    });
  });
  server.on("error", () => {}); // accept errors (EMFILE) are retried by libuv; never a crash
  try {
    chmodSync(path, 0o600); // the directory is 0700 already: nobody else could reach it meanwhile
  } catch (e) {
    server.close();
    throw new BodylinkError("BL_ERR_RUNTIME_DIR", path, `cannot be made 0600: ${(e as Error).message}`);
  }
  return {
    path,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of clients) s.destroy();
        server.close(() => {
          removeSocketFile(path);
          resolve();
        });
      }),
  };
}

/** A socket file at `path` is a dead runtime's (the name is claimed by our record first): remove it. Anything else is refused. */
function clearStale(path: string): void {
  let st: ReturnType<typeof lstatSync>;
  try {
    st = lstatSync(path);
  } catch {
    return; // nothing there
  }
  if (!st.isSocket()) throw new BodylinkError("BL_ERR_RUNTIME_DIR", path, "exists and is not a socket; remove it");
  const me = process.getuid?.();
  if (me !== undefined && st.uid !== me) throw new BodylinkError("BL_ERR_RUNTIME_DIR", path, `is owned by uid ${st.uid}`);
  unlinkSync(path);
}

/** Remove the socket file if it is still one (libuv may have removed it on close). Never throws. */
export function removeSocketFile(path: string): void {
  try {
    if (lstatSync(path).isSocket()) unlinkSync(path);
  } catch {
    // gone already
  }
}

/**
 * Ask the e-stop socket at `path` (the CLI's side). Rejects when nothing answers within
 * `timeoutMs` (no socket, a dead runtime, a core that does not turn): the caller then tries the
 * robot API.
 */
export function requestEstopSocket(path: string, req: EstopSocketRequest, timeoutMs = 1000): Promise<EstopSocketReply> {
  return new Promise((resolve, reject) => {
    const s = connect(path);
    let text = "";
    const timer = setTimeout(() => {
      s.destroy();
      reject(new Error(`no answer within ${timeoutMs} ms`));
    }, timeoutMs);
    s.on("connect", () => s.write(`${JSON.stringify(req)}\n`));
    s.on("data", (d: Buffer) => {
      text += d.toString("utf8");
    });
    s.on("error", (e) => {
      clearTimeout(timer);
      reject(e);
    });
    s.on("end", () => {
      clearTimeout(timer);
      try {
        resolve(JSON.parse(text) as EstopSocketReply);
      } catch {
        reject(new Error(`not an e-stop answer: ${JSON.stringify(text.slice(0, 80))}`));
      }
    });
  });
}
