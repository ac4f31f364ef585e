/**
 * Tny360Robot.applyValidated in simulated time: what a threaded core does with the TNY-360 mailbox
 * its host filled (test/tny/host-mailbox.test.ts runs the whole path). Under the holder's
 * generation every key applies, in the mailbox's order, and the velocity is then owned by the
 * holder (its lease ending clears it); an ended lease's or a latched robot's commands are dropped
 * and counted (errors.staleCommands) and change nothing.
 */
import { describe, expect, it } from "vitest";
import { Tny360Commands } from "../../src/bodies/tny360/commands.js";
import { TNY360_COMMAND_FLAG, TNY360_COMMAND_HEADER as H, TNY360_COMMAND_KEY as KEY } from "../../src/bodies/tny360/layout.js";
import { GaitType } from "../../src/wire/tny/constants.js";
import { simRig } from "./helpers.js";

function commands(keys: number, generation: number): Tny360Commands {
  const c = new Tny360Commands();
  c.header[H.keys] = keys;
  c.header[H.generation] = generation;
  return c;
}

describe("Tny360Robot.applyValidated (the TNY-360 mailbox in the core)", () => {
  it("applies every key under the holder's generation; the velocity belongs to the holder's lease", async () => {
    const rig = await simRig();
    const lease = rig.lease();
    const c = commands(KEY.gait | KEY.enabledMask | KEY.velocity | KEY.joints, rig.robot.authority.generation);
    c.gait[0] = GaitType.Run;
    c.enabledMask[0] = 0x3000; // the ears only
    c.velocity.set([0.2, 0, 0]);
    c.header[H.flags] = TNY360_COMMAND_FLAG.velocityClearsOverrides; // cleared first, then the override below applies
    c.header[H.joints] = 1 << 12;
    c.jointRad[12] = 0.5;
    expect(rig.robot.applyValidated(c, c.header[H.generation]!)).toBe(true);
    rig.run(20);
    const s = rig.robot.state;
    expect(s.body.gait).toBe(GaitType.Run);
    expect(s.body.enabledMask).toBe(0x3000);
    expect(s.joints.targetRad[12]).toBe(Math.fround(0.5));
    expect(rig.robot.health().errors.staleCommands).toBe(0);
    // the velocity was commanded under the lease: releasing it clears the velocity at once (the lease rule)
    const clears = rig.robot.health().errors.velocityClears!;
    rig.robot.authority.release(lease);
    rig.run(5);
    expect(rig.robot.health().errors.velocityClears).toBe(clears + 1);
  });

  it("drops (and counts) the commands of an ended lease and while latched; nothing changes", async () => {
    const rig = await simRig();
    rig.lease();
    const old = rig.robot.authority.generation;
    rig.robot.authority.revoke();
    rig.lease(); // a new lease: the old generation is stale
    const c = commands(KEY.gait, old);
    c.gait[0] = GaitType.Creep;
    expect(rig.robot.applyValidated(c, old)).toBe(false);
    rig.robot.estop({ source: "test", reason: "latched" });
    const now = rig.robot.authority.generation;
    expect(rig.robot.applyValidated(c, now)).toBe(false);
    rig.run(20);
    expect(rig.robot.state.body.gait).toBe(GaitType.Walk);
    expect(rig.robot.health().errors.staleCommands).toBe(2);
  });
});
