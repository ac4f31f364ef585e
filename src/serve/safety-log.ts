/**
 * Safety events, one line each (docs/security.md), in pino's line format (the format fastify's
 * logger writes: one JSON object per line with level, time, pid, hostname, msg), so one parser
 * reads both: e-stop and reset with their source; lease acquired, released, expired (the lapse of a
 * lease not renewed) and revoked, with the owner; late cycles and link changes (at most one line
 * per kind per second); refused connections (the same).
 *
 * Client-supplied text (a lease owner, an e-stop reason, an Origin) goes through JSON.stringify,
 * which escapes newlines and every control character: no log line can be forged or carry terminal
 * escapes (and `escapeForLog` bounds it).
 *
 * Prepare side only: event listeners and a 1 s timer on the main thread, never in the cycle.
 */
import { hostname } from "node:os";
import type { LeaseInfo } from "../runtime/authority.js";
import type { ControlAuthority } from "../runtime/authority.js";
import type { BodyRuntime } from "../runtime/robot.js";
import { escapeForLog } from "./log.js";

/** pino's levels. */
export const LOG_LEVEL = { info: 30, warn: 40, error: 50 } as const;
export type LogLevelName = keyof typeof LOG_LEVEL;

export type LogSink = (line: string) => void;

const HOST = hostname();

/** One pino-format line. Field values that are strings are escaped and bounded. */
export function formatLogLine(level: LogLevelName, event: string, fields: Record<string, string | number | boolean | null>, msg: string, timeMs = Date.now()): string {
  const safe: Record<string, string | number | boolean | null> = {};
  for (const [k, v] of Object.entries(fields)) safe[k] = typeof v === "string" ? escapeForLog(v) : v;
  return JSON.stringify({ level: LOG_LEVEL[level], time: timeMs, pid: process.pid, hostname: HOST, event, ...safe, msg: escapeForLog(msg, 500) });
}

export interface SafetyLog {
  /** Log one event now. */
  event(level: LogLevelName, event: string, fields: Record<string, string | number | boolean | null>, msg: string): void;
  /** Log a refused connection or request: at most one line per `what` per second, with the count. */
  refused(what: string, detail: string): void;
  /** Stop listening (server close). */
  close(): void;
}

const RATE_MS = 1000;

/** Attach the safety log to a robot's authority and health; lines go to `sink` (default stderr). */
export function attachSafetyLog(robot: BodyRuntime, sink: LogSink = (l) => process.stderr.write(`${l}\n`)): SafetyLog {
  const event: SafetyLog["event"] = (level, name, fields, msg) => sink(formatLogLine(level, name, fields, msg));
  const a: ControlAuthority = robot.authority;
  const who = (h: LeaseInfo) => ({ owner: h.owner, source: h.source });
  const onAcquired = (h: LeaseInfo) => event("info", "lease_acquired", { ...who(h), expires_at_epoch_ms: h.expiresAtEpochMs }, `control acquired by ${h.owner} (${h.source})`);
  const onReleased = (h: LeaseInfo, why: "released" | "expired" | "revoked") =>
    event(why === "released" ? "info" : "warn", `lease_${why}`, who(h), `control ${why === "expired" ? "expired (not renewed in time)" : why}: ${h.owner} (${h.source})`);
  const onEstop = (e: ReturnType<BodyRuntime["estopState"]>) =>
    event("warn", "estop", { source: e.source, reason: e.reason, category: e.category, phase: e.phase }, `emergency stop latched by ${e.source ?? "?"}: ${e.reason ?? ""}`);
  const onReset = (_e: unknown, req: { source: string; reason: string }) => event("warn", "estop_reset", { source: req.source, reason: req.reason }, `emergency stop reset by ${req.source}: ${req.reason}`);
  a.on("acquired", onAcquired);
  a.on("released", onReleased);
  a.on("estop", onEstop);
  a.on("reset", onReset);

  // Late cycles and link changes, read from health once a second (rate-limited by construction).
  let closed = false;
  let late = -1;
  let link: string | null = null;
  void Promise.resolve(robot.health()).then(
    (h) => {
      if (late < 0) late = h.cycle.lateCycles;
      link ??= h.link;
    },
    () => {},
  );
  const timer = setInterval(async () => {
    let h: Awaited<ReturnType<BodyRuntime["health"]>>;
    try {
      h = await robot.health();
    } catch {
      return; // a core that does not answer: the host's watchdog reports it (health link "lost")
    }
    if (closed) return; // answered after close (the body stopped meanwhile): not this log's to say
    if (late < 0 || link === null) {
      late = h.cycle.lateCycles;
      link = h.link;
      return;
    }
    if (h.cycle.lateCycles > late) event("warn", "late_cycles", { count: h.cycle.lateCycles - late, total: h.cycle.lateCycles }, `${h.cycle.lateCycles - late} cycle(s) ran late in the last second`);
    if (h.link !== link) event(h.link === "ok" ? "info" : "warn", "link", { from: link, to: h.link, reason: h.safetyReason }, `body link ${link} -> ${h.link}${h.safetyReason ? `: ${h.safetyReason}` : ""}`);
    late = h.cycle.lateCycles;
    link = h.link;
  }, RATE_MS);
  timer.unref();

  // Refusals: the first of a kind at once, then one summary line per second while they go on.
  const pending = new Map<string, { count: number; last: string; since: number }>();
  const refused = (what: string, detail: string) => {
    const now = Date.now();
    const p = pending.get(what);
    if (!p) {
      pending.set(what, { count: 0, last: detail, since: now });
      event("warn", "refused", { what, detail }, `refused ${what}: ${detail}`);
      return;
    }
    p.count++;
    p.last = detail;
    if (now - p.since >= RATE_MS) {
      event("warn", "refused", { what, detail, count: p.count }, `refused ${p.count} more ${what} in the last ${((now - p.since) / 1000).toFixed(1)} s (last: ${detail})`);
      pending.set(what, { count: 0, last: detail, since: now });
    }
  };

  return {
    event,
    refused,
    close() {
      closed = true;
      clearInterval(timer);
      a.off("acquired", onAcquired);
      a.off("released", onReleased);
      a.off("estop", onEstop);
      a.off("reset", onReset);
    },
  };
}
