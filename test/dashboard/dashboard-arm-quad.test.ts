/**
 * The dashboard in a real browser on the P7 and the TNY-360: the same checks as
 * test/dashboard/dashboard.test.ts (which says what they are), in a file of their own so that the
 * browser group keeps both workers busy (test/dashboard/dashboard-page.ts holds the shared part).
 * Skips, saying why in one line, only when Debian's chromium is missing (.ci/run installs it).
 */
import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { P7Robot } from "../../src/runtime/p7-robot.js";
import { Tny360Robot } from "../../src/runtime/tny360-robot.js";
import { CHROMIUM_SKIP, HAVE_CHROMIUM, suiteBrowser } from "./chromium.js";
import { onDashboard, plotsMove, expectRendered, secondClientHolds, estopAndReset, takeControl, release, streamGate, BROWSER_TEST_MS } from "./dashboard-page.js";

const TITLE = CHROMIUM_SKIP ?? "dashboard in chromium, the P7 and the TNY-360 (real clock, simulated bodies)";

describe.skipIf(!HAVE_CHROMIUM)(TITLE, { timeout: BROWSER_TEST_MS }, () => {
  const browser = suiteBrowser();

  it("P7: plots, 3D, the measured pose on the sliders, a joint move from the sliders (and the keyboard) reaches the arm, error ids, holder, e-stop", async () => {
    await onDashboard(browser(), await P7Robot.create({ seed: 3 }), async ({ page, sdk }) => {
      expect(await page.textContent("#body-name")).toBe("AIRBOT P7");
      // Another client moves the arm away from zero and lets go: the page, not in control, shows
      // the measured pose on the sliders' labels too (they read "0.00 rad" before).
      if (sdk.body !== "p7") throw new Error(`expected a p7, got ${sdk.body}`);
      const pose = [0.5, -0.4, 0.3, -0.2, 0, 0, 0];
      const lease = await sdk.acquireControl({ leaseMs: 10_000 });
      await sdk.p7.moveJoints(pose, { speedRadS: 2 });
      await expect.poll(() => Math.max(...pose.map((p, i) => Math.abs((sdk.getJointState()?.angles[i] ?? 0) - p))), { timeout: 8000 }).toBeLessThan(0.01);
      await lease.release();
      const labels = () => Promise.all(pose.map((_, i) => page.$eval(`#p7-joint-${i + 1}`, (s) => s.parentElement?.querySelector("output")?.textContent?.trim() ?? "")));
      await expect.poll(async () => (await labels())[0], { timeout: 5000 }).not.toBe("0.00 rad");
      const shown = (await labels()).map((t) => Number(/^(-?[\d.]+) rad$/.exec(t)?.[1]));
      const measured = sdk.getJointState()!.angles;
      for (let i = 0; i < 7; i++) expect(Math.abs(shown[i]! - measured[i]!), `joint${i + 1}: label ${shown[i]}, measured ${measured[i]}`).toBeLessThanOrEqual(0.011);
      const moved = await plotsMove(page, 2000);
      expect(moved.rows).toBeGreaterThanOrEqual(15);
      expect(moved.draws).toBeGreaterThan(0);
      await expectRendered(page);
      // Pause freezes the charts (no redraw) while rows keep coming; CSV exports the visible window.
      await page.click("#plots-pause");
      const frozen = await plotsMove(page, 800);
      expect(frozen.rows).toBeGreaterThan(0);
      expect(frozen.draws).toBe(0);
      const [download] = await Promise.all([page.waitForEvent("download"), page.click("#plots-csv")]);
      const csv = await readFile(await download.path(), "utf8");
      const lines = csv.trim().split("\n");
      expect(lines[0]).toMatch(/^epoch_ms,time_iso,joint1\.position,joint1\.target,/);
      expect(lines.length).toBeGreaterThan(20);
      expect(lines[1]).toMatch(/^\d{13},\d{4}-\d\d-\d\dT[\d:.]+Z,-?\d/);
      await page.click("#plots-live");
      expect(await page.$$eval("#p7-errors li", (li) => li.map((x) => x.textContent))).toEqual(["joint1: 0", "joint2: 0", "joint3: 0", "joint4: 0", "joint5: 0", "joint6: 0", "joint7: 0"]);

      await takeControl(page);
      await page.fill("#p7-speed", "2");
      await page.fill("#p7-joint-1", "0.6");
      await page.click("#p7-move");
      await expect.poll(() => sdk.getJointState()?.angles[0] ?? 0, { timeout: 6000 }).toBeGreaterThan(0.55);
      // A held arrow key steps a slider at every auto-repeat: the arm follows to the last value, and
      // the event list gets no line for it (it took one per key press).
      const commandLines = () => page.$$eval('#events li[data-kind="command"]', (l) => l.length);
      const linesBefore = await commandLines();
      await page.focus("#p7-joint-2");
      for (let i = 0; i < 12; i++) await page.keyboard.down("ArrowLeft"); // the first press, then auto-repeat (repeat: true)
      await page.keyboard.up("ArrowLeft");
      const stepped = Number(await page.$eval("#p7-joint-2", (i) => (i as HTMLInputElement).value));
      expect(stepped).toBeLessThan(pose[1]! - 0.1);
      await expect.poll(() => Math.abs((sdk.getJointState()?.angles[1] ?? 0) - stepped), { timeout: 6000 }).toBeLessThan(0.01);
      expect(await commandLines()).toBe(linesBefore);
      expect(await page.textContent("#p7-move-status")).toMatch(/^move sent at .*: arrives in about [\d.]+ s$/);
      await page.click("#p7-clear-error");
      await release(page);
      // Released: a plain state, not a red alarm.
      await page.waitForFunction(() => (document.querySelector("#safety") as HTMLElement).dataset.level === "calm");

      await secondClientHolds(page, sdk);
      await takeControl(page);
      await estopAndReset(page, sdk, true);
    });
  });

  it("P7: control taken while the stream reconnects: the sliders wait for the arm's pose and Move sends nothing until then (never zeros)", async () => {
    const gate = streamGate();
    await onDashboard(
      browser(),
      await P7Robot.create({ seed: 3 }),
      async ({ page, sdk }) => {
        if (sdk.body !== "p7") throw new Error(`expected a p7, got ${sdk.body}`);
        const pose = [0.5, -0.4, 0.3, -0.2, 0, 0, 0];
        const lease = await sdk.acquireControl({ leaseMs: 10_000 });
        await sdk.p7.moveJoints(pose, { speedRadS: 2 });
        const away = () => Math.max(...pose.map((p, i) => Math.abs((sdk.getJointState()?.angles[i] ?? 0) - p)));
        await expect.poll(away, { timeout: 8000 }).toBeLessThan(0.01);
        await lease.release();
        // The stream drops; the page reconnects and gets its hello, no state.
        gate.states = false;
        await gate.cut();
        await page.waitForFunction(() => /reconnected/.test(document.querySelector("#events")?.textContent ?? ""));
        await takeControl(page);
        await page.click("#p7-move");
        expect(await page.textContent("#p7-move-status")).toMatch(/^waiting for the arm's pose/);
        // The first state while held gives the sliders the measured pose (the waiting line goes; the
        // thumbs showed the pose before the cut already), and Move then holds the arm there.
        gate.states = true;
        await page.waitForFunction(() => document.querySelector("#p7-move-status")?.textContent === "");
        expect(await page.$eval("#p7-joint-2", (i) => Number((i as HTMLInputElement).value))).toBeCloseTo(-0.4, 1);
        await page.click("#p7-move");
        await page.waitForFunction(() => /^move sent at/.test(document.querySelector("#p7-move-status")?.textContent ?? ""));
        await expect.poll(away, { timeout: 6000 }).toBeLessThan(0.011);
        await release(page);
      },
      undefined,
      gate.prepare,
    );
  });

  it("TNY-360: plots, 3D, a velocity from the keyboard reaches the robot, odometry and paws, holder, e-stop", async () => {
    await onDashboard(browser(), await Tny360Robot.create({ seed: 5 }), async ({ page, sdk }) => {
      expect(await page.textContent("#body-name")).toBe("TNY-360");
      const moved = await plotsMove(page, 2000);
      expect(moved.rows).toBeGreaterThanOrEqual(15);
      expect(moved.draws).toBeGreaterThan(0);
      await expectRendered(page);
      expect(await page.$$eval("#tny-paws li", (li) => li.length)).toBe(4);
      expect(await page.textContent("#tny-mask")).toMatch(/^0x[0-9A-F]{4}$/);

      await takeControl(page);
      await page.focus("#tny-pad");
      await page.keyboard.down("ArrowUp");
      await expect
        .poll(
          () => {
            const m = sdk.getBodyState();
            return m?.body === "tny360" ? m.locomotion.target_velocity.x : 0;
          },
          { timeout: 3000 },
        )
        .toBeGreaterThan(0.05);
      await page.keyboard.up("ArrowUp");
      await expect
        .poll(
          () => {
            const m = sdk.getBodyState();
            return m?.body === "tny360" ? m.locomotion.target_velocity.x : 1;
          },
          { timeout: 3000 },
        )
        .toBe(0);
      await page.selectOption("#tny-gait", "Walk");
      await expect
        .poll(
          () => {
            const m = sdk.getBodyState();
            return m?.body === "tny360" ? m.locomotion.gait : "";
          },
          { timeout: 3000 },
        )
        .toBe("Walk");
      await release(page);

      await secondClientHolds(page, sdk);
      await estopAndReset(page, sdk);
    });
  });
});
