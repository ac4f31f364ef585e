/**
 * The proxy's own cycles while the upstream LoLA streams (src/drivers/nao/lola-upstream.ts): the
 * upstream is the clock, and the loop's fallback waits as long as the stall bound, counted from the
 * upstream's last message (both SilenceTimers on one stamp per message: no timer work per message),
 * so both share one of Node's timer lists and wake the thread once per stall bound, not twice per
 * message period (docs/performance.md).
 */
import { afterEach, describe, expect, it } from "vitest";
import { LolaUpstreamDriver } from "../../src/drivers/nao/lola-upstream.js";
import { MonotonicClock } from "../../src/runtime/clock.js";
import { NaoRobot } from "../../src/runtime/nao-robot.js";
import { LolaSensorWriter } from "../../src/wire/lola/sensor-message.js";
import { rawSocketServer, tmpSocketPath, until } from "./client.js";
import { KNOWN_ROBOT_CONFIG, knownSensorValues } from "./helpers.js";

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** A raw upstream that sends five messages a period apart, then stays silent on an open connection; a proxy robot on it. */
async function fiveThenSilence(stallMs?: number) {
  const path = tmpSocketPath();
  const bytes = Uint8Array.from(new LolaSensorWriter(KNOWN_ROBOT_CONFIG).write(knownSensorValues()));
  let sent = 0;
  const raw = await rawSocketServer(path, (s) => {
    const t = setInterval(() => {
      if (sent === 5) return clearInterval(t);
      sent++;
      s.write(bytes);
    }, 12);
    s.on("close", () => clearInterval(t));
  });
  cleanups.push(raw.close);
  const clock = new MonotonicClock();
  const driver = new LolaUpstreamDriver({ path, clock, log: () => {}, ...(stallMs ? { stallMs } : {}) });
  const robot = await NaoRobot.create({ clock, driver, acceptBoardVersions: [10, 11], youngGcEveryMs: 0 });
  const cycles: Array<{ atMs: number; messages: number; stalls: number; link: string }> = [];
  robot.onCycle((_seq, nowMs) => cycles.push({ atMs: nowMs, messages: driver.upstream.counters.messages, stalls: driver.upstream.counters.stalls, link: robot.state.link }));
  await robot.start();
  cleanups.push(() => robot.stop());
  return { driver, robot, cycles };
}

describe("the LoLA upstream driver's fallback", { timeout: 30_000 }, () => {
  it("after the last message, the loop's next cycle comes with the stall (60 ms), not after two periods", async () => {
    const { driver, robot, cycles } = await fiveThenSilence();
    await until(() => driver.upstream.counters.stalls === 1 && robot.state.link !== "ok", "the stall");
    const last = cycles.findIndex((c) => c.messages === 5);
    expect(last).toBeGreaterThanOrEqual(0);
    // Cycles after the fifth message's: none before the stall bound (a fallback after two periods
    // would come ~24 ms later); timers never fire early, so only a late one could move this.
    const next = cycles[last + 1]!;
    expect(next.atMs - cycles[last]!.atMs).toBeGreaterThanOrEqual(50);
    expect(driver.upstream.stallMs).toBe(60);
  });

  it("with a longer stall bound, its own fallback runs the loop's next cycle 5 periods after the last message, before the stall", async () => {
    const { driver, cycles } = await fiveThenSilence(400);
    await until(() => driver.upstream.counters.stalls === 1, "the stall");
    const last = cycles.findIndex((c) => c.messages === 5);
    expect(last).toBeGreaterThanOrEqual(0);
    const next = cycles[last + 1]!;
    // Not before 5 periods (a SilenceTimer never fires early); and it is the fallback's, not the stall's.
    expect(next.atMs - cycles[last]!.atMs).toBeGreaterThanOrEqual(55);
    expect(next.stalls).toBe(0);
  });
});
