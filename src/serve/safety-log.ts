/**
 * Safety events, one line each (docs/security.md), through the runtime's one pino logger
 * (serve/logger.ts: JSON lines with level, time, pid, hostname, msg, or their pretty rendering):
 * e-stop and reset with their source (the latch a normal shutdown sets is an `info` line,
 * `shutdown`: stopping is the intended end, not an alarm); lease acquired, released, expired (the lapse of a
 * lease not renewed) and revoked, with the owner; late cycles and link changes (at most one line
 * per kind per second); refused connections (the same).
 *
 * Client-supplied text (a lease owner, an e-stop reason, an Origin) goes through JSON.stringify,
 * which escapes newlines and every control character: no log line can be forged or carry terminal
 * escapes (and `escapeForLog` bounds it).
 *
 * Prepare side only: event listeners and a 1 s timer on the main thread, never in the cycle.
 */
import type { LeaseInfo } from "../runtime/authority.js";
import type { ControlAuthority } from "../runtime/authority.js";
import type { BodyRuntime } from "../runtime/robot.js";
import { escapeForLog } from "./log.js";
import { createLog, type Logger } from "./logger.js";

/** The levels safety events use (pino's numbers 30, 40, 50). */
export type LogLevelName = "info" | "warn" | "error";

type Fields = Record<string, string | number | boolean | null>;

/** The fields of one event with every string escaped and bounded (client text: serve/log.ts). */
export function safeFields(event: string, fields: Fields): Fields {
  const safe: Fields = { event };
  for (const [k, v] of Object.entries(fields)) safe[k] = typeof v === "string" ? escapeForLog(v) : v;
  return safe;
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

/** Attach the safety log to a robot's authority and health; lines go to `log` (default: a JSON log on stderr). */
export function attachSafetyLog(robot: BodyRuntime, log: Logger = createLog({ format: "json" }).logger): SafetyLog {
  const event: SafetyLog["event"] = (level, name, fields, msg) => log[level](safeFields(name, fields), escapeForLog(msg, 500));
  const a: ControlAuthority = robot.authority;
  const who = (h: LeaseInfo) => ({ owner: h.owner, source: h.source });
  const onAcquired = (h: LeaseInfo) => event("info", "lease_acquired", { ...who(h), expires_at_epoch_ms: h.expiresAtEpochMs }, `control acquired by ${h.owner} (${h.source})`);
  // Once the shutdown latch is set, the leases it revokes are part of the intended end too.
  let shuttingDown = false;
  const onReleased = (h: LeaseInfo, why: "released" | "expired" | "revoked") =>
    event(why === "released" || shuttingDown ? "info" : "warn", `lease_${why}`, who(h), `control ${why === "expired" ? "expired (not renewed in time)" : why}: ${h.owner} (${h.source})`);
  const onEstop = (e: ReturnType<BodyRuntime["estopState"]>) => {
    if (e.source === "shutdown") {
      shuttingDown = true;
      event(
        "info",
        "shutdown",
        { reason: e.reason, category: e.category },
        `stopping (${e.reason ?? "shutdown"}): the body is taken to its safe state and held there (e-stop latched until the process ends)`,
      );
    } else event("warn", "estop", { source: e.source, reason: e.reason, category: e.category, phase: e.phase }, `emergency stop latched by ${e.source ?? "?"}: ${e.reason ?? ""}`);
  };
  const onReset = (_e: unknown, req: { source: string; reason: string }) =>
    event("warn", "estop_reset", { source: req.source, reason: req.reason }, `emergency stop reset by ${req.source}: ${req.reason}`);
  a.on("acquired", onAcquired);
  a.on("released", onReleased);
  a.on("estop", onEstop);
  a.on("reset", onReset);

  // Late cycles and link changes, looked at once a second (rate-limited by construction): from
  // health, or, where the runtime has them (a threaded core's host), from its safety counters,
  // with health asked only when the link changed: nothing crosses to the core in steady state.
  let closed = false;
  let late = -1;
  let link: string | null = null;
  let linkChanges = -1;
  const counters = robot.safetyCounters ? () => robot.safetyCounters!() : null;
  void Promise.resolve(robot.health()).then(
    (h) => {
      if (late < 0) late = h.cycle.lateCycles;
      link ??= h.link;
    },
    () => {},
  );
  const lateLine = (total: number) => {
    if (total > late) event("warn", "late_cycles", { count: total - late, total }, `${total - late} cycle(s) ran late in the last second`);
    late = total;
  };
  const timer = setInterval(async () => {
    const c = counters?.() ?? null;
    if (c && late >= 0 && link !== null) {
      lateLine(c.lateCycles);
      if (c.linkChanges === linkChanges) return;
    }
    let h: Awaited<ReturnType<BodyRuntime["health"]>>;
    try {
      h = await robot.health();
    } catch {
      return; // a core that does not answer: the host's watchdog reports it (health link "lost")
    }
    if (closed) return; // answered after close (the body stopped meanwhile): not this log's to say
    if (c) linkChanges = c.linkChanges;
    if (late < 0 || link === null) {
      late = h.cycle.lateCycles;
      link = h.link;
      return;
    }
    lateLine(Math.max(late, h.cycle.lateCycles));
    if (h.link !== link)
      event(h.link === "ok" ? "info" : "warn", "link", { from: link, to: h.link, reason: h.safetyReason }, `body link ${link} -> ${h.link}${h.safetyReason ? `: ${h.safetyReason}` : ""}`);
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
