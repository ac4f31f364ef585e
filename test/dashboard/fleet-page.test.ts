/**
 * The fleet page (GET /fleet) in Debian's chromium: two runtimes join a real nats-server; the page
 * served by one of them lists both, and its Stop all button latches both robots' e-stops; a reset
 * from the page clears them (signed with the operator key the page's runtime was given,
 * --fleet-operator-dir). The fleet is a generated one (`fleet init`, nats-server with exactly its
 * file). Skips with one line naming the package that is missing.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Browser, chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningRuntime, startRuntime } from "../../src/cli/serve.js";
import { initFleet } from "../../src/fleet/roster.js";
import { hasNats, NATS_SKIP, type NatsServer, startNats } from "../support/nats.js";
import { CHROMIUM, CHROMIUM_ARGS, CHROMIUM_SKIP } from "./chromium.js";
import { SIM_RUNTIME_OPTIONS } from "../support/sim-runtime.js";

const SKIP = CHROMIUM_SKIP ?? (hasNats ? null : NATS_SKIP);

describe.skipIf(SKIP !== null)("the fleet page in chromium", { timeout: 120_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), "bodylink-fleet-page-"));
  let nats: NatsServer;
  let browser: Browser;
  const rts: RunningRuntime[] = [];

  beforeAll(async () => {
    process.env.BODYLINK_RUNTIME_DIR = dir;
    const fleetDir = join(dir, "fleet");
    initFleet(fleetDir, { url: "nats://127.0.0.1:4222", listen: "127.0.0.1:-1", storeDir: join(dir, "js"), robots: ["arm-1", "quad-1"], operators: ["coach"], viewers: [] });
    nats = await startNats({ configFile: join(fleetDir, "nats.conf") });
    for (const [body, name] of [
      ["p7", "arm-1"],
      ["tny360", "quad-1"],
    ] as const) {
      const rt = await startRuntime({
        body,
        name,
        ...SIM_RUNTIME_OPTIONS,
        seed: 1,
        tny: false,
        fleet: nats.url,
        fleetDir: join(fleetDir, name),
        fleetOperatorDir: join(fleetDir, "coach"),
      });
      rts.push(rt);
      await rt.fleet!.joined();
    }
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    for (const r of rts) await r.close();
    await nats?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("lists every robot with link, control and e-stop; Stop all latches both; a reset clears them", async () => {
    const page = await browser.newPage();
    page.on("dialog", (d) => void d.accept("area clear"));
    await page.goto(`${rts[0]!.record.apiUrl}/fleet`);
    await page.waitForFunction(
      () => document.querySelectorAll("#robots tbody tr").length === 2 && Array.from(document.querySelectorAll("#robots tbody tr td:nth-of-type(3)")).every((td) => td.textContent === "ok"),
    );
    const names = await page.$$eval("#robots tbody tr th", (ths) => ths.map((t) => t.textContent));
    expect(names.sort()).toEqual(["arm-1", "quad-1"]);
    expect(await page.$$eval("#robots tbody tr td:nth-of-type(1)", (tds) => tds.map((t) => t.textContent).sort())).toEqual(["p7", "tny360"]);

    await page.click("#stop-all");
    await page.waitForFunction(() => /Stop all: 2 answered in \d+ ms \(2 latched\)/.test(document.getElementById("result")!.textContent ?? ""));
    for (const rt of rts) expect(rt.robot.estopState()).toMatchObject({ latched: true, reason: "fleet page: stop all" });
    await page.waitForFunction(() => Array.from(document.querySelectorAll("#robots tbody tr td:nth-of-type(7)")).every((td) => td.textContent?.startsWith("LATCHED")));
    await page.screenshot({ path: process.env.BODYLINK_FLEET_SCREENSHOT ?? join(dir, "fleet.png") });

    await page.click("#reset-all");
    await page.waitForFunction(() => /Reset: 2 answered/.test(document.getElementById("result")!.textContent ?? ""));
    for (const rt of rts) expect(rt.robot.estopState().latched).toBe(false);
    await page.close();
  });
});

// Without a package: one skipped test that names it.
if (SKIP !== null) describe("the fleet page", () => it.skip(SKIP, () => undefined));
