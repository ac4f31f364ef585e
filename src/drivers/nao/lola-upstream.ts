/**
 * The NAO driver over an upstream LoLA (docs/lola.md, "On a stock robot"): bodylink on a stock robot, as a client of
 * Aldebaran's own LoLA socket, instead of the chest board. The NAO core (arbitration, the safety
 * ramp, smooth motions), the LoLA-compatible socket, the robot API and the dashboard run on top
 * unchanged.
 *
 * - **The upstream is the clock.** Each sensor message LoLA sends runs one cycle at once, inside
 *   the socket's data callback (`pacer`, a push pacer given to the loop): decode → read →
 *   arbitrate → our clients' messages → one command map upstream, in one call stack, no promise,
 *   microtask or timer between the upstream's bytes and ours. The command is encoded and written
 *   right after the cycle's listeners (at the end of that callback; a microtask for a cycle the
 *   loop ran on its own), so our clients' messages leave first (LoLA applies the command at its
 *   next cycle, 12 ms later, either way). When LoLA sends nothing (not there yet,
 *   stalled, restarting), the loop falls back to its own clock so the safety ramp, the API and the
 *   dashboard keep running and show the link lost.
 * - **What LoLA cannot give** (the state says so by leaving them at their defaults):
 *   - head readings (INA230 voltage/power/current, TMP100 face temperature): 0, LoLA has no keys;
 *   - the preference block beyond RobotConfig (joint zeros, FSR and IMU calibration, board
 *     serials): `prefs` is null; RobotConfig's four strings are in `robotConfig`;
 *   - the motor-board handshake: `boards` is empty, every joint counts as initialized (HAL did it);
 *   - chest-board counters (unacknowledged frames, read timeouts, board status): 0 / -1.
 *   Battery temperature in °C is LoLA's double-scaled value × 10 (whole degrees).
 * - **Faults** (the upstream closing, stalling, or sending garbage): a last command with stiffness
 *   0 goes upstream while the socket allows it; reads report the link down, which the core turns
 *   into "lost" at once (stiffness scale to 0, so it ramps up from 0 after recovery, never jumps);
 *   the client reconnects with backoff (transport/lola-upstream.ts).
 *
 * Perform side (read, write, the pushed cycle) allocates nothing in steady state (a cycle the loop
 * runs on its own, without a message, allocates its command's microtask and its wait's promise, as
 * every loop's waits do). Only the socket: no servers, no main-thread assumptions.
 */
import { LED_GROUP_NAMES, type NaoCommands } from "../../bodies/nao/commands.js";
import { computeFeet } from "../../bodies/nao/feet.js";
import type { NaoState } from "../../bodies/nao/state.js";
import { batteryTemperatureWholeCFromLola } from "../../bodies/nao/units.js";
import type { Clock } from "../../runtime/clock.js";
import type { CyclePacer } from "../../runtime/loop.js";
import type { BoardReport } from "../../transport/chestboard-link.js";
import { LolaUpstream, type LolaUpstreamFaultKind, type LolaUpstreamOptions, SEND } from "../../transport/lola-upstream.js";
import { SilenceTimer } from "../../transport/silence-timer.js";
import { LolaCommandWriter } from "../../wire/lola/command-message.js";
import type { LolaRobotConfig } from "../../wire/lola/sensor-message.js";
import { IO } from "../driver.js";
import { NAO_IO, type NaoDriver, type NaoOutput } from "./driver.js";

export interface LolaUpstreamDriverOptions extends LolaUpstreamOptions {
  /** The runtime's clock (the fallback pacing when the upstream sends nothing). */
  clock: Clock;
  /** The NAO's period, ms. Defaults to 12. */
  periodMs?: number;
}

const NOT_CONNECTED = "LoLA upstream not connected";
/** The command's microtask hangs off this (see write). */
const SETTLED = Promise.resolve();
/** While LoLA streams, the loop runs a cycle of its own after this many periods without a message (at most: the stall bound if shorter). */
const FALLBACK_PERIODS = 5;

export class LolaUpstreamDriver implements NaoDriver {
  readonly upstream: LolaUpstream;
  /** LoLA does not expose the preference block; its identity is {@link robotConfig}. */
  readonly prefs = null;
  readonly prefsUnavailable = "the upstream LoLA gives no preferences (no joint zeros, calibration or board serials; its RobotConfig names the body)";
  /** LoLA runs HAL's handshake itself: no boards to report. */
  readonly boards: readonly BoardReport[] = [];
  readonly jointInitialized = new Uint8Array(25).fill(1);
  /** Paces the loop by the upstream's messages (pass it as the loop's `pacer`). */
  readonly pacer: CyclePacer;
  lastErrorText = NOT_CONNECTED;
  readonly #clock: Clock;
  readonly #periodMs: number;
  readonly #writer = new LolaCommandWriter();
  /** The command's bytes, written in place each cycle (float 32, big-endian) at offsets resolved once. */
  readonly #view = new DataView(this.#writer.bytes.buffer, this.#writer.bytes.byteOffset, this.#writer.bytes.byteLength);
  readonly #positionAt = this.#writer.valuesAt("Position");
  readonly #stiffnessAt = this.#writer.valuesAt("Stiffness");
  readonly #ledAt = Int32Array.from(LED_GROUP_NAMES, (g) => this.#writer.valuesAt(g));
  /** The LED arrays of the commands last encoded, in LED_GROUP_NAMES' order (the runtime's commands object lives as long as it does). */
  #ledsOf: NaoCommands | null = null;
  #leds: Float32Array[] = [];
  /** The last output written: the fault's last command re-sends its positions at stiffness 0. */
  #last: NaoOutput | null = null;
  /** A fault happened since the last read: the next read says "down" once (the core goes lost at once). */
  #faulted = false;
  /** When a read last reported a failure, ms (a typed slot: no boxed double per cycle). */
  readonly #failedAtMs = Float64Array.of(Number.NaN);
  #wake: (() => void) | null = null;
  /** The loop's runNow (push pacing), while it runs. */
  #runNow: (() => void) | null = null;
  /** A command is encoded and written after its cycle's listeners (see the header). */
  #sendQueued = false;
  /** Inside a pushed cycle (#due): its command is written when the cycle returns, with no microtask. */
  #pushing = false;
  readonly #flush = (): void => {
    if (!this.#sendQueued) return; // a safe command went instead
    this.#sendQueued = false;
    const out = this.#last!;
    this.#encode(out.commands, out.scale[0]!);
    if (this.upstream.send(this.#writer.bytes) !== SEND.Sent) this.lastErrorText = this.upstream.lastFault || NOT_CONNECTED;
  };
  /**
   * While LoLA streams, the loop's wait ends 5 periods after the upstream's last message, or at its
   * stall, whichever comes first. At the default stall bound (5 periods) that is the stall: its
   * fault runs a cycle and ends the wait (#onFault), and there is no timer of our own. A second
   * SilenceTimer at the same bound would fire at a phase of its own, a second wake-up per bound
   * (+0.2 a message, measured). Only a longer stall bound (--lola-upstream-stall-ms) gets one,
   * counted from the upstream's own stamp (no timer work per message).
   */
  readonly #fallback: SilenceTimer | null;
  readonly #wakeNow = (): void => {
    const w = this.#wake;
    this.#wake = null;
    w?.();
  };

  constructor(opts: LolaUpstreamDriverOptions) {
    this.#clock = opts.clock;
    this.#periodMs = opts.periodMs ?? 12;
    this.upstream = new LolaUpstream(opts);
    const up = this.upstream;
    const fallbackMs = FALLBACK_PERIODS * this.#periodMs;
    this.#fallback = fallbackMs < up.stallMs ? new SilenceTimer(fallbackMs, this.#wakeNow, () => up.lastMessageAtMs) : null;
    this.upstream.onMessage = this.#due;
    this.upstream.onFault = (kind, reason, writable) => this.#onFault(kind, reason, writable);
    this.pacer = {
      wait: (deadlineMs) => this.#wait(deadlineMs),
      attach: (runNow) => {
        this.#runNow = runNow;
      },
    };
  }

  get name(): string {
    return `LoLA upstream ${this.upstream.path}`;
  }
  get busy(): boolean {
    return false;
  }
  /** RobotConfig of the robot behind the socket, or null before its first message. */
  get robotConfig(): LolaRobotConfig | null {
    return this.upstream.robotConfig;
  }

  /** Starts connecting; never waits for the upstream (one that starts later is waited for by the client). */
  async configure(): Promise<void> {
    this.upstream.start();
  }

  async activate(): Promise<void> {}

  read(nowMs: number, into: NaoState): number {
    if (this.#faulted) {
      this.#faulted = false;
      this.#failedAtMs[0] = nowMs;
      return NAO_IO.LinkDown;
    }
    const up = this.upstream;
    if (!up.take()) {
      // Nothing new. While LoLA streams that is a cycle between messages; otherwise a failure,
      // reported once per cycle (the wrapper reads twice).
      if (up.status === "streaming" || up.status === "connected" || this.#failedAtMs[0] === nowMs) return IO.None;
      this.#failedAtMs[0] = nowMs;
      this.lastErrorText = up.lastFault || NOT_CONNECTED;
      return NAO_IO.NoAnswer;
    }
    const s = up.staged;
    // NOTE: hot path: one typed-array copy per field, no per-element work beyond the feet.
    into.stiffness.set(s.stiffness); // what LoLA reports as applied (our previous command)
    into.position.set(s.position);
    into.temperature.set(s.temperature);
    into.current.set(s.current);
    into.battery.set(s.battery);
    into.accelerometer.set(s.accelerometer);
    into.gyroscope.set(s.gyroscope);
    into.angles.set(s.angles);
    into.sonar.set(s.sonar);
    into.fsr.set(s.fsr);
    into.status.set(s.status);
    into.touch.set(s.touch);
    into.batteryTemperatureC = batteryTemperatureWholeCFromLola(s.battery[3]!);
    computeFeet(s.fsr, into.footWeightKg, into.centerOfPressureM);
    return IO.Fresh;
  }

  write(_nowMs: number, out: NaoOutput): number {
    this.#last = out;
    const r = this.upstream.canSend();
    if (r === SEND.Sent) {
      if (!this.#sendQueued) {
        this.#sendQueued = true;
        // After this cycle's listeners: our clients' messages first. A pushed cycle's #due writes it
        // when the cycle returns. Otherwise a reaction on a settled promise (~100 bytes), not
        // queueMicrotask (Node wraps each in an AsyncResource, a bound function and a closure:
        // ~1 µs and ~0.3 KB per cycle).
        if (!this.#pushing) SETTLED.then(this.#flush);
      }
      return IO.Sent;
    }
    if (r === SEND.Busy) {
      this.upstream.countDropped(); // the previous command has not left: LoLA applies the newest anyway
      return IO.Busy;
    }
    this.lastErrorText = this.upstream.lastFault || NOT_CONNECTED;
    return NAO_IO.WriteFailed;
  }

  /** A last command at stiffness 0 (the positions last sent), then the socket is flushed on close. */
  async deactivate(): Promise<void> {
    this.#sendSafe();
  }

  /** The same last command, synchronously (a dying core): true when it was handed to the socket. */
  deactivateNow(): boolean {
    return this.#sendSafe() === SEND.Sent;
  }

  async close(): Promise<void> {
    this.#stopWaiting();
    await this.upstream.close();
  }

  /** Perform side: the command map from the core's output, stiffness scaled by the safety ramp (every value in place: no lookup by key name). */
  #encode(c: NaoCommands, scale: number): void {
    const v = this.#view;
    const pos = c.position;
    const stiff = c.stiffness;
    for (let i = 0; i < 25; i++) {
      v.setFloat32(this.#positionAt + 5 * i, pos[i]!, false);
      v.setFloat32(this.#stiffnessAt + 5 * i, stiff[i]! * scale, false);
    }
    if (this.#ledsOf !== c) {
      this.#ledsOf = c; // prepare side, once per commands object
      this.#leds = LED_GROUP_NAMES.map((g) => c.leds[g]);
    }
    const leds = this.#leds;
    const ledAt = this.#ledAt;
    for (let g = 0; g < leds.length; g++) {
      const a = leds[g]!;
      const o = ledAt[g]!;
      for (let i = 0; i < a.length; i++) v.setFloat32(o + 5 * i, a[i]!, false);
    }
    this.#writer.setSonar(c.sonar[0] === 1, c.sonar[1] === 1);
  }

  #sendSafe(): number {
    this.#sendQueued = false; // the safe command replaces a queued one, never follows it
    const last = this.#last;
    if (last) this.#encode(last.commands, 0);
    else for (let i = 0; i < 25; i++) this.#view.setFloat32(this.#stiffnessAt + 5 * i, 0, false); // never written: positions 0 at stiffness 0
    return this.upstream.send(this.#writer.bytes);
  }

  #onFault(_kind: LolaUpstreamFaultKind, reason: string, writable: boolean): void {
    this.lastErrorText = reason;
    this.#faulted = true;
    if (writable) this.#sendSafe();
    this.#due(); // run the cycle now: the core goes to its safe state without waiting for the fallback
    this.#wakeNow(); // and end the loop's wait: it paces itself by its clock until LoLA streams again
  }

  /** A message arrived (or a fault): run the cycle now, in this callback (push), else wake the loop's wait. */
  readonly #due = (): void => {
    const run = this.#runNow;
    if (!run) return this.#wakeNow();
    // The fallback counts from this message (the upstream stamped it). The cycle's listeners (our
    // clients' messages) run inside run(): the command upstream leaves after them, here.
    this.#pushing = true;
    try {
      run();
    } finally {
      this.#pushing = false;
    }
    this.#flush();
  };

  /**
   * The loop's wait: until the next upstream message, or the fallback. While LoLA streams, the
   * fallback is the stall bound after the last message (a late message, not a missing one, must
   * not double the cycle; a missing one is a stall, whose fault runs a cycle at once); otherwise
   * the loop's own deadline.
   */
  #wait(deadlineMs: number): Promise<void> {
    return new Promise<void>((resolve) => {
      this.#wake = resolve;
      const up = this.upstream;
      if (up.pending > 0) return this.#wakeNow(); // a message arrived while the cycle ran
      if (up.status === "streaming" || up.status === "connected") {
        this.#fallback?.arm(); // from the last message, or from now when that is older than the bound
      } else {
        // Nothing streams: the loop's own clock (exact deadlines) keeps the safety ramp running.
        this.#fallback?.cancel();
        void this.#clock.sleepUntil(deadlineMs).then(() => {
          if (this.#wake === resolve) this.#wakeNow();
        });
      }
    });
  }

  #stopWaiting(): void {
    this.#fallback?.cancel();
    this.#wakeNow();
  }
}
