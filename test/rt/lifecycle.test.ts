/**
 * One lifecycle script, run on every body of the registry through the one wrapper (src/rt/
 * lifecycle.ts): start, stop, start again, a driver error in read and one in write (each ends
 * unconfigured, link lost, the cycle stopped, the body in its safe state), start after each, and
 * shutdown (finalized: start refuses). The driver is the body's own simulator driver behind a
 * proxy that can be told to throw.
 */
import { describe, expect, it } from "vitest";
import { BODY_KINDS, type BodyKind } from "../../src/bodies/registry.js";
import { ChestboardDriver } from "../../src/drivers/nao/chestboard.js";
import { P7SimDriver } from "../../src/drivers/p7/sim.js";
import { TnySimDriver } from "../../src/drivers/tny360/driver.js";
import { BodylinkError } from "../../src/errors.js";
import type { Lifecycle } from "../../src/rt/lifecycle.js";
import { SimClock } from "../../src/runtime/clock.js";
import { NaoRobot } from "../../src/runtime/nao-robot.js";
import { P7Robot } from "../../src/runtime/p7-robot.js";
import type { RobotHealth } from "../../src/runtime/robot.js";
import { Tny360Robot } from "../../src/runtime/tny360-robot.js";
import { SimChestboard } from "../../src/sim/nao/chestboard.js";
import type { CoreHost } from "../../src/host/core-host.js";
import { NaoHost } from "../../src/host/nao-host.js";
import { P7Host } from "../../src/host/p7-host.js";
import { Tny360Host } from "../../src/host/tny360-host.js";

interface Faults {
  read: boolean;
  write: boolean;
  /** Times the wrapper asked the driver for the body's safe state. */
  deactivations: number;
}

/** The driver, except that read/write throw while the fault is set; counts deactivations. */
function faulty<T extends object>(driver: T, faults: Faults): T {
  return new Proxy(driver, {
    get(target, key) {
      if (key === "read" && faults.read)
        return () => {
          throw new Error("injected read fault");
        };
      if (key === "write" && faults.write)
        return () => {
          throw new Error("injected write fault");
        };
      if (key === "deactivate") {
        return () => {
          faults.deactivations++;
          return (target as { deactivate(): Promise<void> }).deactivate();
        };
      }
      const v = Reflect.get(target, key, target);
      return typeof v === "function" ? v.bind(target) : v;
    },
  });
}

interface Rig {
  lifecycle: Lifecycle<unknown, unknown>;
  health(): RobotHealth;
  /** A number that moves on every fresh state. */
  seq(): number;
  /** What the body shows of its safe state (NAO: stiffness 0 sent; quadruped: velocity 0; arm: holds, see P7SimDriver.deactivate). */
  safe(): boolean;
  /** Make the body move (so that its safe state is a change). */
  command(): void;
  start(): Promise<void>;
  stop(): Promise<void>;
  shutdown(): Promise<void>;
}

const rigs: Record<BodyKind, (clock: SimClock, faults: Faults) => Promise<Rig>> = {
  async nao(clock, faults) {
    const sim = new SimChestboard({ clock });
    const r = await NaoRobot.create({ clock, driver: faulty(new ChestboardDriver({ transport: sim }), faults) });
    return {
      lifecycle: r.lifecycle as Lifecycle<unknown, unknown>,
      health: () => r.health(),
      seq: () => r.state.seq,
      safe: () => r.state.stiffness.every((v) => v === 0),
      command: () => {
        const l = r.authority.acquire("test", "api", 60_000);
        if (l.ok) r.command(l.lease.id, { Stiffness: new Array(25).fill(1) });
      },
      start: () => r.start(),
      stop: () => r.stop(),
      shutdown: () => r.shutdown(),
    };
  },
  async p7(clock, faults) {
    const d = new P7SimDriver();
    const r = await P7Robot.create({ clock, driver: faulty(d, faults) });
    return {
      lifecycle: r.lifecycle as Lifecycle<unknown, unknown>,
      health: () => r.health(),
      seq: () => r.state.seq,
      safe: () => r.authority.holder() === null,
      command: () => {
        const l = r.authority.acquire("test", "api", 60_000);
        if (l.ok) r.servoJoints(l.lease.id, [0.5, 0, 0, 0, 0, 0, 0]);
      },
      start: () => r.start(),
      stop: () => r.stop(),
      shutdown: () => r.shutdown(),
    };
  },
  async tny360(clock, faults) {
    const d = new TnySimDriver({ clock });
    let simMs = 0;
    const r = await Tny360Robot.create({ clock, driver: faulty(d, faults) });
    return {
      lifecycle: r.lifecycle as Lifecycle<unknown, unknown>,
      health: () => r.health(),
      seq: () => r.state.seq,
      safe: () => {
        // what the body does next: its 30 Hz decision loop takes the cleared velocity within 50 ms
        // (ticks on time of their own, after every tick the simulator has seen)
        simMs = Math.max(simMs, clock.nowMs());
        for (let i = 0; i < 10; i++) {
          simMs += 5;
          d.sim.cycle(simMs);
        }
        return d.sim.state.body.targetVelocity.every((x) => x === 0);
      },
      command: () => {
        const l = r.authority.acquire("test", "api", 60_000);
        if (l.ok) r.setVelocity(l.lease.id, 0.1, 0, 0);
      },
      start: () => r.start(),
      stop: () => r.stop(),
      shutdown: () => r.shutdown(),
    };
  },
};

describe.each(BODY_KINDS)("lifecycle of %s through the one wrapper", (kind) => {
  it("start, stop, start again, a driver error in read and in write, shutdown: each ends in the documented state", async () => {
    const clock = new SimClock();
    const faults: Faults = { read: false, write: false, deactivations: 0 };
    const b = await rigs[kind](clock, faults);
    const running = async () => {
      const s0 = b.seq();
      await clock.advance(100);
      return b.seq() > s0;
    };

    await b.start();
    expect(b.lifecycle.state).toBe("active");
    expect(await running()).toBe(true);
    expect(b.health().link).toBe("ok");

    b.command();
    await clock.advance(50);
    expect(b.safe()).toBe(false); // moving
    await b.stop();
    expect(faults.deactivations).toBe(1);
    expect(b.lifecycle.state).toBe("unconfigured");
    expect(b.health().link).toBe("stopped");
    expect(b.lifecycle.loop.running).toBe(false);
    expect(b.safe()).toBe(true);
    expect(await running()).toBe(false);

    await b.start(); // restart configures the link anew
    expect(b.lifecycle.state).toBe("active");
    expect(await running()).toBe(true);

    for (const where of ["read", "write"] as const) {
      b.command();
      await clock.advance(50);
      const before = faults.deactivations;
      faults[where] = true;
      await clock.advance(50);
      await b.lifecycle.settled();
      expect(b.lifecycle.state, where).toBe("unconfigured");
      expect(b.lifecycle.lastError, where).toMatch(new RegExp(`${where} failed: injected ${where} fault`));
      expect(b.health().link, where).toBe("lost");
      expect(b.lifecycle.loop.running, where).toBe(false);
      expect(faults.deactivations, where).toBe(before + 1);
      expect(b.safe(), where).toBe(true);
      faults[where] = false;
      expect(await running(), where).toBe(false); // nothing cycles until start()
      await b.start();
      expect(b.lifecycle.state, where).toBe("active");
      expect(await running(), where).toBe(true);
      expect(b.health().link, where).toBe("ok");
    }
    expect(b.lifecycle.driverErrors).toBe(2);

    await b.shutdown();
    expect(b.lifecycle.state).toBe("finalized");
    expect(b.health().link).toBe("stopped");
    await expect(b.start()).rejects.toSatisfy((e) => e instanceof BodylinkError && e.code === "BL_ERR_BODY_FINALIZED");
    await b.shutdown(); // idempotent
    expect(b.lifecycle.timing.configureMs).toBeGreaterThanOrEqual(0);
  });
});

/**
 * The same script on every body's threaded core (src/rt/<body>-worker.ts, the one shared runner),
 * driven from its host the way `serve` drives it: the lifecycle runs in the worker, the driver
 * faults are the worker's test hook (testFaults), what the host sees is its mirror and the core's
 * answers. Real time: "running" waits (up to 10 s) for the core's cycle count to move; "not
 * running" checks it stays put over 150 ms while the core says its loop is stopped.
 */
interface HostRig {
  host: CoreHost;
  command(): Promise<void>;
  /** The body's safe state as the host's mirror shows it (waits up to 5 s for it). */
  safe(): Promise<boolean>;
}

const hostRigs: Record<BodyKind, () => Promise<HostRig>> = {
  async nao() {
    const h = await NaoHost.start({ seed: 1, usb: false, acceptBoardVersions: [11], gcEveryMs: 0, lola: null, testFaults: true });
    return {
      host: h,
      command: async () => {
        const l = await h.authority.acquire("test", "api", 60_000);
        if (l.ok) h.command(l.lease.id, { Stiffness: new Array(25).fill(1) });
      },
      safe: () => eventually(() => h.state.stiffness.every((v) => v === 0)),
    };
  },
  async p7() {
    const h = await P7Host.start({ seed: 1, gcEveryMs: 0, testFaults: true });
    return {
      host: h,
      command: async () => {
        const l = await h.authority.acquire("test", "api", 60_000);
        if (l.ok) h.servoJoints(l.lease.id, [0.5, 0, 0, 0, 0, 0, 0]);
      },
      safe: () => eventually(() => h.authority.holder() === null),
    };
  },
  async tny360() {
    const h = await Tny360Host.start({ seed: 1, remote: null, server: null, gcEveryMs: 0, testFaults: true });
    return {
      host: h,
      command: async () => {
        const l = await h.authority.acquire("test", "api", 60_000);
        if (l.ok) h.setVelocity(l.lease.id, 0.1, 0, 0);
      },
      // what the body does next: its 30 Hz decision loop takes the cleared velocity within 50 ms
      // (ticks of its own while the cycle is stopped, as the in-thread script does)
      safe: async () => {
        if (!(await h.lifecycle()).running) await h.simulatorTicks(50);
        return eventually(() => h.state.body.targetVelocity.every((x) => x === 0));
      },
    };
  },
};

async function eventually(ok: () => boolean | Promise<boolean>, ms = 5000): Promise<boolean> {
  const t0 = Date.now();
  while (!(await ok())) {
    if (Date.now() - t0 > ms) return false;
    await new Promise((r) => setTimeout(r, 10));
  }
  return true;
}

describe.each(BODY_KINDS)("lifecycle of %s in its threaded core", (kind) => {
  it("start, stop, start again, a driver error in read and in write, finalize: each ends in the documented state", async () => {
    const { host: h, command, safe } = await hostRigs[kind]();
    try {
      const running = async () => {
        const c0 = h.cycles;
        return eventually(() => h.cycles > c0 + 2, 10_000);
      };
      const idle = async () => {
        const c0 = h.cycles;
        await new Promise((r) => setTimeout(r, 150));
        return h.cycles === c0 && !(await h.lifecycle()).running;
      };
      // started by start(): active and cycling
      expect((await h.lifecycle()).state).toBe("active");
      expect(await running()).toBe(true);
      const link = async () => (await h.health()).link;
      expect(await link()).toBe("ok");

      await command();
      expect(await eventually(() => h.authority.holder() !== null)).toBe(true);
      await h.stop();
      expect((await h.lifecycle()).state).toBe("unconfigured");
      expect(await link()).toBe("stopped");
      expect(await idle()).toBe(true);
      expect(await safe()).toBe(true);

      await h.start(); // restart configures the link anew
      expect((await h.lifecycle()).state).toBe("active");
      expect(await running()).toBe(true);

      for (const where of ["read", "write"] as const) {
        await command();
        await running();
        await h.injectDriverFault({ read: where === "read", write: where === "write" });
        expect(await eventually(async () => (await h.lifecycle()).state === "unconfigured", 10_000), `${where} fault taken`).toBe(true);
        await h.settled();
        const lc = await h.lifecycle();
        expect(lc.lastError, where).toMatch(new RegExp(`${where} failed: injected ${where} fault`));
        expect(await link(), where).toBe("lost");
        expect(lc.running, where).toBe(false);
        expect(await safe(), where).toBe(true);
        await h.injectDriverFault({ read: false, write: false });
        expect(await idle(), where).toBe(true); // nothing cycles until start()
        await h.start();
        expect((await h.lifecycle()).state, where).toBe("active");
        expect(await running(), where).toBe(true);
        expect(await eventually(async () => (await link()) === "ok"), where).toBe(true);
      }
      expect((await h.lifecycle()).driverErrors).toBe(2);

      await h.finalize();
      expect((await h.lifecycle()).state).toBe("finalized");
      expect(await link()).toBe("stopped");
      await expect(h.start()).rejects.toSatisfy((e) => e instanceof BodylinkError && e.code === "BL_ERR_BODY_FINALIZED");
      expect((await h.lifecycle()).timing.configureMs).toBeGreaterThanOrEqual(0);
    } finally {
      await h.shutdown();
    }
  }, 90_000);
});
