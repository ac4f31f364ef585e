/**
 * Bounded connections for an HTTP server, with a reserve of file descriptors (docs/security.md,
 * "Descriptors"). ~21,000 idle connections once took every descriptor of the process: new REST
 * requests, the REST e-stop and new LoLA clients (served by the same process) all failed.
 *
 * - At most `maxConnections` sockets at once; by default 1024, and never more than the process's
 *   descriptor limit less a reserve (RLIMIT_NOFILE from /proc/self/limits; the reserve is an
 *   eighth of it, at least 128), so the LoLA socket, the local e-stop socket, recordings and the
 *   other servers always find a descriptor.
 * - At the limit, a new connection is kept and the **stalest idle** one is closed: a socket with
 *   no request in flight (one that never sent a byte, or a keep-alive socket between requests),
 *   the one idle longest. Only when every socket is busy is the newcomer closed. So idle sockets
 *   cannot lock a client out: a request that arrives is served, whoever holds the other sockets.
 *   WebSocket upgrades count as busy (the stream bounds them itself: --max-subscribers, pings).
 * - Node's own timeouts close what lingers (set by the caller: headersTimeout, requestTimeout,
 *   keepAliveTimeout).
 *
 * O(1) per connection and per request: idle sockets sit in one insertion-ordered Set, the stalest
 * first. Prepare side (main thread, allocates per connection).
 */
import { readFileSync } from "node:fs";
import type { Server } from "node:http";
import type { Socket } from "node:net";

export const DEFAULT_MAX_CONNECTIONS = 1024;

/** The process's soft limit on open descriptors (RLIMIT_NOFILE), or null where /proc does not say. */
export function descriptorLimit(): number | null {
  try {
    const m = /^Max open files\s+(\d+|unlimited)/m.exec(readFileSync("/proc/self/limits", "utf8"));
    if (!m) return null;
    return m[1] === "unlimited" ? null : Number(m[1]);
  } catch {
    return null;
  }
}

/** Descriptors kept out of the HTTP servers' reach for everything else: an eighth of the limit, at least 128. */
export function descriptorReserve(limit: number): number {
  return Math.max(128, Math.floor(limit / 8));
}

/** The connection bound actually used: `asked` (default 1024), at most the descriptor limit less its reserve (at least 16). */
export function effectiveMaxConnections(asked: number = DEFAULT_MAX_CONNECTIONS, limit: number | null = descriptorLimit()): number {
  if (limit === null) return asked;
  return Math.max(16, Math.min(asked, limit - descriptorReserve(limit)));
}

export interface ConnectionLimitStats {
  /** The bound in force. */
  readonly max: number;
  readonly open: number;
  /** Idle sockets closed to make room for a new connection. */
  readonly idleClosed: number;
  /** New connections closed because every socket was busy. */
  readonly refused: number;
}

export interface ConnectionLimit {
  stats(): ConnectionLimitStats;
}

/**
 * Bound `server`'s connections at `max` (see the module comment). Call before it listens, once its
 * upgrade listeners (if any) are registered: a listener added here to a server without one would
 * make Node hand it upgrades that nobody answers.
 */
export function limitConnections(server: Server, max: number): ConnectionLimit {
  /** Every open socket; the idle ones also in `idle`, stalest first. */
  let open = 0;
  const idle = new Set<Socket>();
  let idleClosed = 0;
  let refused = 0;
  server.on("connection", (socket: Socket) => {
    open++;
    socket.once("close", () => {
      open--;
      idle.delete(socket);
    });
    if (open > max) {
      const stalest = idle.values().next();
      if (stalest.done) {
        refused++;
        socket.destroy(); // every socket is in a request: the newcomer waits for none of them
        return;
      }
      idle.delete(stalest.value);
      idleClosed++;
      stalest.value.destroy();
    }
    idle.add(socket); // no request yet
  });
  server.on("request", (req, res) => {
    const socket = req.socket;
    idle.delete(socket);
    res.once("close", () => {
      if (!socket.destroyed) idle.add(socket); // keep-alive: idle again, now the freshest
    });
  });
  // An upgraded socket leaves HTTP: the stream bounds it (subscriber cap, pings).
  if (server.listenerCount("upgrade") > 0) server.prependListener("upgrade", (req) => idle.delete(req.socket));
  return { stats: () => ({ max, open, idleClosed, refused }) };
}
