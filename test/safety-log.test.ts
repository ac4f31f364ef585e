/**
 * Safety events, one line each in pino's format (issue 10, item 7), and client text escaped in
 * them (item 4): a lease owner with a newline and a terminal escape cannot forge a second line.
 */
import { describe, expect, it } from "vitest";
import { SimClock } from "../src/runtime/clock.js";
import { attachSafetyLog, formatLogLine } from "../src/serve/safety-log.js";
import { escapeForLog } from "../src/serve/log.js";
import { simNao } from "./api/helpers.js";

describe("safety log", () => {
  it("logs lease, e-stop and reset as one pino-format line each, with the owner and the source; a newline in the owner is escaped", async () => {
    const robot = await simNao(new SimClock());
    const lines: string[] = [];
    const log = attachSafetyLog(robot, (l) => lines.push(l));
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
    const log = attachSafetyLog(robot, (l) => lines.push(l));
    for (let i = 0; i < 50; i++) log.refused("api request (BL_ERR_WEB_ORIGIN)", `POST /v1/estop from 127.0.0.1 #${i}`);
    log.close();
    expect(lines.length).toBeLessThanOrEqual(2);
    expect(JSON.parse(lines[0]!)).toMatchObject({ event: "refused", what: "api request (BL_ERR_WEB_ORIGIN)" });
  });

  it("escapeForLog keeps printable text and escapes C0, DEL, C1 and the line separators, bounded", () => {
    expect(escapeForLog("plain text, ünïcode ok")).toBe("plain text, ünïcode ok");
    expect(escapeForLog("a\r\nb\u001b[31m\u007f\u0085\u2029")).toBe("a\\u000d\\u000ab\\u001b[31m\\u007f\\u0085\\u2029");
    expect(escapeForLog("x".repeat(500))).toHaveLength(201);
    expect(JSON.parse(formatLogLine("warn", "e", { owner: "a\nb" }, "m"))).toMatchObject({ level: 40, event: "e", owner: "a\\u000ab" });
  });
});
