/**
 * Safety events, one line each in pino's format (issue 10, item 7), and client text escaped in
 * them (item 4): a lease owner with a newline and a terminal escape cannot forge a second line.
 */
import { describe, expect, it, vi } from "vitest";
import { SimClock } from "../src/runtime/clock.js";
import { attachSafetyLog, safeFields } from "../src/serve/safety-log.js";
import { createLog } from "../src/serve/logger.js";
import { escapeForLog } from "../src/serve/log.js";
import type { BodyRuntime, RobotHealth, SafetyCounters } from "../src/runtime/robot.js";
import { simNao } from "./api/helpers.js";

/** A JSON log into `lines` (one line per record, newline stripped). */
const into = (lines: string[]) => createLog({ format: "json", stream: { write: (l) => lines.push(l.replace(/\n$/, "")) } }).logger;

describe("safety log", () => {
  it("logs lease, e-stop and reset as one pino-format line each, with the owner and the source; a newline in the owner is escaped", async () => {
    const robot = await simNao(new SimClock());
    const lines: string[] = [];
    const log = attachSafetyLog(robot, into(lines));
    const evil = "alice\nbodylink: lease granted to root\u001b[2J\u2028";
    const got = robot.authority.acquire(evil, "api", 1000);
    expect(got.ok).toBe(true);
    robot.estop({ category: 0, source: "dashboard", reason: "hand\nin the way" });
    robot.resetEstop({ source: "cli", reason: "clear" });
    log.close();
    for (const l of lines) {
      for (const c of ["\n", "\r", "\u001b", "\u2028"]) expect(l.includes(c)).toBe(false);
      const o = JSON.parse(l) as Record<string, unknown>;
      expect(o).toMatchObject({ pid: process.pid });
      expect(typeof o.time).toBe("number");
      expect([30, 40, 50]).toContain(o.level);
    }
    const events = lines.map((l) => JSON.parse(l) as { event: string; owner?: string; source?: string; msg: string });
    const acquired = events.find((e) => e.event === "lease_acquired")!;
    expect(acquired.owner).toBe(escapeForLog(evil));
    expect(acquired.owner).toContain("\\u000a");
    expect(events.find((e) => e.event === "lease_revoked")?.source).toBe("api");
    expect(events.find((e) => e.event === "estop")?.source).toBe("dashboard");
    expect(events.find((e) => e.event === "estop_reset")?.source).toBe("cli");
  });

  it("refusals: the first at once, repeats folded (no line per request)", async () => {
    const robot = await simNao(new SimClock());
    const lines: string[] = [];
    const log = attachSafetyLog(robot, into(lines));
    for (let i = 0; i < 50; i++) log.refused("api request (BL_ERR_WEB_ORIGIN)", `POST /v1/estop from 127.0.0.1 #${i}`);
    log.close();
    expect(lines.length).toBeLessThanOrEqual(2);
    expect(JSON.parse(lines[0]!)).toMatchObject({ event: "refused", what: "api request (BL_ERR_WEB_ORIGIN)" });
  });

  it("escapeForLog keeps printable text and escapes C0, DEL, C1 and the line separators, bounded", () => {
    expect(escapeForLog("plain text, ünïcode ok")).toBe("plain text, ünïcode ok");
    expect(escapeForLog("a\r\nb\u001b[31m\u007f\u0085\u2029")).toBe("a\\u000d\\u000ab\\u001b[31m\\u007f\\u0085\\u2029");
    expect(escapeForLog("x".repeat(500))).toHaveLength(201);
    expect(safeFields("e", { owner: "a\nb" })).toEqual({ event: "e", owner: "a\\u000ab" });
  });

  it("with safety counters (a threaded core's host): late cycles from them, health asked only when the link changed", async () => {
    const robot = await simNao(new SimClock());
    let counters: SafetyCounters = { lateCycles: 0, linkChanges: 0 };
    let link = "ok";
    let healthCalls = 0;
    const runtime = {
      authority: robot.authority,
      health: async () => {
        healthCalls++;
        return { cycle: { lateCycles: counters.lateCycles }, link, safetyReason: link === "ok" ? null : "no answer" } as unknown as RobotHealth;
      },
      safetyCounters: () => counters,
    } as unknown as BodyRuntime;
    vi.useFakeTimers();
    const lines: string[] = [];
    try {
      const log = attachSafetyLog(runtime, into(lines));
      await vi.advanceTimersByTimeAsync(1000); // the first look asks once, to know where the counters stand
      const settled = healthCalls;
      expect(settled).toBe(2); // the start's and that look's
      await vi.advanceTimersByTimeAsync(5000);
      expect(healthCalls).toBe(settled); // steady state: nothing asked
      counters = { lateCycles: 3, linkChanges: 0 };
      await vi.advanceTimersByTimeAsync(1000);
      expect(healthCalls).toBe(settled);
      link = "lost";
      counters = { lateCycles: 3, linkChanges: 1 };
      await vi.advanceTimersByTimeAsync(1000);
      expect(healthCalls).toBe(settled + 1);
      await vi.advanceTimersByTimeAsync(2000);
      expect(healthCalls).toBe(settled + 1);
      log.close();
    } finally {
      vi.useRealTimers();
    }
    const events = lines.map((l) => JSON.parse(l) as { event: string; count?: number; from?: string; to?: string });
    expect(events.filter((e) => e.event === "late_cycles")).toEqual([expect.objectContaining({ count: 3 })]);
    expect(events.filter((e) => e.event === "link")).toEqual([expect.objectContaining({ from: "ok", to: "lost" })]);
  });

  it("a normal shutdown is one info line (`shutdown`), not an e-stop warning; the latch itself is set as before", async () => {
    const robot = await simNao(new SimClock());
    const lines: string[] = [];
    const log = attachSafetyLog(robot, into(lines));
    expect(robot.authority.acquire("lola", "lola", 1000).ok).toBe(true);
    robot.estop({ category: 0, source: "shutdown", reason: "shutdown: SIGINT" });
    log.close();
    expect(robot.estopState().latched).toBe(true);
    const records = lines.map((l) => JSON.parse(l) as { level: number; event: string; msg: string });
    expect(records.filter((r) => r.level >= 40)).toEqual([]);
    expect(records.find((r) => r.event === "shutdown")).toMatchObject({ level: 30, msg: expect.stringMatching(/^stopping \(shutdown: SIGINT\)/) });
    expect(records.find((r) => r.event === "lease_revoked")?.level).toBe(30);
    expect(records.some((r) => r.event === "estop")).toBe(false);
  });
});
