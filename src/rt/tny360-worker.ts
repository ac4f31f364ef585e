/**
 * The TNY-360's real-time core in its own worker thread (src/rt/core-worker.ts does the threading;
 * src/host/tny360-host.ts is the other side): the driver (simulator, or a real robot over its
 * WebSocket API), the 5 ms cycle, the velocity safety, the lease rule, the e-stop, and by default
 * the TNY-360 API server (:5621): its clients' commands reach the body on this thread, without a
 * hop through the main thread (docs/architecture.md, "Servers in the core's thread"; measured: docs/performance.md).
 * Dying, it sets the body's velocity to 0 (synchronous on the simulator; a real robot gets 200 ms).
 */
import { TnySimDriver, tny360PhysicsModel } from "../drivers/tny360/driver.js";
import { RecordTap } from "../record/tap.js";
import { MonotonicClock } from "../runtime/clock.js";
import { Tny360Robot } from "../runtime/tny360-robot.js";
import { startTnyServer } from "../serve/tny/server.js";
import { ByteRing } from "../shm/ring.js";
import { tny360StateChannel } from "../shm/tny360-state.js";
import { copyTny360Commands, Tny360Commands } from "../bodies/tny360/commands.js";
import { copyTny360State } from "../bodies/tny360/state.js";
import { TNY360_COMMAND_HEADER, TNY360_COMMAND_LAYOUT } from "../bodies/tny360/layout.js";
import type { ShmViews } from "../shm/layout.js";
import { Mailbox } from "../shm/mailbox.js";
import type { Tny360CoreOptions, Tny360Ready, Tny360Requests } from "./core-options.js";
import { CTL } from "./core-shm.js";
import { coreClock, runCore } from "./core-worker.js";

/** Requests since the previous cycle's gap from which that gap serves its clients to the end (800 a second at 5 ms). */
const BUSY_REQUESTS_PER_CYCLE = 4;
/**
 * The API server takes no new frame this close to the next deadline (they wait for the cycle): a
 * client flooding it must not make the cycle start late (measured: `npm run bench -- isolation`,
 * the TNY-360 flood). A frame takes ~10-50 µs here; the lead covers the turn it lands in.
 */
const SERVE_GUARD_MS = 0.5;

/** Recording: this thread is its ring's one producer (the state of every cycle, late cycles). */
let tap: RecordTap | null = null;

runCore<Tny360Robot, Tny360CoreOptions, Tny360Requests, Tny360Ready, { tnyPort: number }>({
  channel: (buffer, start, ctl) => {
    const ch = tny360StateChannel(buffer, start, ctl, CTL.stateSeq);
    return { publish: (r) => ch.publish(r) };
  },
  create: async (o, wrap) => {
    // Sockets on this thread (the TNY-360 API server's clients, a real robot's link) are served
    // between cycles: "wait" blocks only the last ~1 ms of each gap; without them one futex wait per cycle.
    const clock = coreClock(o, o.server || o.remote ? "wait" : undefined);
    tap = o.recordRing ? new RecordTap(new ByteRing(o.recordRing), clock) : null;
    const common = { youngGcEveryMs: o.gcEveryMs, clock };
    if (o.remote) return Tny360Robot.create({ host: o.remote.host, port: o.remote.port, ...common });
    // MuJoCo loads on this thread: the physics steps in the core's cycle
    const model = o.sim === "physics" ? { model: await tny360PhysicsModel() } : {};
    if (!o.testFaults) return Tny360Robot.create({ seed: o.seed, ...(model.model ? { simModel: model.model } : {}), ...common });
    return Tny360Robot.create({ driver: wrap(new TnySimDriver({ seed: o.seed, clock, ...model })), ...common });
  },
  // The command mailbox (the host validated what is in it): the newest merge at the start of each cycle.
  input(buffer, start) {
    const mailbox = new Mailbox(TNY360_COMMAND_LAYOUT, buffer, start);
    // Copied here first (made once: the cycle allocates nothing), applied only under its lease.
    const scratch = new Tny360Commands();
    const copy = (slot: ShmViews<typeof TNY360_COMMAND_LAYOUT>): void => copyTny360Commands(slot, scratch);
    return (r) => {
      if (mailbox.take(copy) !== 0) r.applyValidated(scratch, scratch.header[TNY360_COMMAND_HEADER.generation]!);
    };
  },
  // Velocity, posture, enable bits, gait and joint overrides come through the mailbox; these need the body's answer.
  handlers: {
    setLegPosition: (r, id, leg, x, y, z, clear) => r.setLegPosition(id, leg, x, y, z, clear),
    enableSmooth: (r, id) => r.enableSmooth(id),
    disableSmooth: (r, id) => r.disableSmooth(id),
    simReset: (r, id, pose) => r.simReset(id, pose),
    /**
     * Test hook (lifecycle test): what the stopped simulator would do next — `ms` of its own ticks
     * (its 30 Hz decision loop takes a cleared velocity within 50 ms) — as the in-thread test does.
     */
    testTicks: (r, ms) => {
      if (!r.sim) return false;
      const t0 = r.clock.nowMs();
      for (let i = 1; i <= ms / 5; i++) r.sim.cycle(t0 + 5 * i);
      copyTny360State(r.sim.state, r.state); // published with the answer (not through the driver: a test fault may be armed)
      return true;
    },
    testWakeCounts: (r) => (r.clock instanceof MonotonicClock ? r.clock.wakeCounts : null),
  },
  async serve(r, o, post, control) {
    const s = o.server;
    if (!s) return null;
    const opts = {
      host: s.host,
      token: s.token,
      allowHosts: s.allowHosts,
      allowOrigins: s.allowOrigins,
      onRefused: (what: string, detail: string) => post({ type: "refused", what, detail }),
      // recording: its frames go into this core's ring, beside the state of every cycle
      ...(tap ? { tap: tap.tny } : {}),
      // an e-stop the host requested since the last cycle holds for the next frame already
      beforeFrame: control.catchUp,
      mayServe: (nowMs: number) => !r.loop.running || nowMs < r.loop.nextDeadlineMs - SERVE_GUARD_MS,
    };
    const server = await startTnyServer(r, { ...opts, port: s.port }).catch((e: unknown) => {
      // Without --tny-port, a taken 5621 (another runtime) is no error: take a free port.
      if (s.fallbackToFreePort && (e as NodeJS.ErrnoException).code === "EADDRINUSE") return startTnyServer(r, { ...opts, port: 0 });
      throw e;
    });
    // A client sending request after request (a closed loop, a burst of calls each awaited) would
    // wait out the core's blocking wait before each deadline (~1 ms of every 5 ms cycle) about one
    // time in five: while one sent BUSY_REQUESTS_PER_CYCLE or more since the last gap, that gap
    // yields to the event loop instead (CPU for the spin, only while such a client is at it).
    if (r.clock instanceof MonotonicClock && r.clock.wake === "wait") {
      let seen = server.requestCount();
      r.clock.yieldWhen = () => {
        const n = server.requestCount();
        const busy = n - seen >= BUSY_REQUESTS_PER_CYCLE;
        seen = n;
        return busy;
      };
    }
    return { close: () => server.close(), facts: { tnyPort: server.port } };
  },
  afterCycle: (r, seq) => {
    if (!tap) return;
    tap.tny360State(seq, r);
    tap.lateCycles(seq, r.loop.timing.lateCycles);
  },
  ready: (r, served) => ({ source: r.source, periodMs: r.periodMs, tnyPort: served?.tnyPort ?? null }),
  transport: (r) => r.driver.name,
  link: (r) => (r.stopped ? "stopped" : r.state.link),
  safeNow: (r) => {
    r.driver.clearVelocity();
    return r.source === "sim"; // the simulator takes it now; a real robot when its answer comes
  },
  safeLater: (r) => r.driver.deactivate(),
  diedDetail: (_r, confirmed) => (confirmed ? "the body's velocity was set to 0 (its joints hold their pose)" : "the body's velocity 0 could not be confirmed"),
});
