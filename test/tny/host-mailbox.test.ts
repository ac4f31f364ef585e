/**
 * The TNY-360 host's command mailbox against the real threaded core (src/host/tny360-host.ts,
 * src/rt/tny360-worker.ts): commands validated on the main thread, merged while the core has not
 * taken them, applied at its next cycle. The core is blocked (the test hook) while the commands
 * are posted, so they all land in one merge, deterministically: every kind takes effect, and a
 * velocity that clears the joint overrides clears the ones posted before it, not the ones after.
 * The main thread's answers are the in-thread robot's (refusals with the same codes and counts).
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Tny360Host } from "../../src/host/tny360-host.js";
import { GaitType } from "../../src/wire/tny/constants.js";

const f32 = (v: number): number => Math.fround(v);
const DEFAULT_POSTURE = { xM: 0, yM: 0, zM: 0.12, rxRad: 0, ryRad: 0, rzRad: 0 };

async function eventually(ok: () => boolean, what: string, ms = 10_000): Promise<void> {
  const t0 = Date.now();
  while (!ok()) {
    if (Date.now() - t0 > ms) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

describe("TNY-360 host: typed commands through the mailbox", () => {
  let host: Tny360Host;
  let lease: string;
  const dir = mkdtempSync(join(tmpdir(), "bodylink-mailbox-"));
  const release = join(dir, "release");
  /**
   * Block the core until `cycling()` (the hook's bound only ends a test that never gets there);
   * resolves once its thread is blocked (the hook says so). A fixed 600 ms stall could end before a
   * loaded machine had delivered that news, and the batch then spanned two merges.
   */
  const blocked = (): Promise<void> => {
    rmSync(release, { force: true });
    return host.testStallCore(60_000, release);
  };
  /** Ends the stall; the core cycles again, and the watchdog knows it (health answers from the core, not its last report). */
  const cycling = async (): Promise<void> => {
    writeFileSync(release, "");
    const c0 = host.cycles;
    await eventually(() => host.cycles > c0 + 2 && !host.stalled, "the core cycling again");
  };

  beforeAll(async () => {
    host = await Tny360Host.start({ seed: 2, remote: null, server: null, testStalls: true });
    await eventually(() => host.state.valid, "a state");
    const l = await host.authority.acquire("mailbox-test", "api", 60_000);
    if (!l.ok) throw new Error("no lease");
    lease = l.lease.id;
  }, 60_000);
  afterAll(async () => {
    writeFileSync(release, "");
    await host?.shutdown();
    rmSync(dir, { recursive: true, force: true });
  });

  it("every kind posted within one merge takes effect (enable bits, gait, posture, joint overrides, velocity)", async () => {
    await blocked();
    const cycles = host.cycles;
    expect(host.setEnabledMask(lease, 0x3fff)).toEqual({ ok: true, forwarded: false });
    expect(host.setGait(lease, "Run").ok).toBe(true);
    expect(host.setPosture(lease, { ...DEFAULT_POSTURE, zM: 0.15 }, false).ok).toBe(true);
    expect(host.setJointAngle(lease, 12, 0.3).ok).toBe(true);
    expect(host.setJointAngle(lease, 13, 0.2).ok).toBe(true);
    expect(host.setVelocity(lease, 0.2, 0, 0, false).ok).toBe(true);
    expect(host.cycles).toBe(cycles); // all answered while the core ran no cycle
    await cycling();
    await eventually(() => host.state.joints.targetRad[12] === f32(0.3), "the ear override");
    expect(host.state.joints.targetRad[13]).toBe(f32(0.2)); // both single-joint overrides survived the merge
    expect(host.state.body.gait).toBe(GaitType.Run);
    expect(host.state.body.enabledMask).toBe(0x3fff);
    expect(host.state.body.posturePositionM[2]).toBe(f32(0.15));
    expect((await host.health()).errors.staleCommands).toBe(0);
  });

  it("a velocity that clears the overrides clears those posted before it, not those after it", async () => {
    // leg joints: without an override their targets are the gait's again (the ears keep their last one)
    const hip = host.state.joints.targetRad[1]! + 0.05;
    const knee = host.state.joints.targetRad[2]! + 0.05;
    await blocked();
    expect(host.setJointAngle(lease, 1, hip).ok).toBe(true);
    expect(host.setVelocity(lease, 0.1, 0, 0, true).ok).toBe(true); // clears 1's override
    expect(host.setJointAngle(lease, 2, knee).ok).toBe(true); // after the clear: stays
    await cycling();
    await eventually(() => host.state.joints.targetRad[2] === f32(knee), "the later override");
    expect(host.state.joints.targetRad[1]).not.toBe(f32(hip));
  });

  it("refuses on the main thread with the in-thread answers, counted in health like the core's", async () => {
    const before = (await host.health()).errors;
    const far = host.setJointAngle(lease, 2, 3.5); // knee max is 150°
    expect(far).toMatchObject({
      ok: false,
      status: 3,
      error: { code: "BL_ERR_CMD_INVALID", message: "invalid command: joint.setAngle: out of range or unreachable (the robot keeps its previous target)" },
    });
    const nan = host.setVelocity(lease, Number.NaN, 0, 0);
    expect(nan).toMatchObject({ ok: false, status: 3, error: { code: "BL_ERR_CMD_INVALID" } });
    expect(host.setVelocity(lease, 1.5, 0, 0)).toMatchObject({ ok: false, status: 3, error: { code: "BL_ERR_CMD_INVALID" } }); // beyond 1 m/s
    expect(host.setJointAngles(lease, [0, 0, 0])).toMatchObject({ ok: false, status: 3, error: { code: "BL_ERR_CMD_INVALID" } });
    expect(host.setGait(lease, 7)).toMatchObject({ ok: false, status: 3 });
    expect(host.setVelocity("not-the-lease", 0.1, 0, 0)).toMatchObject({ ok: false, status: 4, error: { code: "BL_ERR_AUTH_HELD" } });
    const after = (await host.health()).errors;
    expect(after.invalidCommands! - before.invalidCommands!).toBe(5);
    expect(after.refusedCommands! - before.refusedCommands!).toBe(1);
  });

  it("the commands of a lease that ended before the core took them are dropped and counted", async () => {
    await blocked();
    expect(host.setGait(lease, "Creep").ok).toBe(true);
    // revokes the lease at the core's next cycle, before the mailbox is read (it may answer 503 first: the core is blocked)
    const stop = host.estop({ source: "test", reason: "drop it", category: 1 }).catch(() => undefined);
    await cycling();
    await stop;
    await eventually(() => host.authority.holder() === null && host.state.body.gait === GaitType.Run, "the lease revoked");
    expect((await host.health()).errors.staleCommands).toBe(1);
    expect(host.state.body.gait).toBe(GaitType.Run); // never Creep
    await host.resetEstop({ source: "test", reason: "done" });
  });
});
