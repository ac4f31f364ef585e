/**
 * CommandOutbox, the one merge-and-hold-back of every host: a change is written into the mailbox at
 * once unless an ordered request is on its way, then held and written by `release`; `taken` says
 * when the core took the last write and nothing is held (a merging body starts a new merge then).
 */
import { describe, expect, it } from "vitest";
import { copyTny360Commands, mergeGait, mergeVelocity, Tny360Commands } from "../../src/bodies/tny360/commands.js";
import { TNY360_COMMAND_HEADER as H, TNY360_COMMAND_KEY as KEY, TNY360_COMMAND_LAYOUT } from "../../src/bodies/tny360/layout.js";
import { CommandOutbox } from "../../src/host/command-outbox.js";
import { Mailbox, mailboxBytes } from "../../src/shm/mailbox.js";

function rig() {
  const buffer = new SharedArrayBuffer(mailboxBytes(TNY360_COMMAND_LAYOUT));
  const core = new Mailbox(TNY360_COMMAND_LAYOUT, buffer, 0);
  let ordering = false;
  const out = new CommandOutbox(new Mailbox(TNY360_COMMAND_LAYOUT, buffer, 0), new Tny360Commands(), copyTny360Commands, () => ordering);
  const got = new Tny360Commands();
  const take = (): number => core.take((slot) => copyTny360Commands(slot, got));
  return { out, got, take, order: (on: boolean) => (ordering = on) };
}

describe("CommandOutbox", () => {
  it("writes each change at once; the core takes the newest merge; taken once it did", () => {
    const { out, got, take } = rig();
    expect(out.taken).toBe(true);
    mergeGait(out.merged, 2);
    out.post();
    expect(out.taken).toBe(false); // written, not taken yet
    mergeVelocity(out.merged, 0.1, 0, 0, false);
    out.post();
    expect(take()).not.toBe(0);
    expect(got.header[H.keys]).toBe(KEY.gait | KEY.velocity); // one merge, both keys
    expect(out.taken).toBe(true);
    expect(take()).toBe(0); // nothing new
  });

  it("holds the writes back while an ordered request is on its way, and writes them on release", () => {
    const { out, got, take, order } = rig();
    order(true);
    mergeGait(out.merged, 1);
    out.post();
    expect(take()).toBe(0); // held: the request goes first
    expect(out.taken).toBe(false);
    mergeVelocity(out.merged, 0.2, 0, 0, true);
    out.post();
    order(false);
    out.release();
    expect(take()).not.toBe(0);
    expect(got.gait[0]).toBe(1);
    expect(got.velocity[0]).toBeCloseTo(0.2, 6);
    out.release(); // nothing held: no second write
    expect(take()).toBe(0);
  });
});
