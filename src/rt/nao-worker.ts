/**
 * The NAO's real-time core in its own worker thread (src/rt/core-worker.ts does the threading;
 * src/host/nao-host.ts is the other side): the driver (chest board, simulated or USB, or the
 * robot's own LoLA upstream), the exchange, decoding, arbitration, safety ramps and smooth motions
 * (NaoRobot), the control authority, and the LoLA server (a LoLA client's answer lands in the next
 * cycle, so it is part of the real-time path). Recording, it is the one producer of its own ring.
 *
 * Dying, it first sends the body its safe state — the last chest frame at stiffness 0,
 * synchronously on the simulator, USB gets 200 ms — then the host exits non-zero.
 */
import { ChestboardDriver, physicsNaoModel, simulatedChestboard } from "../drivers/nao/chestboard.js";
import { LolaUpstreamDriver } from "../drivers/nao/lola-upstream.js";
import { BodylinkError } from "../errors.js";
import { RecordTap, TappedChestboard } from "../record/tap.js";
import { NaoRobot } from "../runtime/nao-robot.js";
import { startLolaServer } from "../serve/lola/server.js";
import { LED_GROUP_NAMES, NaoCommands } from "../bodies/nao/commands.js";
import { NAO_COMMAND_LAYOUT } from "../bodies/nao/layout.js";
import type { ShmViews } from "../shm/layout.js";
import { Mailbox } from "../shm/mailbox.js";
import { NaoStateChannel } from "../shm/nao-state.js";
import { ByteRing } from "../shm/ring.js";
import type { ChestboardTransport } from "../transport/chestboard.js";
import { openUsbChestboard } from "../transport/usb.js";
import { NAO_CORE_SPIN_MS, type NaoCoreOptions, type NaoReady, type NaoRequests } from "./core-options.js";
import { CTL } from "./core-shm.js";
import { coreClock, runCore } from "./core-worker.js";

// Set up by create(): recording tap (this thread is its ring's one producer) and the upstream driver.
let tap: RecordTap | null = null;
let upstream: LolaUpstreamDriver | null = null;

runCore<NaoRobot, NaoCoreOptions, NaoRequests, NaoReady, { lolaPath: string | null }>({
  channel: (buffer, start, ctl) => {
    const ch = new NaoStateChannel(buffer, start, ctl, CTL.stateSeq, CTL.stateFollowers);
    return { publish: (r) => ch.publish(r.state) };
  },
  create: async (o, wrap) => {
    // One futex wait per cycle ("block"), the host's requests wake it at once. One event-loop turn
    // per cycle (before the wait) when nothing the cycle needs comes through the event loop: the
    // LoLA controller's answer is read by the cycle itself (pollCommands), the simulated chest board
    // answers synchronously. USB's transfers complete through the event loop: a turn after the
    // wait serves them before the cycle. No final spin unless --core-spin-ms asks for one
    // (NAO_CORE_SPIN_MS).
    const clock = coreClock(o, undefined, o.usb, NAO_CORE_SPIN_MS);
    tap = o.recordRing ? new RecordTap(new ByteRing(o.recordRing), clock) : null;
    upstream = o.upstream ? new LolaUpstreamDriver({ path: o.upstream.path, clock, tap: tap?.lolaUpstream ?? null, ...(o.upstream.stallMs ? { stallMs: o.upstream.stallMs } : {}) }) : null;
    const t = tap;
    const tapped = (x: ChestboardTransport): ChestboardTransport => (t ? new TappedChestboard(x, t) : x);
    const model = !o.usb && o.sim === "physics" ? await physicsNaoModel() : undefined;
    const sim = o.usb || o.upstream ? null : simulatedChestboard({ seed: o.seed, clock, ...(model ? { model } : {}) });
    const transport = sim ? tapped(sim) : async () => tapped(await openUsbChestboard());
    return NaoRobot.create({
      clock,
      ...(sim ? { sim } : {}),
      driver: wrap(upstream ?? new ChestboardDriver({ transport, acceptBoardVersions: o.acceptBoardVersions })),
      acceptBoardVersions: o.acceptBoardVersions,
      youngGcEveryMs: o.gcEveryMs,
    });
  },
  // The command mailbox (the host validated what is in it): the newest command at the start of each cycle.
  input(buffer, start) {
    const mailbox = new Mailbox(NAO_COMMAND_LAYOUT, buffer, start);
    // Copied here first (made once: the cycle allocates nothing), applied only under its lease.
    const scratch = new NaoCommands();
    const header = new Uint32Array(2);
    const copy = (slot: ShmViews<typeof NAO_COMMAND_LAYOUT>): void => {
      header.set(slot.header);
      scratch.position.set(slot.Position);
      scratch.stiffness.set(slot.Stiffness);
      for (let i = 0; i < LED_GROUP_NAMES.length; i++) {
        const g = LED_GROUP_NAMES[i]!;
        scratch.leds[g].set(slot[g]);
      }
      scratch.sonar.set(slot.Sonar);
    };
    return (r) => {
      if (mailbox.take(copy) !== 0) r.applyValidated(scratch, header[0]!, header[1]!);
    };
  },
  handlers: {
    smoothEnable: (r, leaseId) => r.smoothEnable(leaseId),
    smoothDisable: (r, leaseId) => r.smoothDisable(leaseId),
    simReset: (r, leaseId, pose) => r.simReset(leaseId, pose),
    motionActive: (r) => r.motionActive,
  },
  async serve(r, o, _post, control) {
    if (!o.lola) return { close: async () => {}, facts: { lolaPath: null } };
    const l = o.lola;
    const up = upstream;
    const lolaOpts = {
      readers: l.readers,
      graceMs: l.graceMs,
      ...(l.group !== undefined ? { group: l.group } : {}),
      ...(tap ? { tap: tap.lola } : {}),
      // The controlling client's answers are read by the cycle (one read(2) at its start), not by
      // the event loop: no wake-up or turn of their own (docs/performance.md).
      pollCommands: true,
      // On top of LoLA: the robot is named by the upstream's messages, and nothing is sent while it is not there.
      ...(up ? { robotConfigSource: () => up.robotConfig, holdUntilValid: true } : {}),
    };
    const lola = await startLolaServer(r, { path: l.path, ...lolaOpts }).catch((e: unknown) => {
      if (l.fallbackPath && e instanceof BodylinkError && e.code === "BL_ERR_LOLA_SOCKET") return startLolaServer(r, { path: l.fallbackPath, ...lolaOpts });
      throw e;
    });
    control.onInput(() => lola.pollCommands());
    return { close: () => lola.close(), facts: { lolaPath: lola.path }, lastWords: () => lola.sendFinalFrame() };
  },
  afterCycle: (r, seq) => {
    if (!tap) return;
    tap.naoState(r.state);
    tap.lateCycles(seq, r.loop.timing.lateCycles);
  },
  ready: (r, served) => ({
    prefs: r.prefs,
    prefsUnavailable: r.prefsUnavailable,
    boards: r.boards,
    upstreamConnected: upstream ? upstream.upstream.connected : null,
    lolaPath: served?.lolaPath ?? null,
  }),
  transport: (r) => (upstream ? `lola:${upstream.upstream.path}` : r.driver.name),
  link: (r) => r.state.link,
  safeNow: (r) => (r.driver instanceof LolaUpstreamDriver || r.driver instanceof ChestboardDriver ? r.driver.deactivateNow() : false),
  safeLater: (r) => r.driver.deactivate(),
  diedDetail: (r, confirmed) => (confirmed ? `its last frame to the body was sent at stiffness ${Math.max(...r.state.stiffness)}` : "the body's safe frame could not be confirmed"),
});
