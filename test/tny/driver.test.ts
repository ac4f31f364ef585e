/**
 * The real-robot driver (`Tny360Robot.create({ host })`) against bodylink's own simulated TNY-360
 * server on loopback: polling, forwarded commands with leases, the velocity keep-alive, proxying,
 * link loss and reconnection.
 */
import WebSocket from "ws";
import { afterEach, describe, expect, it } from "vitest";
import { smoothEnableEstimateS } from "../../src/bodies/tny360/poses.js";
import { TnyClient } from "../../src/client/tny/index.js";
import { Tny360Robot } from "../../src/runtime/tny360-robot.js";
import { startTnyServer, type TnyServer } from "../../src/serve/tny/server.js";

const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f();
});

async function until(cond: () => boolean, timeoutMs = 4000, what = "condition"): Promise<void> {
  const end = performance.now() + timeoutMs;
  while (!cond()) {
    if (performance.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

async function simServer(port = 0): Promise<{ sim: Tny360Robot; server: TnyServer }> {
  const sim = await Tny360Robot.create();
  await sim.start();
  const server = await startTnyServer(sim, { port });
  cleanup.push(
    () => sim.stop(),
    () => server.close(),
  );
  return { sim, server };
}

async function remoteTo(port: number, opts: { velocityTimeoutMs?: number } = {}): Promise<Tny360Robot> {
  const remote = await Tny360Robot.create({ host: "127.0.0.1", port, WebSocket, requestTimeoutMs: 500, ...opts });
  await remote.start();
  cleanup.push(() => remote.stop());
  return remote;
}

describe("TNY-360 driver against bodylink's simulated robot", () => {
  it("polls the state at up to 50 Hz: joints, IMU, target velocity, then the slow items", async () => {
    const { sim, server } = await simServer();
    const remote = await remoteTo(server.port);
    expect(remote.source).toBe("remote");
    expect(remote.loop.timing.nominalPeriodMs).toBe(20);
    await until(() => remote.state.valid, 2000, "a first poll");
    const s = remote.snapshot()!;
    expect(s.link).toBe("ok");
    for (let j = 0; j < 14; j++) expect(Math.abs(s.joints.positionRad[j]! - sim.state.joints.positionRad[j]!)).toBeLessThan(0.02);
    expect(s.imu.down).toEqual([0, 0, -1]);
    expect(s.joints.effortNm.every((e) => e === null)).toBe(true); // the API has no efforts
    expect(s.joints.temperatureC.every((t) => t === null)).toBe(true);
    // the slow round robin (≈ 30 items at 50 Hz) fills power, enable bits, targets and the IMU extras
    await until(() => !Number.isNaN(remote.state.power.voltageV) && !Number.isNaN(remote.state.imu.linearAccelerationMS2[2]!) && !Number.isNaN(remote.state.joints.targetRad[13]!), 3000, "slow items");
    expect(remote.state.power.voltageV).toBeCloseTo(sim.state.power.voltageV, 1);
    expect(remote.state.imu.linearAccelerationMS2[2]).toBeCloseTo(9.81, 0);
    const polls = remote.health().cycle.cycles;
    expect(polls).toBeGreaterThan(5);
    expect(remote.health().link).toBe("ok");
  });

  it("forwards commands under the remote runtime's lease; the simulated robot stands up and walks", async () => {
    const { sim, server } = await simServer();
    const remote = await remoteTo(server.port);
    await until(() => remote.state.valid, 2000, "a first poll");
    const refused = remote.setVelocity("no-lease", 0.1, 0, 0);
    expect(refused.ok).toBe(false);
    const lease = remote.authority.acquire("test", "cli", 30_000);
    if (!lease.ok) throw new Error(lease.reason);
    const en = remote.enableSmooth(lease.lease.id);
    expect(en.ok).toBe(true);
    if (en.ok) {
      expect(en.forwarded).toBe(true);
      expect(en.estimatedS).toBeCloseTo(smoothEnableEstimateS(remote.state.joints.positionRad), 6);
    }
    await until(() => sim.state.body.smooth === "enabling", 1000, "the sim to start enabling");
    await until(() => sim.state.body.smooth === "idle", 3000, "the sim to finish enabling");
    await until(() => remote.state.body.enabledMask === 0x3fff, 2000, "the enable bits to be polled");
    // the sim's server gave control to the driver's connection
    expect(sim.authority.holder()?.source).toBe("tny");
    expect(remote.setVelocity(lease.lease.id, 0.15, 0, 0).ok).toBe(true);
    await until(() => Math.abs(sim.state.body.targetVelocity[0]! - 0.15) < 1e-6, 1000, "the sim to walk");
    await until(() => Math.abs(remote.state.body.targetVelocity[0]! - 0.15) < 1e-6, 1000, "the target velocity to be polled");
    await until(() => remote.state.odometry.xM > 0.01, 1000, "dead-reckoned odometry");
    // not renewed: the driver's keep-alive decays it and forwards the decayed values
    await until(() => sim.state.body.targetVelocity[0] === 0, 2000, "the velocity to decay to zero");
    expect(remote.remote!.counters.velocityForwards).toBeGreaterThan(1);
  });

  it("stopping the driver sends velocity 0 at once (the firmware would keep walking)", async () => {
    const { sim, server } = await simServer();
    const remote = await remoteTo(server.port, { velocityTimeoutMs: 10_000 });
    await until(() => remote.state.valid, 2000, "a first poll");
    const lease = remote.authority.acquire("test", "cli", 30_000);
    if (!lease.ok) throw new Error(lease.reason);
    remote.setVelocity(lease.lease.id, 0.1, 0, 0.1);
    await until(() => sim.state.body.targetVelocity[0]! > 0, 1000, "the sim to get the velocity");
    await remote.stop();
    await until(() => sim.state.body.targetVelocity[0] === 0 && sim.state.body.targetVelocity[2] === 0, 500, "velocity 0");
    expect(remote.health().link).toBe("stopped");
  });

  it("serves its robot through bodylink's TNY server (serve --tny-host): a proxy in front of the real robot", async () => {
    const { sim, server } = await simServer();
    const remote = await remoteTo(server.port);
    await until(() => remote.state.valid, 2000, "a first poll");
    const proxy = await startTnyServer(remote, { port: 0 });
    cleanup.push(() => proxy.close());
    const c = await TnyClient.connect(`ws://127.0.0.1:${proxy.port}/`, { WebSocket });
    cleanup.push(async () => c.close());
    await c.system.ping();
    expect((await c.joint.getJointAngles()).length).toBe(14);
    await c.gait.setType(0); // a command: the proxy connection takes the remote runtime's lease
    expect(remote.authority.holder()?.source).toBe("tny");
    await until(() => sim.state.body.gait === 0, 1000, "the gait to reach the sim");
    await expect(c.motor.setDutyCycle(1, 1.5)).rejects.toThrow(/UnknownError/); // the robot's own answer
  });

  it("reports the link lost when the robot goes away and reconnects when it is back", async () => {
    const first = await simServer();
    const port = first.server.port;
    const remote = await remoteTo(port);
    await until(() => remote.state.link === "ok", 2000, "link ok");
    await first.server.close();
    await until(() => remote.state.link === "lost", 2000, "link lost");
    expect(remote.health().link).toBe("lost");
    const setVelocity = remote.setVelocity("x", 0, 0, 0);
    expect(setVelocity.ok).toBe(false);
    const again = await Tny360Robot.create();
    await again.start();
    const server2 = await startTnyServer(again, { port });
    cleanup.push(
      () => again.stop(),
      () => server2.close(),
    );
    const seq = remote.state.seq;
    await until(() => remote.state.link === "ok" && remote.state.seq > seq, 8000, "reconnection");
    expect(remote.remote!.transport.connects).toBe(2);
  });
});
