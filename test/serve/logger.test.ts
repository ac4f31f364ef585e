/**
 * The runtime's one log (src/serve/logger.ts): pino records rendered as JSON or as one human line,
 * a chosen level, a log file, and the cores' own stderr lines as records of the same log.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { coreLineRecord, createLog, prettyLine } from "../../src/serve/logger.js";

const dir = mkdtempSync(join(tmpdir(), "bodylink-log-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function capture(o: Parameters<typeof createLog>[0] = {}): { lines: string[]; log: ReturnType<typeof createLog> } {
  const lines: string[] = [];
  const log = createLog({ ...o, stream: { write: (l) => lines.push(l) } });
  return { lines, log };
}

describe("the runtime's log", () => {
  it("json: one pino line per record (level number, epoch-ms time, pid, hostname, msg, fields)", () => {
    const { lines, log } = capture({ format: "json" });
    log.logger.child({ component: "fleet" }).warn({ event: "link" }, "broker lost");
    expect(lines).toHaveLength(1);
    expect(lines[0]!.endsWith("\n")).toBe(true);
    const o = JSON.parse(lines[0]!) as Record<string, unknown>;
    expect(o).toMatchObject({ level: 40, pid: process.pid, component: "fleet", event: "link", msg: "broker lost" });
    expect(typeof o.time).toBe("number");
    expect(typeof o.hostname).toBe("string");
  });

  it("is JSON when the destination is not a terminal, pretty when it is, unless told", () => {
    expect(capture({ isTTY: false }).log.format).toBe("json");
    expect(capture({ isTTY: true }).log.format).toBe("pretty");
    expect(capture({ isTTY: true, format: "json" }).log.format).toBe("json");
    expect(capture({ isTTY: false, format: "pretty" }).log.format).toBe("pretty");
  });

  it("pretty: local time, level, component, message and fields on one line; no colour off a terminal", () => {
    const { lines, log } = capture({ format: "pretty" });
    log.logger.child({ component: "safety" }).info({ event: "estop_reset", source: "cli", reason: "area clear" }, "emergency stop reset by cli: area clear");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^\d\d:\d\d:\d\d\.\d{3} INFO {2}safety: emergency stop reset by cli: area clear {2}event=estop_reset source=cli reason="area clear"\n$/);
    expect(lines[0]).not.toContain("\x1b");
    const tty = capture({ format: "pretty", isTTY: true });
    tty.log.logger.warn("late");
    expect(tty.lines[0]).toContain("\x1b[33mWARN \x1b[0m");
  });

  it("pretty: control characters in a message or a field cannot drive the terminal or forge a line", () => {
    const line = prettyLine(JSON.stringify({ level: 30, time: 0, msg: "a\nb\u001b[2J", owner: "x\ry" }));
    for (const c of ["\n", "\r", "\u001b"]) expect(line.slice(0, -1).includes(c)).toBe(false);
    expect(line).toContain("a\\u000ab\\u001b[2J");
    expect(prettyLine("not json\u001b")).toBe("not json\\u001b\n");
  });

  it("--log-level: records below it are dropped", () => {
    const { lines, log } = capture({ format: "json", level: "warn" });
    log.logger.info("quiet");
    log.logger.warn("loud");
    expect(lines.map((l) => (JSON.parse(l) as { msg: string }).msg)).toEqual(["loud"]);
  });

  it("--log-file: appended (rotation is the system's), JSON by default; a path that cannot be opened throws at once", () => {
    const file = join(dir, "bodylink.log");
    for (const msg of ["one", "two"]) {
      const log = createLog({ file });
      expect(log.format).toBe("json");
      log.logger.info(msg);
    }
    expect(
      readFileSync(file, "utf8")
        .trim()
        .split("\n")
        .map((l) => (JSON.parse(l) as { msg: string }).msg),
    ).toEqual(["one", "two"]);
    expect(() => createLog({ file: join(dir, "no-such-dir", "x.log") })).toThrow(/ENOENT/);
  });

  it("a core's stderr lines become records: the LoLA server's warnings at warn, its notes at info, a failure at error", () => {
    expect(coreLineRecord("LoLA server: warning: lola-1 dropped: bad bytes")).toEqual({ level: "warn", component: "lola-server", msg: "lola-1 dropped: bad bytes" });
    expect(coreLineRecord("LoLA server: serving LoLA on /tmp/robocup")).toEqual({ level: "info", component: "lola-server", msg: "serving LoLA on /tmp/robocup" });
    expect(coreLineRecord("LoLA upstream: connected to LoLA at /tmp/robocup")).toMatchObject({ level: "info", component: "lola-upstream" });
    expect(coreLineRecord("bodylink: cycle threw (1 so far): Error: x")).toEqual({ level: "error", component: "core", msg: "cycle threw (1 so far): Error: x" });
    expect(coreLineRecord("    at foo (file.ts:1:2)")).toEqual({ level: "info", component: "core", msg: "    at foo (file.ts:1:2)" });
  });
});
