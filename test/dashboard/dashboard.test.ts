/**
 * The dashboard (GET /) in a real browser: Debian's chromium driven by playwright-core, against
 * the robot API on simulated bodies with a real clock (the page's numbers must move by themselves).
 * Skips, saying why, only when /usr/bin/chromium is missing (.ci/run installs it).
 */
import { existsSync } from "node:fs";
import { type Browser, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NaoRobot } from "../../src/runtime/nao-robot.js";
import { P7Robot } from "../../src/runtime/p7-robot.js";
import { type RunningApiServer, startApiServer } from "../../src/serve/api/build.js";

const CHROMIUM = "/usr/bin/chromium";
const HAVE_CHROMIUM = existsSync(CHROMIUM);
const TITLE = HAVE_CHROMIUM
  ? "dashboard in chromium (real clock, simulated bodies)"
  : `dashboard in chromium: SKIPPED because ${CHROMIUM} does not exist (apt-get install chromium; .ci/run does)`;
const SCREENSHOT = "/tmp/bodylink-dashboard-nao.png";

interface Health {
  safety_reason: string | null;
  control: unknown;
  errors: Record<string, number>;
}

async function health(api: RunningApiServer): Promise<Health> {
  return (await (await fetch(`${api.url}/v1/health`)).json()) as Health;
}

/** Open the page, recording every request and every console error or page error. */
async function open(browser: Browser, api: RunningApiServer): Promise<{ page: Page; requests: string[]; problems: string[] }> {
  const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
  const requests: string[] = [];
  const problems: string[] = [];
  page.on("request", (r) => requests.push(r.url()));
  page.on("console", (m) => {
    if (m.type() === "error") problems.push(`console: ${m.text()}`);
  });
  page.on("pageerror", (e) => problems.push(`pageerror: ${e.message}`));
  await page.goto(`${api.url}/`);
  return { page, requests, problems };
}

/** Start `robot` and its API, open the dashboard, run `f`, then close the page, server and robot. */
async function onDashboard<R extends NaoRobot | P7Robot>(
  browser: Browser,
  robot: R,
  f: (ctx: { robot: R; api: RunningApiServer; page: Page; requests: string[]; problems: string[] }) => Promise<void>,
): Promise<void> {
  await robot.start();
  const api = await startApiServer(robot, { port: 0 });
  try {
    const opened = await open(browser, api);
    await f({ robot, api, ...opened });
    // Rendered without going anywhere but this server, and without console errors.
    expect(opened.requests.filter((u) => !u.startsWith(`${api.url}/`))).toEqual([]);
    expect(opened.problems).toEqual([]);
    await opened.page.close();
  } finally {
    await api.close();
    await robot.stop();
  }
}

const positions = (page: Page) => page.$$eval("#joints tbody tr td:nth-child(2)", (tds) => tds.map((td) => td.textContent ?? ""));

describe.skipIf(!HAVE_CHROMIUM)(TITLE, () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
    });
  });
  afterAll(async () => {
    await browser?.close();
  });

  it("NAO: 26 joints with moving numbers, link ok, NAO sensors, health; Emergency stop reaches the runtime", async () => {
    await onDashboard(browser, await NaoRobot.create({ seed: 11, youngGcEveryMs: 100 }), async ({ robot, api, page }) => {
      await page.waitForFunction(() => document.querySelectorAll("#joints tbody tr").length === 26);
      await page.waitForFunction(() => document.querySelector("#link")?.textContent === "ok");
      await page.waitForFunction(() => /^-?\d+\.\d{3}$/.test(document.querySelector("#joints tbody tr td:nth-child(2)")?.textContent ?? ""));
      await page.waitForFunction(() => /Jitter p99/.test(document.querySelector("#health")?.textContent ?? ""));
      // A real-clock runtime collects between cycles: the panel shows how many and how long.
      await page.waitForFunction(() => /GC between cycles\d+, p99 [\d.]+ ms/.test(document.querySelector("#health")?.textContent ?? ""));
      expect(await page.textContent("#control")).toBe("nobody");
      const first = await positions(page);
      expect(first).toHaveLength(26);
      expect(first.every((t) => /^-?\d+\.\d{3}$/.test(t))).toBe(true);
      // Nobody holds control, so the NAO holds still; take control and stand up so the joints move.
      const got = robot.authority.acquire("dashboard-test", "api", 10_000);
      if (!got.ok) throw new Error("could not take control");
      expect(robot.smoothEnable(got.lease.id).ok).toBe(true);
      await page.waitForFunction(() => /^dashboard-test \(api\)/.test(document.querySelector("#control")?.textContent ?? ""), undefined, { timeout: 3000 });
      await page.waitForFunction(
        (before) => Array.from(document.querySelectorAll("#joints tbody tr td:nth-child(2)")).some((td, i) => td.textContent !== before[i]),
        first,
        { timeout: 3000 },
      );
      expect(await page.$$eval('#joints [role="meter"][aria-valuenow]', (m) => m.length)).toBe(26);
      expect(await page.textContent("#body-name")).toBe("NAO v6");
      await page.waitForFunction(() => /%/.test(document.querySelector("#battery")?.textContent ?? ""));
      expect(await page.textContent("#sonar")).toMatch(/\d\.\d\d m \/ \d\.\d\d m/);
      expect(await page.$$eval("#feet tbody td", (tds) => tds.filter((td) => /\d\.\d\d/.test(td.textContent ?? "")).length)).toBe(10);
      expect(await page.$$eval("#touch li", (li) => li.length)).toBe(8);
      expect(await page.textContent("#acc-z")).toMatch(/^-?\d+\.\d\d$/);
      await page.screenshot({ path: SCREENSHOT, fullPage: true });

      expect((await health(api)).safety_reason ?? "").not.toMatch(/emergency stop/);
      await page.getByRole("button", { name: "Emergency stop" }).click();
      await expect.poll(async () => (await health(api)).safety_reason, { timeout: 3000 }).toMatch(/emergency stop: dashboard/);
      expect(robot.authority.holder()).toBeNull(); // the stop revoked the test's lease
      await page.waitForFunction(() => /emergency stop: dashboard/.test(document.querySelector("#safety")?.textContent ?? ""), undefined, { timeout: 3000 });
    });
  });

  it("P7: 7 joints against the arm's limits, link ok, no NAO panel; Emergency stop is counted", async () => {
    await onDashboard(browser, await P7Robot.create({ seed: 3 }), async ({ api, page }) => {
      await page.waitForFunction(() => document.querySelectorAll("#joints tbody tr").length === 7);
      await page.waitForFunction(() => document.querySelector("#link")?.textContent === "ok");
      await page.waitForFunction(() => Array.from(document.querySelectorAll("#joints tbody tr td:nth-child(2)")).every((td) => /^-?\d+\.\d{3}$/.test(td.textContent ?? "")));
      expect(await page.textContent("#body-name")).toBe("AIRBOT P7");
      expect(await page.textContent("#effort-h")).toBe("Effort (N·m)");
      expect(await page.isHidden("#nao")).toBe(true);
      const before = (await health(api)).errors.emergencyStops ?? 0;
      await page.getByRole("button", { name: "Emergency stop" }).click();
      await expect.poll(async () => (await health(api)).errors.emergencyStops, { timeout: 3000 }).toBe(before + 1);
    });
  });
});
