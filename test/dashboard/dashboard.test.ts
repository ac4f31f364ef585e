import { describe, expect, it } from "vitest";
import { API_ORDER } from "../../src/bodies/nao/joints.js";
import { NaoRobot } from "../../src/runtime/nao-robot.js";
import { P7Robot } from "../../src/runtime/p7-robot.js";
import { CHROMIUM_SKIP, HAVE_CHROMIUM, suiteBrowser } from "./chromium.js";

import { onDashboard, plotsMove, expectRendered, secondClientHolds, estopAndReset, takeControl, release, streamGate, BROWSER_TEST_MS } from "./dashboard-page.js";

const TITLE = CHROMIUM_SKIP ?? "dashboard in chromium (real clock, simulated bodies)";

describe.skipIf(!HAVE_CHROMIUM)(TITLE, { timeout: BROWSER_TEST_MS }, () => {
  const browser = suiteBrowser();

  it("NAO: plots, 3D from the kinematics, feet with the CoP where the stream says, take control + smooth enable, holder, e-stop", async () => {
    // The safety ramp on late cycles is tested elsewhere (test/nao/robot.test.ts); here a loaded
    // 2-core machine would cut the stiffness the page asks for, so the bound is wide.
    await onDashboard(browser(), await NaoRobot.create({ seed: 11, youngGcEveryMs: 100, safetyLateBoundMs: 2000 }), async ({ page, sdk }) => {
      expect(await page.textContent("#body-name")).toBe("NAO v6");
      // Every CoP the SDK receives from here on (the feet view is checked against them below).
      const recent: Array<{ left: readonly number[]; right: readonly number[] }> = [];
      const off = sdk.on("message", (m) => {
        if (m.body !== "nao" || !m.center_of_pressure) return;
        recent.push(m.center_of_pressure);
        if (recent.length > 200) recent.shift();
      });
      await page.waitForFunction(() => document.querySelectorAll("#joints tbody tr").length === 26);
      // A hand's closed (0) and open (1) are its working ends: its mark is shown, never red as "near a limit".
      const hands = () =>
        page.$$eval("#joints tbody tr", (rows) =>
          rows
            .filter((r) => /Hand$/.test(r.querySelector("th")?.textContent ?? ""))
            .map((r) => ({
              shown: !(r.querySelector(".mark") as HTMLElement | null)?.hidden,
              near: r.querySelector(".bar")?.classList.contains("near") ?? false,
              at: Number(r.querySelector(".bar")?.getAttribute("aria-valuenow")),
            })),
        );
      await expect.poll(async () => (await hands()).every((h) => h.shown)).toBe(true);
      for (const h of await hands()) expect(h, `at ${h.at}`).toMatchObject({ near: false });
      const moved = await plotsMove(page, 2000);
      expect(moved.rows).toBeGreaterThanOrEqual(15); // 20 Hz for 2 s, with room for a loaded machine
      expect(moved.draws).toBeGreaterThan(0);
      await expectRendered(page);

      await page.waitForFunction(() => document.querySelectorAll('#feet .cop:not([style*="none"])').length === 2);
      const drawn = await page.$$eval("#feet .cop", (dots) =>
        dots.map((d) => {
          const c = d as SVGCircleElement;
          // Group coordinates are the ankle frame's mm: cx = −y, cy = −x.
          return { xM: -Number(c.getAttribute("cy")) / 1000, yM: -Number(c.getAttribute("cx")) / 1000, side: c.parentElement?.getAttribute("data-foot") };
        }),
      );
      // The CoP dots, read back from where the SVG draws them, are one of the messages the SDK got
      // too (the page draws its text and feet at 10 Hz; the SDK may be a message behind: wait a little).
      await page.waitForTimeout(300);
      off();
      expect(recent.length).toBeGreaterThan(20);
      // Both dots from the same recent message, to the SVG's 0.01 mm.
      const match = recent.some((cop) =>
        drawn.every((d) => {
          const w = cop[d.side as "left" | "right"];
          return Math.abs(d.xM - w[0]!) < 1e-5 && Math.abs(d.yM - w[1]!) < 1e-5;
        }),
      );
      expect(match, `drawn ${JSON.stringify(drawn)} is none of the last ${recent.length} messages' CoPs`).toBe(true);
      expect(await page.$$eval("#feet .fsr", (c) => c.length)).toBe(8);
      expect(await page.$eval("#feet .support", (p) => p.getAttribute("points")?.split(" ").length ?? 0)).toBeGreaterThanOrEqual(3);
      await page.waitForFunction(() => (document.querySelector("#prefs tbody")?.children.length ?? 0) === 76);
      await page.fill("#prefs-search", "serial");
      await page.waitForFunction(() => Array.from(document.querySelectorAll("#prefs tbody tr")).filter((r) => !(r as HTMLElement).hidden).length < 76);

      // Take control and stand up from the page: the SDK sees the stiffness and the knees move.
      await takeControl(page);
      const naoStiffness = () => {
        const m = sdk.getBodyState();
        return m?.body === "nao" ? Math.max(...m.joint_stiffness) : Number.NaN;
      };
      expect(naoStiffness()).toBe(0);
      await page.click("#nao-smooth-enable");
      await expect.poll(naoStiffness, { timeout: 5000 }).toBeGreaterThan(0.3);
      await expect.poll(() => sdk.getJointState()?.angles[11] ?? 0, { timeout: 8000 }).toBeGreaterThan(0.3); // LKneePitch towards the stand's 0.9
      // Standing: the centre of mass's ground projection is drawn over the support polygon, between the feet.
      await page.waitForFunction(() => document.querySelector("#feet .com")?.getAttribute("data-inside") === "true", undefined, { timeout: 8000 });
      expect(await page.textContent("#feet .com-text")).toBe("centre of mass (+): over the support polygon");
      const comXY = await page.$eval("#feet .com", (g) => [Number(g.getAttribute("data-x-m")), Number(g.getAttribute("data-y-m"))]);
      expect(Math.abs(comXY[0]!)).toBeLessThan(0.06); // within the soles' length around the ankles
      expect(Math.abs(comXY[1]!)).toBeLessThan(0.02); // near the midline between the feet
      await release(page);

      // At 1280x720 the preferences table fits its panel: no value is cut off behind a sideways scroll.
      await page.waitForFunction(() => (document.querySelector("#prefs tbody")?.children.length ?? 0) > 10);
      const prefsFit = await page.$eval("#prefs", (t) => ({ table: t.scrollWidth, box: (t.parentElement as HTMLElement).clientWidth }));
      expect(prefsFit.table, JSON.stringify(prefsFit)).toBeLessThanOrEqual(prefsFit.box);
      await secondClientHolds(page, sdk);
      await estopAndReset(page, sdk);
      // After the stop, the (disabled) stiffness sliders show the body's stiffness, 0, not what was last commanded.
      const headStiffness = () => page.$eval("#stiffness-Head", (i) => [(i as HTMLInputElement).value, i.parentElement?.querySelector("output")?.textContent?.trim()]);
      await expect.poll(headStiffness, { timeout: 5000 }).toEqual(["0", "0.00"]);
      await page.screenshot({ path: "/tmp/bodylink-dashboard-nao.png" });
    });
  });

  it("NAO: control taken while the stream reconnects: a slider sends nothing until the first state gives the sliders the pose (never zeros)", async () => {
    const gate = streamGate();
    await onDashboard(
      browser(),
      await NaoRobot.create({ seed: 11, youngGcEveryMs: 100, safetyLateBoundMs: 2000 }),
      async ({ page, sdk }) => {
        const headYaw = () => sdk.getJointState()!.angles[API_ORDER.indexOf("HeadYaw")]!;
        const joints: string[] = [];
        page.on("request", (r) => {
          if (r.url().endsWith("/v1/commands/joints")) joints.push(r.postData() ?? "");
        });
        gate.states = false;
        await gate.cut();
        await page.waitForFunction(() => /reconnected/.test(document.querySelector("#events")?.textContent ?? ""));
        await takeControl(page);
        await page.fill("#joint-HeadYaw", "0.5"); // the user moves a slider before any state came
        // The first state while held gives every slider the measured pose (the drag before it is dropped).
        gate.states = true;
        await expect.poll(async () => Math.abs((await page.$eval("#joint-HeadYaw", (i) => Number((i as HTMLInputElement).value))) - headYaw()), { timeout: 10_000 }).toBeLessThan(0.011);
        expect(joints).toEqual([]); // the old code sent every joint's target as 0 here
        await page.fill("#joint-HeadYaw", "0.3");
        await expect.poll(() => joints.length, { timeout: 10_000 }).toBeGreaterThan(0);
        await release(page);
      },
      undefined,
      gate.prepare,
    );
  });

  it("with a token (serve --token): the page opened with ?token= streams, takes control and stops; the API refuses without it", async () => {
    const token = "dash-test-token-1234";
    await onDashboard(
      browser(),
      await P7Robot.create({ seed: 4 }),
      async ({ api, page, sdk }) => {
        expect((await fetch(`${api.url}/v1/health`)).status).toBe(401);
        await plotsMove(page, 500);
        await takeControl(page);
        await release(page);
        await takeControl(page);
        await estopAndReset(page, sdk, true);
      },
      token,
    );
  });
});
