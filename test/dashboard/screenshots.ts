/**
 * The dashboard screenshots in docs/img/ (docs/dashboard.md, README): each simulated body on a
 * loopback port of its own, driven from the page into a state worth showing, in Debian's chromium.
 *
 *   npx tsx test/dashboard/screenshots.ts [nao|p7|tny360|phone|estop …]    # all of them by default
 *
 * Not a test (vitest runs *.test.ts only): it takes about a minute per body, on purpose, so the
 * plots have history in them.
 */
import { mkdirSync } from "node:fs";
import { chromium, type Page } from "playwright-core";
import { NaoRobot } from "../../src/runtime/nao-robot.js";
import { P7Robot } from "../../src/runtime/p7-robot.js";
import { Tny360Robot } from "../../src/runtime/tny360-robot.js";
import { startApiServer } from "../../src/serve/api/build.js";
import { CHROMIUM, CHROMIUM_ARGS } from "./chromium.js";

const OUT = new URL("../../docs/img/", import.meta.url);
const wanted = process.argv.slice(2);
const want = (n: string) => wanted.length === 0 || wanted.includes(n);

async function shoot(name: string, robot: NaoRobot | P7Robot | Tny360Robot, drive: (page: Page) => Promise<void>, viewport = { width: 1280, height: 720 }): Promise<void> {
  await robot.start();
  const api = await startApiServer(robot, { port: 0 });
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
  try {
    const page = await browser.newPage({ viewport, deviceScaleFactor: 1 });
    page.on("console", (m) => {
      if (m.type() === "error") console.error(`${name}: console: ${m.text()}`);
    });
    await page.goto(`${api.url}/`);
    await page.waitForFunction(() => document.querySelector("#link")?.textContent === "ok");
    await drive(page);
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.waitForTimeout(300);
    const file = new URL(`dashboard-${name}.png`, OUT);
    await page.screenshot({ path: file.pathname });
    console.log(`wrote ${file.pathname}`);
  } finally {
    await browser.close();
    await api.close();
    await robot.stop();
  }
}

const take = async (page: Page) => {
  await page.click("#take-control");
  await page.waitForFunction(() => /^In control/.test(document.querySelector("#control-status")?.textContent ?? ""));
};

mkdirSync(OUT, { recursive: true });

const nao = async (page: Page) => {
  await take(page);
  await page.click("#nao-smooth-enable");
  await page.waitForTimeout(6000);
  // Wave the head and the left arm a little so the plots and the ghost have something to show.
  await page.selectOption("#nao-chain", "LArm");
  for (const [id, v] of [
    ["#joint-LShoulderPitch", "0.4"],
    ["#joint-LShoulderRoll", "0.6"],
    ["#joint-LElbowRoll", "-1.0"],
  ] as const) {
    await page.fill(id, v);
    await page.waitForTimeout(1500);
  }
  await page.selectOption("#nao-chain", "Head");
  await page.fill("#joint-HeadYaw", "0.5");
  await page.waitForTimeout(2500);
  await page.fill("#joint-HeadYaw", "-0.3");
  await page.waitForTimeout(12000);
};

if (want("nao"))
  await shoot("nao", await NaoRobot.create({ seed: 11, safetyLateBoundMs: 2000 }), async (page) => {
    await nao(page);
    // The feet from above on their own: pressure, CoP dots, support polygon, the centre of mass.
    const feet = page.locator("#feet");
    await feet.scrollIntoViewIfNeeded();
    await page.waitForTimeout(500);
    const file = new URL("dashboard-nao-feet.png", OUT);
    await feet.screenshot({ path: file.pathname });
    console.log(`wrote ${file.pathname}`);
  });
if (want("phone")) await shoot("nao-phone", await NaoRobot.create({ seed: 11, safetyLateBoundMs: 2000 }), nao, { width: 390, height: 844 });

if (want("p7")) {
  await shoot("p7", await P7Robot.create({ seed: 3 }), async (page) => {
    await take(page);
    await page.fill("#p7-speed", "1.2");
    for (const [i, v] of [
      [1, "0.7"],
      [2, "-1.1"],
      [4, "-1.4"],
      [6, "0.6"],
    ] as const)
      await page.fill(`#p7-joint-${i}`, v);
    await page.click("#p7-move");
    await page.waitForTimeout(9000);
    await page.fill("#p7-joint-1", "-0.4");
    await page.fill("#p7-joint-3", "0.8");
    await page.click("#p7-move");
    await page.waitForTimeout(10000);
  });
}

if (want("tny360")) {
  await shoot("tny360", await Tny360Robot.create({ seed: 5 }), async (page) => {
    await take(page);
    await page.click("#tny-smooth-enable");
    await page.waitForTimeout(7000);
    await page.selectOption("#tny-gait", "Walk");
    await page.focus("#tny-pad");
    await page.keyboard.down("ArrowUp");
    await page.waitForTimeout(6000);
    await page.keyboard.down("ArrowLeft");
    await page.waitForTimeout(5000);
    await page.keyboard.up("ArrowLeft");
    await page.waitForTimeout(3000);
  });
}

if (want("estop")) {
  await shoot("estop", await NaoRobot.create({ seed: 11, safetyLateBoundMs: 2000 }), async (page) => {
    await take(page);
    await page.click("#nao-smooth-enable");
    await page.waitForTimeout(6000);
    await page.getByRole("button", { name: "Emergency stop" }).click();
    await page.waitForSelector("#estop-banner:not([hidden])");
    await page.waitForTimeout(4000);
  });
}
