import { defineConfig } from "vitest/config";

/** The one file whose assertions are the real-time core's counters under hostile load (it says why it runs alone). */
const REALTIME = ["test/rt/isolation.test.ts"];
/**
 * The fleet e-stop under a 90k/s flood: its 500 ms bound is the issue's, measured by the runtimes'
 * own latches. Alone at a load average of 19-27 it latched in 6-160 ms; beside test/fleet/fleet.test.ts
 * (three more serve processes and CLI runs) 849 ms once. Its own group, after the real-time one.
 */
const FLOOD = ["test/fleet/flood.test.ts"];

/** Files under test/dashboard/ that start no browser (the page's pure modules), by name: with the rest, not after it. */
const NO_BROWSER = ["store"];

/**
 * The contract suites (the NAO's LoLA bytes and arbitration, the robot API and its stream, the P7
 * runtime's rules and its threaded core, every body's recording as strict MCAP), run a second
 * time on the MuJoCo bodies (test/support/test-sim.ts): a user who picks `--sim physics` gets the
 * same contracts. About 1.6x their kinematic time (a NAO physics cycle costs ~0.4 ms, a P7's ~0.07 ms).
 */

/**
 * Files that start nothing (no server, process, thread, socket or browser; no environment, timers or
 * mocks of their own): pure codecs, tables, kinematics, properties. They share their worker's process
 * (isolate: false), so each does not pay a fork, vitest's set-up and its imports again: these 45
 * alone, 25.6-28.1 s isolated against 15.9-16.1 s shared (load ~3.3, alternating runs); 8 more
 * (robots on a SimClock, the fleet's broker config and gate, state records, record layouts)
 * 3.7-3.9 s, 5.8-6.0 s of CPU isolated against 2.8-2.9 s, 4.3-4.4 s shared (load ~2.5); 2 more
 * (docs/protocol/tny360.md's table, docs/p7.md's example on a SimClock, never started). Not here:
 * a file that counts bytes allocated by code other files here also run (test/record/tap-alloc: its
 * RecordTap, run first by test/record/body-state-record with other clocks and states, allocated in
 * a full run; test/shm/ring; test/sim/nao-physics). A file that starts something belongs in the
 * node project (the default for a new file), or in OWN_PROCESS when it counts its process's own
 * allocation or heap.
 */
const UNIT = [
  "test/api/echo-pose.test.ts",
  "test/api/properties.test.ts",
  "test/api/published-types.test.ts",
  "test/bench-ab.test.ts",
  "test/bodies/kind-literals.test.ts",
  "test/bodies/models.test.ts",
  "test/bodies/safety.test.ts",
  "test/cli/core-flags.test.ts",
  "test/cli/serve-help.test.ts",
  "test/client/messages-types.test.ts",
  "test/comments.test.ts",
  "test/dashboard/store.test.ts",
  "test/errors.test.ts",
  "test/fleet/broker-config.test.ts",
  "test/fleet/gate.test.ts",
  "test/fleet/sign.test.ts",
  "test/host/command-outbox.test.ts",
  "test/layout.test.ts",
  "test/lola/command-message.test.ts",
  "test/lola/command-reader.test.ts",
  "test/lola/sensor-message.test.ts",
  "test/lola/sensor-reader.test.ts",
  "test/nao/chestboard-frame.test.ts",
  "test/nao/kinematics.test.ts",
  "test/nao/link.test.ts",
  "test/nao/mjcf.test.ts",
  "test/nao/robot.test.ts",
  "test/nao/units.test.ts",
  "test/p7/commands.test.ts",
  "test/p7/docs-example.test.ts",
  "test/p7/kinematics.test.ts",
  "test/p7/mjcf.test.ts",
  "test/p7/sim.test.ts",
  "test/p7/snapshot.test.ts",
  "test/record/body-state-record.test.ts",
  "test/record/info-growing.test.ts",
  "test/record/layouts.test.ts",
  "test/record/record.test.ts",
  "test/record/viewer-3d.test.ts",
  "test/record/viewer-schema.test.ts",
  "test/rt/host-watch.test.ts",
  "test/runtime/sim-time.test.ts",
  "test/serve/logger.test.ts",
  "test/shm/mailbox.test.ts",
  "test/shm/state-channel.test.ts",
  "test/sim/tny360-physics.test.ts",
  "test/tny/apply-validated.test.ts",
  "test/tny/docs.test.ts",
  "test/tny/kinematics-pinned.test.ts",
  "test/tny/kinematics.test.ts",
  "test/tny/mjcf.test.ts",
  "test/tny/sim-trace.test.ts",
  "test/tny/sim.test.ts",
  "test/tny/typed-commands.test.ts",
  "test/tny/wire.test.ts",
  "test/verify/pcap.test.ts",
];

/**
 * Files that start servers, threads or processes, like the rest of the node project, but whose
 * assertions count what their own process allocated or holds (live heap growth, bytes per cycle,
 * V8's view of an object), so another file's leftovers in a shared process would be counted too:
 * each in a process of its own (shared, test/runtime.test.ts counted 352 KB of live heap growth
 * against its 300 KB bound and test/record/tap-alloc.test.ts a cycle that allocated).
 */
const OWN_PROCESS = [
  "test/clock-wake.test.ts",
  "test/lola/command-reader-packed.test.ts",
  "test/record/chunk-bound.test.ts",
  "test/record/tap-alloc.test.ts",
  "test/rt/core-alloc.test.ts",
  "test/runtime.test.ts",
  "test/shm/layout-fast.test.ts",
  "test/shm/ring.test.ts",
  "test/sim/nao-physics.test.ts",
  "test/sim/p7-physics.test.ts",
];

const PHYSICS_CONTRACTS = [
  "test/lola/server.test.ts",
  "test/api/server.test.ts",
  "test/api/stream.test.ts",
  "test/p7/robot.test.ts",
  "test/api/threaded.test.ts",
  "test/record/strict-mcap.test.ts",
];

export default defineConfig({
  test: {
    testTimeout: 20_000,
    hookTimeout: 20_000,
    // Real sockets and servers: keep files in separate forks, two at a time (CI has 2 cores).
    pool: "forks",
    maxWorkers: 2,
    reporters: ["default"],
    // Simulated bodies on the kinematic mechanics unless a test asks for physics (`sim: "physics"`,
    // `--sim physics`, the physics project): `serve`'s default is MuJoCo, whose NAO cycle costs ~10x
    // the kinematic one's CPU, and most files test contracts, not mechanics. Spawned CLIs inherit it;
    // the tests of the default itself delete it (test/cli/sim-default.test.ts).
    env: { BODYLINK_SIM: "kinematic" },
    // dist/ fresh before any file runs (the CLI runs from it; test/package.test.ts imports it; an
    // in-process runtime's core worker loads it: BODYLINK_CORE_FROM_DIST, set there when fresh);
    // then one line per missing system package (chromium, nats-server), once per run.
    globalSetup: ["test/support/build-dist.ts", "test/support/report-skips.ts"],
    projects: [
      {
        // The real-time core under hostile load, alone on the machine: its counters must be zero
        // "caused by these loads", and on 2 cores another file's chromium, tsc or real-time thread
        // is a load of its own (CI once counted 1 late cycle there with everything else running).
        // Its own group (one file), before the rest.
        extends: true,
        test: { name: "realtime", include: REALTIME, sequence: { groupOrder: 0 } },
      },
      {
        // The flood test (see FLOOD): a 90k/s flood is a load of its own on everything beside it, too.
        extends: true,
        test: { name: "flood", include: FLOOD, sequence: { groupOrder: 1 } },
      },
      {
        // Files that start servers, threads and processes share their worker's process, one file
        // after another (isolate: false): each file stops what it started, and a fork per file cost
        // its start and the imports again (the node project alone: 200 s isolated against 178 s
        // shared, 305 s of CPU against 251 s; the imports 32.8 s against 7.2 s).
        extends: true,
        test: {
          name: "node",
          include: ["test/**/*.test.ts"],
          exclude: [`test/dashboard/!(${NO_BROWSER.join("|")}).test.ts`, ...REALTIME, ...FLOOD, ...UNIT, ...OWN_PROCESS],
          isolate: false,
          sequence: { groupOrder: 2 },
        },
      },
      {
        extends: true,
        test: { name: "own-process", include: OWN_PROCESS, sequence: { groupOrder: 2 } },
      },
      {
        extends: true,
        test: { name: "unit", include: UNIT, isolate: false, sequence: { groupOrder: 2 } },
      },
      {
        extends: true,
        test: { name: "physics", include: PHYSICS_CONTRACTS, env: { BODYLINK_TEST_SIM: "physics" }, sequence: { groupOrder: 2 } },
      },
      {
        // The browser test starts chromium, which takes a core: run it after the rest, so timing
        // tests (the 20 Hz stream rate) never share the machine with it.
        extends: true,
        test: { name: "browser", include: ["test/dashboard/**/*.test.ts"], exclude: NO_BROWSER.map((f) => `test/dashboard/${f}.test.ts`), sequence: { groupOrder: 3 } },
      },
    ],
  },
});
