/**
 * A web page from another origin on the same machine, in a real browser (Debian's chromium through
 * playwright-core), tries what issue 10 found it could do: read the state stream, command the
 * TNY-360 over its WebSocket, and trigger the e-stop with a blind `no-cors` POST (which makes a
 * standing NAO fall). It must get nothing and change nothing (docs/security.md). The page is served
 * by a plain HTTP server on another loopback port: a second origin, as any local web page is.
 *
 * Skips, saying why in one line, only when Debian's chromium is missing.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { type Browser, chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NaoRobot } from "../../src/runtime/nao-robot.js";
import { Tny360Robot } from "../../src/runtime/tny360-robot.js";
import { type RunningApiServer, startApiServer } from "../../src/serve/api/build.js";
import { startTnyServer, type TnyServer } from "../../src/serve/tny/server.js";
import { actionSpec } from "../../src/wire/tny/constants.js";
import { encodeRequest } from "../../src/wire/tny/encode.js";
import { CHROMIUM, CHROMIUM_ARGS, CHROMIUM_SKIP, HAVE_CHROMIUM } from "./chromium.js";

const TITLE = CHROMIUM_SKIP ?? "a page from a second loopback origin, in chromium";

interface Attempts {
  streamMessages: number;
  streamOpened: boolean;
  stateRead: string;
  estopNoCors: string;
  estopJson: string;
  estopBeacon: boolean;
  leaseJson: string;
  tnyOpened: boolean;
  tnyReplies: number;
}

describe.skipIf(!HAVE_CHROMIUM)(TITLE, () => {
  let browser: Browser;
  let nao: NaoRobot;
  let api: RunningApiServer;
  let tny: Tny360Robot;
  let tnyServer: TnyServer;
  let page: Server;
  let pageUrl: string;
  beforeAll(async () => {
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS });
    nao = await NaoRobot.create({ seed: 3 });
    await nao.start();
    api = await startApiServer(nao, { port: 0 });
    tny = await Tny360Robot.create({ seed: 3 });
    await tny.start();
    tnyServer = await startTnyServer(tny, { port: 0 });
    page = createServer((_req, res) => {
      res.writeHead(200, { "content-type": "text/html" });
      res.end("<!doctype html><title>some other local page</title><p>hello</p>");
    });
    await new Promise<void>((r) => page.listen(0, "127.0.0.1", r));
    pageUrl = `http://127.0.0.1:${(page.address() as AddressInfo).port}/`;
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await new Promise<void>((r) => (page ? page.close(() => r()) : r()));
    await tnyServer?.close();
    await tny?.stop();
    await api?.close();
    await nao?.stop();
  });

  it("can neither read the stream, nor command the TNY-360, nor trigger the e-stop", async () => {
    const tab = await browser.newPage();
    await tab.goto(pageUrl);
    const { module, action } = actionSpec("body", "setVelocity");
    const velocity = Array.from(encodeRequest(1, module, action, [0.3, 0, 0, true]));
    const got = await tab.evaluate(
      async ({ apiUrl, tnyUrl, velocity }): Promise<Attempts> => {
        const out: Attempts = {
          streamMessages: 0,
          streamOpened: false,
          stateRead: "",
          estopNoCors: "",
          estopJson: "",
          estopBeacon: false,
          leaseJson: "",
          tnyOpened: false,
          tnyReplies: 0,
        };
        const settle = (ms: number) => new Promise((r) => setTimeout(r, ms));
        // 1. The state stream.
        const ws = new WebSocket(`${apiUrl.replace("http", "ws")}/v1/stream`);
        ws.onopen = () => {
          out.streamOpened = true;
        };
        ws.onmessage = () => {
          out.streamMessages++;
        };
        // 2. The state over REST (CORS: no Access-Control-Allow-Origin, so the page cannot read it).
        out.stateRead = await fetch(`${apiUrl}/v1/state`).then(
          (r) => r.text(),
          (e: Error) => `blocked: ${e.name}`,
        );
        // 3. The e-stop, blind (no-cors needs no preflight and no body), and with JSON (preflighted).
        out.estopNoCors = await fetch(`${apiUrl}/v1/estop`, { method: "POST", mode: "no-cors" }).then(
          (r) => r.type,
          (e: Error) => `blocked: ${e.name}`,
        );
        out.estopJson = await fetch(`${apiUrl}/v1/estop`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" }).then(
          (r) => String(r.status),
          (e: Error) => `blocked: ${e.name}`,
        );
        out.estopBeacon = navigator.sendBeacon(`${apiUrl}/v1/estop`, "{}");
        out.leaseJson = await fetch(`${apiUrl}/v1/control`, { method: "POST", mode: "no-cors", body: '{"owner":"page"}' }).then(
          (r) => r.type,
          (e: Error) => `blocked: ${e.name}`,
        );
        // 4. The TNY-360: open its WebSocket and command a velocity.
        const t = new WebSocket(tnyUrl);
        t.binaryType = "arraybuffer";
        t.onopen = () => {
          out.tnyOpened = true;
          t.send(new Uint8Array(velocity));
        };
        t.onmessage = () => {
          out.tnyReplies++;
        };
        await settle(1500);
        ws.close();
        t.close();
        return out;
      },
      { apiUrl: api.url, tnyUrl: `ws://127.0.0.1:${tnyServer.port}/`, velocity },
    );
    await tab.close();
    // Nothing read.
    expect(got.streamOpened).toBe(false);
    expect(got.streamMessages).toBe(0);
    expect(got.stateRead).toMatch(/^blocked/);
    // Nothing stopped (a no-cors request always "succeeds" opaquely: what counts is the robot).
    expect(got.estopJson).toMatch(/^blocked/);
    expect(nao.estopState().latched).toBe(false);
    expect(nao.state.safetyReason ?? "").not.toMatch(/emergency/);
    expect(nao.authority.holder()).toBeNull();
    // Nothing commanded on the TNY-360.
    expect(got.tnyOpened).toBe(false);
    expect(got.tnyReplies).toBe(0);
    expect(tnyServer.stats().accepted).toBe(0);
    expect(tnyServer.stats().refusedAccess).toBeGreaterThanOrEqual(1);
    expect(tny.authority.holder()).toBeNull();
    // The same checks let the runtime's own origin through: its dashboard reads and stops.
    const own = await browser.newPage();
    await own.goto(`${api.url}/`);
    const ownStop = await own.evaluate(
      async (u) => (await fetch(`${u}/v1/estop`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ reason: "own page" }) })).status,
      api.url,
    );
    await own.close();
    expect(ownStop).toBe(200);
    expect(nao.estopState().latched).toBe(true);
  }, 60_000);
});
