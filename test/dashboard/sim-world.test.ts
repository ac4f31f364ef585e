/**
 * The dashboard's 3D view of a physics body (issue 21 item 5), in Debian's chromium via
 * playwright-core, against the robot API on a MuJoCo NAO with a real clock: the view draws the
 * robot at its world pose over the ground with a disc per floor contact (`data-world`,
 * `data-contacts`), the simulation bar beside it shows simulated time and the real-time factor,
 * and its reset button puts the robot into the chosen pose under the page's lease: refused with a
 * reason without control, "lying" shows the fall (badge and `data-fallen`, as the stream says),
 * "crouch" ends it. The physics P7 and TNY-360 show their world and reset from the same button,
 * the select offering each body's own poses. Skips, saying why in one line, only when Debian's
 * chromium is missing.
 */
import { mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { physicsP7Model } from "../../src/drivers/p7/sim.js";
import { tny360PhysicsModel } from "../../src/drivers/tny360/driver.js";
import { NaoRobot } from "../../src/runtime/nao-robot.js";
import { P7Robot } from "../../src/runtime/p7-robot.js";
import { Tny360Robot } from "../../src/runtime/tny360-robot.js";
import { MujocoNaoModel, PHYSICS_START_POSE } from "../../src/sim/nao/physics/mujoco-nao.js";
import { CHROMIUM_SKIP, HAVE_CHROMIUM, suiteBrowser } from "./chromium.js";
import { onDashboard } from "./dashboard-page.js";

/** The page's screenshots, to look at after a run: one directory, overwritten by the next run (not one more per run). */
const SHOTS = join(tmpdir(), "bodylink-test-screenshots");
mkdirSync(SHOTS, { recursive: true });

const TITLE = CHROMIUM_SKIP ?? "dashboard: the physics NAO's world and the reset button (chromium)";

describe.skipIf(!HAVE_CHROMIUM)(TITLE, { timeout: 120_000 }, () => {
  const browser = suiteBrowser();

  it("shows the world pose, ground and contacts; resets to lying (a fall) and back to a crouch under the page's lease", async () => {
    const robot = await NaoRobot.create({ seed: 5, youngGcEveryMs: 100, safetyLateBoundMs: 2000, simModel: await MujocoNaoModel.create(PHYSICS_START_POSE) });
    await onDashboard(browser(), robot, async ({ page, sdk }) => {
      const view = () => page.$eval("#view3d", (e) => ({ ...(e as HTMLElement).dataset }));
      await page.waitForFunction(() => (document.querySelector("#view3d") as HTMLElement).dataset.world === "true");
      await page.waitForFunction(() => Number((document.querySelector("#view3d") as HTMLElement).dataset.contacts) >= 2); // crouched on both feet
      expect((await view()).fallen).toBe("false");
      await page.waitForSelector("#sim-bar", { state: "visible" }); // shown with the world, on the page's own schedule
      expect(await page.isVisible("#sim-fallen")).toBe(false);
      await page.waitForFunction(() => /^simulated \d+\.\d s, \d+\.\d\d× real time$/.test(document.querySelector("#sim-text")?.textContent ?? ""));
      await page.waitForFunction(() => Number((document.querySelector("#view3d") as HTMLElement).dataset.frames) > 1);
      await page.screenshot({ path: join(SHOTS, "crouched.png") });

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
      await page.screenshot({ path: join(SHOTS, "lying.png") });

      await page.selectOption("#sim-pose", "crouch");
      await page.click("#sim-reset");
      await page.waitForFunction(() => (document.querySelector("#view3d") as HTMLElement).dataset.fallen === "false", undefined, { timeout: 10_000 });
      await page.waitForSelector("#sim-fallen", { state: "hidden" });
      await page.click("#release-control");
      await page.waitForFunction(() => /^Control released/.test(document.querySelector("#control-status")?.textContent ?? ""));
    });
  });
  /** The bar beside a physics body's view offers its own poses; this page takes control; the returned reset goes through the button and waits for its event line. */
  async function simBar(page: Page, poses: readonly string[]): Promise<(pose: string) => Promise<void>> {
    await page.waitForFunction(() => (document.querySelector("#view3d") as HTMLElement | null)?.dataset.world === "true");
    await page.waitForSelector("#sim-bar", { state: "visible" });
    expect(await page.$$eval("#sim-pose option", (os) => os.map((o) => (o as HTMLOptionElement).value))).toEqual(poses);
    await page.click("#take-control");
    await page.waitForFunction(() => /^In control/.test(document.querySelector("#control-status")?.textContent ?? ""));
    return async (pose) => {
      await page.selectOption("#sim-pose", pose);
      await page.click("#sim-reset");
      await page.waitForFunction((p) => Array.from(document.querySelectorAll("#events li")).some((e) => e.textContent?.includes(`simulation reset to ${p}`)), pose, { timeout: 10_000 });
    };
  }

  it("the physics P7: its world, and the reset puts the arm back home", async () => {
    const robot = await P7Robot.create({ seed: 5, youngGcEveryMs: 100, simModel: await physicsP7Model() });
    await onDashboard(browser(), robot, async ({ page }) => {
      const reset = await simBar(page, ["home"]);
      // Bend the arm through the simulator (the page holds the lease), then reset it from the page.
      robot.sim.moveTo([0.5, -0.5, 0, -0.8, 0, 0, 0], [3, 3, 3, 3, 3, 3, 3]);
      await expect.poll(() => Math.abs(robot.state.angles[3]!), { timeout: 10_000 }).toBeGreaterThan(0.5);
      await expect.poll(() => robot.sim.timeS, { timeout: 10_000 }).toBeGreaterThan(2);
      const before = robot.sim.timeS;
      await reset("home");
      // The reset answered time 0 (the page's event line), and the bar's time went back (whatever the load).
      expect(await page.$$eval("#events li", (lis) => lis.map((l) => l.textContent ?? "").join("\n"))).toMatch(/simulation reset to home \(time 0\.0 s\)/);
      await page.waitForFunction((limit) => Number(/^simulated (\d+\.\d) s/.exec(document.querySelector("#sim-text")?.textContent ?? "")?.[1] ?? Number.NaN) < limit, before - 1);
      for (const q of robot.state.angles) expect(Math.abs(q)).toBeLessThan(1e-3);
    });
  });

  it("the physics TNY-360: its world drawn at its pose with the paws' contacts; stand and lying from the button", async () => {
    const robot = await Tny360Robot.create({ seed: 5, youngGcEveryMs: 100, simModel: await tny360PhysicsModel() });
    await onDashboard(browser(), robot, async ({ page }) => {
      const reset = await simBar(page, ["stand", "rest", "lying"]);
      await reset("stand");
      await page.waitForFunction(() => Number((document.querySelector("#view3d") as HTMLElement).dataset.contacts) === 4, undefined, { timeout: 10_000 }); // four paws
      expect(robot.state.body.enabledMask).toBe(0x3fff);
      await reset("lying");
      await page.waitForFunction(() => (document.querySelector("#view3d") as HTMLElement).dataset.fallen === "true", undefined, { timeout: 10_000 });
      await page.waitForSelector("#sim-fallen", { state: "visible" });
    });
  });
});
