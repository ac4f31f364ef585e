/**
 * The dashboard's 3D view of a physics body (issue 21 item 5), in Debian's chromium via
 * playwright-core, against the robot API on a MuJoCo NAO with a real clock: the view draws the
 * robot at its world pose over the ground with a disc per floor contact (`data-world`,
 * `data-contacts`), the simulation bar beside it shows simulated time and the real-time factor,
 * and its reset button puts the robot into the chosen pose under the page's lease: refused with a
 * reason without control, "lying" shows the fall (badge and `data-fallen`, as the stream says),
 * "crouch" ends it. Skips, saying why in one line, only when Debian's chromium is missing.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import WebSocket from "ws";
import { connect } from "../../src/client/index.js";
import { NaoRobot } from "../../src/runtime/nao-robot.js";
import { startApiServer } from "../../src/serve/api/build.js";
import { MujocoNaoModel, PHYSICS_START_POSE } from "../../src/sim/nao/physics/mujoco-nao.js";
import { CHROMIUM_SKIP, HAVE_CHROMIUM, suiteBrowser } from "./chromium.js";

const TITLE = CHROMIUM_SKIP ?? "dashboard: the physics NAO's world and the reset button (chromium)";

describe.skipIf(!HAVE_CHROMIUM)(TITLE, { timeout: 120_000 }, () => {
  const browser = suiteBrowser();

  it("shows the world pose, ground and contacts; resets to lying (a fall) and back to a crouch under the page's lease", async () => {
    const robot = await NaoRobot.create({ seed: 5, youngGcEveryMs: 100, safetyLateBoundMs: 2000, simModel: await MujocoNaoModel.create(PHYSICS_START_POSE) });
    await robot.start();
    const api = await startApiServer(robot, { port: 0 });
    const sdk = await connect(api.url, { WebSocket: WebSocket as never, owner: "observer" });
    const page = await browser().newPage({ viewport: { width: 1280, height: 720 } });
    const problems: string[] = [];
    page.on("console", (m) => {
      if (m.type() === "error") problems.push(`console: ${m.text()}`);
    });
    page.on("pageerror", (e) => problems.push(`pageerror: ${e.message}`));
    try {
      await page.goto(`${api.url}/`);
      await page.waitForFunction(() => document.querySelector("#link")?.textContent === "ok");
      const view = () => page.$eval("#view3d", (e) => ({ ...(e as HTMLElement).dataset }));
      await page.waitForFunction(() => (document.querySelector("#view3d") as HTMLElement).dataset.world === "true");
      await page.waitForFunction(() => Number((document.querySelector("#view3d") as HTMLElement).dataset.contacts) >= 2); // crouched on both feet
      expect((await view()).fallen).toBe("false");
      expect(await page.isVisible("#sim-bar")).toBe(true);
      expect(await page.isVisible("#sim-fallen")).toBe(false);
      await page.waitForFunction(() => /^simulated \d+\.\d s, \d+\.\d\d× real time$/.test(document.querySelector("#sim-text")?.textContent ?? ""));
      await page.waitForFunction(() => Number((document.querySelector("#view3d") as HTMLElement).dataset.frames) > 1);
      await page.screenshot({ path: join(mkdtempSync(join(tmpdir(), "bl-simview-")), "crouched.png") });

      // Without control the reset is refused, saying why; nothing moved.
      await page.selectOption("#sim-pose", "lying");
      await page.click("#sim-reset");
      await page.waitForFunction(() => /Take control first/.test(document.querySelector("#status")?.textContent ?? ""));
      expect((await view()).fallen).toBe("false");

      await page.click("#take-control");
      await page.waitForFunction(() => /^In control/.test(document.querySelector("#control-status")?.textContent ?? ""));
      await page.click("#sim-reset");
      await page.waitForFunction(() => (document.querySelector("#view3d") as HTMLElement).dataset.fallen === "true", undefined, { timeout: 10_000 });
      await page.waitForSelector("#sim-fallen", { state: "visible" }); // the bar's text follows at 10 Hz
      const s = await sdk.fetchState();
      expect(s.body === "nao" && s.sim?.fallen).toBe(true);
      const lying = await view();
      expect(Number(lying.contacts)).toBeGreaterThan(0); // on its back: torso and head on the floor
      await page.screenshot({ path: join(mkdtempSync(join(tmpdir(), "bl-simview-")), "lying.png") });

      await page.selectOption("#sim-pose", "crouch");
      await page.click("#sim-reset");
      await page.waitForFunction(() => (document.querySelector("#view3d") as HTMLElement).dataset.fallen === "false", undefined, { timeout: 10_000 });
      await page.waitForSelector("#sim-fallen", { state: "hidden" });
      await page.click("#release-control");
      await page.waitForFunction(() => /^Control released/.test(document.querySelector("#control-status")?.textContent ?? ""));
      expect(problems).toEqual([]);
    } finally {
      await page.close();
      await sdk.close();
      await api.close();
      await robot.stop();
    }
  });
});
