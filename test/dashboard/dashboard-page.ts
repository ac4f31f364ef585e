import type { Browser, Page, WebSocketRoute } from "playwright-core";
import WebSocket from "ws";
import { type BodylinkClient, connect, type RobotClient } from "../../src/client/index.js";
import type { NaoRobot } from "../../src/runtime/nao-robot.js";
import type { P7Robot } from "../../src/runtime/p7-robot.js";
import type { Tny360Robot } from "../../src/runtime/tny360-robot.js";
import { type RunningApiServer, startApiServer } from "../../src/serve/api/build.js";
import { expect } from "vitest";

export interface Ctx {
  api: RunningApiServer;
  page: Page;
  /** A second program on the same API, as any client would be. */
  sdk: RobotClient;
}

/**
 * Start `robot` and its API, open the dashboard at 1280x720, run `f`, then check and close
 * everything. `prepare` runs on the page before it loads (e.g. to route its WebSocket).
 */
export async function onDashboard(browser: Browser, robot: NaoRobot | P7Robot | Tny360Robot, f: (ctx: Ctx) => Promise<void>, token?: string, prepare?: (page: Page) => Promise<void>): Promise<void> {
  await robot.start();
  const api = await startApiServer(robot, { port: 0, ...(token ? { token } : {}) });
  const sdk = await connect(api.url, { WebSocket: WebSocket as never, owner: "second-client", ...(token ? { token } : {}) });
  const page = await browser.newPage({ viewport: { width: 1280, height: 720 } });
  const requests: string[] = [];
  const problems: string[] = [];
  page.on("request", (r) => requests.push(r.url()));
  page.on("console", (m) => {
    if (m.type() === "error") problems.push(`console: ${m.text()}`);
    // chromium's warning that the 3D view's pixel readback wasted its shadow copy (once per frame)
    if (/READ-usage buffer was written/.test(m.text())) problems.push(`console ${m.type()}: ${m.text()}`);
  });
  page.on("pageerror", (e) => problems.push(`pageerror: ${e.message}`));
  try {
    await prepare?.(page);
    await page.goto(`${api.url}/${token ? `?token=${encodeURIComponent(token)}` : ""}`);
    await page.waitForFunction(() => document.querySelector("#link")?.textContent === "ok");
    await f({ api, page, sdk });
    // Nothing but this server (a CSV export is a blob: URL made by the page itself).
    expect(requests.filter((u) => !u.startsWith(`${api.url}/`) && !u.startsWith("blob:"))).toEqual([]);
    expect(problems).toEqual([]);
  } finally {
    await page.close();
    await sdk.close();
    await api.close();
    await robot.stop();
  }
}

/** The plots took in new rows and redrew during `ms`. */
export async function plotsMove(page: Page, ms: number): Promise<{ rows: number; draws: number }> {
  const read = () => page.$eval("#plots", (e) => ({ rows: Number((e as HTMLElement).dataset.rows), draws: Number((e as HTMLElement).dataset.draws) }));
  await page.waitForFunction(() => Number((document.querySelector("#plots") as HTMLElement).dataset.rows) > 0);
  const a = await read();
  await page.waitForTimeout(ms);
  const b = await read();
  return { rows: b.rows - a.rows, draws: b.draws - a.draws };
}

/** The 3D canvas's pixels: how many differ from the background colour, and how many colours. */
export async function canvasPixels(page: Page): Promise<{ total: number; foreground: number; colours: number }> {
  await page.waitForFunction(() => Number((document.querySelector("#view3d") as HTMLElement).dataset.frames) > 1);
  return page.$eval("#view3d canvas", (c) => {
    const src = c as HTMLCanvasElement;
    const copy = document.createElement("canvas");
    copy.width = src.width;
    copy.height = src.height;
    const g = copy.getContext("2d")!;
    g.drawImage(src, 0, 0);
    const d = g.getImageData(0, 0, copy.width, copy.height).data;
    const bg = [d[0]!, d[1]!, d[2]!];
    let foreground = 0;
    const colours = new Set<number>();
    for (let i = 0; i < d.length; i += 4) {
      if (Math.abs(d[i]! - bg[0]!) + Math.abs(d[i + 1]! - bg[1]!) + Math.abs(d[i + 2]! - bg[2]!) > 24) foreground++;
      colours.add((d[i]! >> 3) * 1024 + (d[i + 1]! >> 3) * 32 + (d[i + 2]! >> 3));
    }
    return { total: d.length / 4, foreground, colours: colours.size };
  });
}

export async function expectRendered(page: Page): Promise<void> {
  const px = await canvasPixels(page);
  expect(px.total).toBeGreaterThan(10_000);
  expect(px.foreground / px.total).toBeGreaterThan(0.03); // the body, not only the floor
  expect(px.colours).toBeGreaterThan(20); // shaded, not one flat colour
}

/** A second client takes control: the page's header names it, and the page's own attempt is refused naming it. */
export async function secondClientHolds(page: Page, sdk: BodylinkClient): Promise<void> {
  const lease = await sdk.acquireControl({ leaseMs: 5000 });
  try {
    await page.waitForFunction(() => /^second-client \(api\) until /.test(document.querySelector("#control")?.textContent ?? ""), undefined, { timeout: 5000 });
    await page.click("#take-control");
    await page.waitForFunction(() => /Refused: control is held by second-client \(api\) until/.test(document.querySelector("#control-status")?.textContent ?? ""));
    expect(await page.$eval("#teleop-controls", (f) => (f as HTMLFieldSetElement).disabled)).toBe(true);
  } finally {
    await lease.release();
  }
}

/**
 * Emergency stop from the page: the runtime latches it, the banner says so and the event log too; Reset clears it.
 * `holding`: the page holds control when it stops: its lease ends calmly, with no refused renewal
 * (the test's "no console errors" would see chromium log a 409).
 */
export async function estopAndReset(page: Page, sdk: BodylinkClient, holding = false): Promise<void> {
  if (holding) expect(await page.$eval("#teleop-controls", (f) => (f as HTMLFieldSetElement).disabled)).toBe(false);
  await page.getByRole("button", { name: "Emergency stop" }).click();
  await expect.poll(async () => (await sdk.fetchEstop()).latched).toBe(true);
  if (holding) {
    await page.waitForFunction(() => /^control ended: revoked by the emergency stop \(dashboard button\)/.test(document.querySelector("#control-status")?.textContent ?? ""));
    expect(await page.$eval("#control-status", (e) => (e as HTMLElement).dataset.level)).toBe("calm");
    expect(await page.$eval("#teleop-controls", (f) => (f as HTMLFieldSetElement).disabled)).toBe(true);
    // Two renewal periods in the latch: a renewal still being sent would be refused and logged.
    await page.waitForTimeout(2200);
  }
  expect((await sdk.fetchEstop()).source).toBe("dashboard");
  await page.waitForSelector("#estop-banner:not([hidden])", { timeout: 5000 });
  expect(await page.textContent("#estop-banner")).toMatch(/Emergency stop latched.*by dashboard.*Commands are refused until it is reset/s);
  // Latched, "Take control" is no longer the bright primary button (a lease would be refused).
  const takeBg = () => page.$eval("#take-control", (b) => getComputedStyle(b).backgroundColor);
  expect(await takeBg()).toBe("rgb(255, 255, 255)");
  await page.waitForFunction(() => /emergency stop latched by dashboard/.test(document.querySelector("#events")?.textContent ?? ""));
  await page.click("#estop-reset");
  await page.waitForSelector("#estop-banner[hidden]", { state: "attached", timeout: 5000 });
  expect((await sdk.fetchEstop()).latched).toBe(false);
  await page.waitForFunction(() => /emergency stop reset/.test(document.querySelector("#events")?.textContent ?? ""));
  expect(await takeBg()).not.toBe("rgb(255, 255, 255)");
}

export const takeControl = async (page: Page) => {
  await page.click("#take-control");
  await page.waitForFunction(() => /^In control/.test(document.querySelector("#control-status")?.textContent ?? ""));
};
export const release = async (page: Page) => {
  await page.click("#release-control");
  await page.waitForFunction(() => /^Control released/.test(document.querySelector("#control-status")?.textContent ?? ""));
  // Calm, not an alarm.
  expect(await page.$eval("#control-status", (e) => (e as HTMLElement).dataset.level)).toBe("calm");
};

/** A browser test does a body's whole story; on a loaded 2-core machine that takes a while. */
export const BROWSER_TEST_MS = 90_000;

/**
 * The page's state stream through a route (pass `prepare` to onDashboard): `cut()` closes the
 * page's socket and resolves once the page has connected again; while `states` is false only the
 * hello reaches the page, as on a connection whose first state has not come yet.
 */
export function streamGate(): { prepare: (page: Page) => Promise<void>; cut: () => Promise<void>; states: boolean } {
  let current: WebSocketRoute | null = null;
  let connections = 0;
  const gate = {
    states: true,
    prepare: (page: Page) =>
      page.routeWebSocket(/\/v1\/stream/, (ws) => {
        current = ws;
        connections++;
        const server = ws.connectToServer();
        server.onMessage((m) => {
          if (gate.states || (typeof m === "string" && m.includes('"type":"hello"'))) ws.send(m);
        });
        ws.onMessage((m) => server.send(m));
      }),
    cut: async () => {
      const before = connections;
      await current!.close();
      await expect.poll(() => connections, { timeout: 10_000 }).toBeGreaterThan(before);
    },
  };
  return gate;
}
