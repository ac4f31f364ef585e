/**
 * The remote: a REAL TNY-360's protocol client over its WebSocket API, the link its driver
 * (`TnyRemoteDriver`, src/drivers/tny360/driver.ts) talks through (`Tny360Robot.create({ host })`;
 * words: docs/glossary.md). It fills the same `Tny360State` the simulator fills, by polling (the firmware never pushes, tny360.md §3.3),
 * and forwards commands.
 *
 * Polling, at most `pollHz` (≤ 50 Hz), one poll in flight at a time, pipelined requests:
 * - every poll: joint.getJointAngles, imu.getOrientation, imu.getDownVector, body.getTargetVelocity;
 * - plus one item of a slow round-robin list: power (V, A, W), posture, gait, enable bits, each
 *   paw, one joint's target angle, error count (+ newest event), loop switches, statistics, and
 *   the IMU's acceleration and angular velocity (dropped for good when the robot answers them with
 *   the firmware's empty Ok, §12 #7: those fields then stay NaN).
 *
 * Values the API does not give are NaN: efforts, servo temperatures, body height. Odometry is dead
 * reckoning from the polled target velocity (the firmware measures none). Orientation yaw is what
 * the firmware reports: always 0 (§12 #15).
 *
 * Velocity safety, which the firmware lacks (§12 #12): a velocity not renewed by bodylink's clients
 * within the timeout decays here and the decayed values are forwarded; stopping the driver, an
 * emergency stop, or losing the commanding lease sends velocity 0.
 *
 * Cycle side: `cycle()` only starts work (never awaits); polls and forwards complete later.
 */
import { NO_VALUES, Tny360State, type TnyReply } from "../bodies/tny360/state.js";
import { VelocityKeepAlive } from "../bodies/tny360/velocity.js";
import type { TnyRawReply } from "../client/tny/index.js";
import type { TnyWebSocketTransport } from "../transport/tny-websocket.js";
import type { Clock } from "./clock.js";
import { type ActionSpec, actionSpec, JOINT_COUNT, LEG_COUNT, type ModuleSpec, Status } from "../wire/tny/constants.js";
import { errorIdOf } from "../wire/tny/decode.js";
import type { ErrorEvent, Vec3 } from "../wire/tny/types.js";

export interface RemoteTny360Options {
  transport: TnyWebSocketTransport;
  /** The runtime's clock (keep-alive stamps). */
  clock: Clock;
  /** Poll rate, Hz; at most 50 (the default). */
  pollHz?: number;
  velocityTimeoutMs?: number;
  velocityDecayMs?: number;
}

export const MAX_POLL_HZ = 50;

type Spec = { module: ModuleSpec; action: ActionSpec };
const S = (m: string, a: string): Spec => actionSpec(m, a);

const SET_VELOCITY = S("body", "setVelocity");
const FAST = {
  angles: S("joint", "getJointAngles"),
  orientation: S("imu", "getOrientation"),
  down: S("imu", "getDownVector"),
  velocity: S("body", "getTargetVelocity"),
};

interface SlowItem {
  readonly key: string;
  readonly spec: Spec;
  readonly args: readonly unknown[];
  apply(values: readonly unknown[], driver: RemoteTny360): void;
  /** Drop for good when the robot cannot answer it (an empty Ok the decoder refuses). */
  readonly optional?: boolean;
}

function vec3Into(v: unknown, out: Float32Array): void {
  const p = v as Vec3;
  out[0] = p.x;
  out[1] = p.y;
  out[2] = p.z;
}

function buildSlowList(): SlowItem[] {
  const items: SlowItem[] = [
    {
      key: "power.voltage",
      spec: S("power", "getVoltage"),
      args: [],
      apply: (v, d) => {
        d.state.power.voltageV = v[0] as number;
      },
    },
    {
      key: "power.current",
      spec: S("power", "getCurrent"),
      args: [],
      apply: (v, d) => {
        d.state.power.currentA = v[0] as number;
      },
    },
    {
      key: "power.power",
      spec: S("power", "getPower"),
      args: [],
      apply: (v, d) => {
        d.state.power.powerW = v[0] as number;
      },
    },
    {
      key: "body.posture",
      spec: S("body", "getPosture"),
      args: [],
      apply: (v, d) => {
        vec3Into(v[0], d.state.body.posturePositionM);
        vec3Into(v[1], d.state.body.postureRotationRad);
      },
    },
    {
      key: "gait.type",
      spec: S("gait", "getType"),
      args: [],
      apply: (v, d) => {
        d.state.body.gait = v[0] as number;
      },
    },
    {
      key: "body.enabled",
      spec: S("body", "getEnabled"),
      args: [],
      apply: (v, d) => {
        const mask = v[0] as number;
        d.state.body.enabledMask = mask;
        for (let j = 0; j < JOINT_COUNT; j++) d.state.joints.enabled[j] = (mask >> j) & 1;
      },
    },
    {
      key: "system.control",
      spec: S("system", "getControlLoopEnabled"),
      args: [],
      apply: (v, d) => {
        d.state.system.controlLoopEnabled = v[0] as boolean;
      },
    },
    {
      key: "system.decision",
      spec: S("system", "getDecisionLoopEnabled"),
      args: [],
      apply: (v, d) => {
        d.state.system.decisionLoopEnabled = v[0] as boolean;
      },
    },
    {
      key: "system.statistics",
      spec: S("system", "getStatistics"),
      args: [],
      apply: (v, d) => {
        d.state.system.chipTemperatureC = v[0] as number;
      },
    },
    {
      key: "error.count",
      spec: S("error", "getErrorCount"),
      args: [],
      apply: (v, d) => {
        d.state.errors.count = v[0] as number;
        if (d.state.errors.count === 0) {
          d.state.errors.lastEventId = -1;
          d.state.errors.lastErrorId = 0;
        }
      },
    },
    {
      key: "error.latest",
      spec: S("error", "getErrorEventByIndex"),
      args: [0],
      apply: (v, d) => {
        const ev = v[0] as ErrorEvent;
        d.state.errors.lastEventId = ev.eventId;
        d.state.errors.lastErrorId = errorIdOf(ev);
      },
    },
    { key: "imu.acceleration", spec: S("imu", "getAcceleration"), args: [], optional: true, apply: (v, d) => vec3Into(v[0], d.state.imu.linearAccelerationMS2) },
    { key: "imu.angularVelocity", spec: S("imu", "getAngularVelocity"), args: [], optional: true, apply: (v, d) => vec3Into(v[0], d.state.imu.angularVelocityRadS) },
  ];
  for (let leg = 0; leg < LEG_COUNT; leg++) {
    const apply = (v: readonly unknown[], d: RemoteTny360): void => {
      d.state.paws.grounded[leg] = v[0] ? 1 : 0;
    };
    items.push({ key: `leg.grounded.${leg}`, spec: S("leg", "getGrounded"), args: [leg], apply });
  }
  for (let j = 0; j < JOINT_COUNT; j++) {
    const apply = (v: readonly unknown[], d: RemoteTny360): void => {
      d.state.joints.targetRad[j] = v[0] as number;
    };
    items.push({ key: `joint.target.${j}`, spec: S("joint", "getTargetAngle"), args: [j], apply });
  }
  return items;
}

export class RemoteTny360 {
  readonly state = new Tny360State("remote");
  readonly periodMs: number;
  readonly transport: TnyWebSocketTransport;
  readonly #clock: Clock;
  /** Counters for health(): polls done, failed requests, forwarded commands that failed. */
  readonly counters = { polls: 0, pollErrors: 0, forwardErrors: 0, velocityForwards: 0 };
  readonly #keeper: VelocityKeepAlive;
  readonly #slow = buildSlowList();
  #slowIndex = 0;
  #polling = false;
  #consecutiveFailures = 0;
  #lastPollMs = Number.NaN;
  readonly #prevAngles = new Float32Array(JOINT_COUNT);
  #forwarding = false;
  #forwardAgain = false;

  constructor(opts: RemoteTny360Options) {
    this.transport = opts.transport;
    this.#clock = opts.clock;
    const hz = Math.min(MAX_POLL_HZ, Math.max(1, opts.pollHz ?? MAX_POLL_HZ));
    this.periodMs = 1000 / hz;
    this.#keeper = new VelocityKeepAlive({ timeoutMs: opts.velocityTimeoutMs, decayMs: opts.velocityDecayMs });
    this.state.imu.linearAccelerationMS2.fill(Number.NaN);
    this.state.imu.angularVelocityRadS.fill(Number.NaN);
    this.state.joints.effortNm.fill(Number.NaN);
    this.state.joints.targetRad.fill(Number.NaN);
    this.state.body.heightM = Number.NaN;
    this.state.power.voltageV = this.state.power.currentA = this.state.power.powerW = Number.NaN;
    this.transport.onLink((e) => {
      if (e.type === "down") this.state.link = "lost";
    });
  }

  /** Every action is forwarded: the real robot decides what it serves. */
  serves(_action: ActionSpec): boolean {
    return true;
  }

  // -------------------------------------------------------------------------------------------
  // Cycle (20 ms at 50 Hz): start a poll, apply the velocity keep-alive

  cycle(nowMs: number): void {
    if (!this.transport.connected) {
      this.state.link = this.state.seq === 0 ? "starting" : "lost";
      return;
    }
    if (this.#keeper.update(nowMs)) this.#forwardVelocity();
    // A reply of an unexpected shape must not become an unhandled rejection (it would end the process).
    if (!this.#polling) this.#poll(nowMs).catch(() => this.counters.pollErrors++);
  }

  async #poll(startMs: number): Promise<void> {
    this.#polling = true;
    try {
      const t = this.transport;
      const slow = this.#slow.length > 0 ? this.#slow[this.#slowIndex++ % this.#slow.length]! : null;
      const reqs = [
        t.request(FAST.angles.module, FAST.angles.action, []),
        t.request(FAST.orientation.module, FAST.orientation.action, []),
        t.request(FAST.down.module, FAST.down.action, []),
        t.request(FAST.velocity.module, FAST.velocity.action, []),
      ];
      const slowReq = slow ? t.request(slow.spec.module, slow.spec.action, slow.args) : null;
      const [angles, orientation, down, velocity] = await Promise.allSettled(reqs);
      const slowRes = slowReq ? await Promise.allSettled([slowReq]).then((r) => r[0]!) : null;
      let ok = 0;
      const s = this.state;
      const nowMs = startMs;
      const dtS = Number.isNaN(this.#lastPollMs) ? 0 : (nowMs - this.#lastPollMs) / 1000;
      if (okValues(angles)) {
        const a = angles.value.values[0] as Float32Array;
        for (let j = 0; j < JOINT_COUNT; j++) {
          s.joints.velocityRadS[j] = dtS > 0 && s.valid ? (a[j]! - this.#prevAngles[j]!) / dtS : 0;
          s.joints.positionRad[j] = a[j]!;
        }
        this.#prevAngles.set(a);
        ok++;
      }
      if (okValues(orientation)) {
        vec3Into(orientation.value.values[0], s.imu.orientationRad);
        ok++;
      }
      if (okValues(down)) {
        vec3Into(down.value.values[0], s.imu.down);
        ok++;
      }
      if (okValues(velocity)) {
        vec3Into(velocity.value.values[0], s.body.targetVelocity);
        ok++;
      }
      // dead reckoning from the target velocity (the firmware measures no odometry)
      const od = s.odometry;
      od.vxMS = s.body.targetVelocity[0]!;
      od.vyMS = s.body.targetVelocity[1]!;
      od.yawRateRadS = s.body.targetVelocity[2]!;
      if (dtS > 0 && dtS < 1) {
        const yawMid = od.yawRad + (od.yawRateRadS * dtS) / 2;
        od.xM += (Math.cos(yawMid) * od.vxMS - Math.sin(yawMid) * od.vyMS) * dtS;
        od.yM += (Math.sin(yawMid) * od.vxMS + Math.cos(yawMid) * od.vyMS) * dtS;
        od.yawRad = Math.atan2(Math.sin(od.yawRad + od.yawRateRadS * dtS), Math.cos(od.yawRad + od.yawRateRadS * dtS));
      }
      if (slow && slowRes) {
        if (slowRes.status === "fulfilled" && slowRes.value.status === Status.Ok) slow.apply(slowRes.value.values, this);
        else if (slow.optional && (slowRes.status === "fulfilled" || !isLinkError(slowRes.reason))) {
          // the firmware's empty Ok (or an error status): this robot cannot answer it; stop asking
          this.#slow.splice(this.#slow.indexOf(slow), 1);
        } else if (slowRes.status === "rejected") this.counters.pollErrors++;
      }
      this.#lastPollMs = nowMs;
      if (ok === 4) {
        this.#consecutiveFailures = 0;
        s.seq++;
        s.timestampMs = nowMs;
        s.valid = true;
        s.link = "ok";
        this.counters.polls++;
      } else {
        this.counters.pollErrors += 4 - ok;
        this.#consecutiveFailures++;
        if (this.#consecutiveFailures >= 3) s.link = this.transport.connected ? "degraded" : "lost";
      }
    } finally {
      this.#polling = false;
    }
  }

  // -------------------------------------------------------------------------------------------
  // Requests and commands

  /** Forward a decoded request to the robot; the robot's status comes back. Link down → UnknownError. */
  async handle(module: ModuleSpec, action: ActionSpec, args: readonly unknown[]): Promise<TnyReply> {
    let r: TnyRawReply;
    try {
      r = await this.transport.request(module, action, args);
    } catch {
      this.counters.forwardErrors++;
      return { status: Status.UnknownError, values: NO_VALUES };
    }
    if (r.status === Status.Ok && module === SET_VELOCITY.module && action === SET_VELOCITY.action) {
      this.#keeper.command(args[0] as number, args[1] as number, args[2] as number, this.#clock.nowMs());
    }
    return { status: r.status, values: r.values };
  }

  /** Velocity 0 now, forwarded to the robot. */
  clearVelocity(): void {
    this.#keeper.clear();
    this.#forwardVelocity();
  }

  emergencyStop(_reason: string): void {
    this.clearVelocity();
  }

  /** Send the keep-alive's current velocity (clear_overrides = false: joint overrides stay). */
  #forwardVelocity(): void {
    if (this.#forwarding) {
      this.#forwardAgain = true; // coalesce: send the newest value once the previous one is answered
      return;
    }
    this.#forwarding = true;
    const v = this.#keeper.current;
    this.counters.velocityForwards++;
    this.transport
      .request(SET_VELOCITY.module, SET_VELOCITY.action, [v[0], v[1], v[2], false])
      .then(
        (r) => {
          if (r.status !== Status.Ok) this.counters.forwardErrors++;
        },
        () => {
          this.counters.forwardErrors++;
        },
      )
      .finally(() => {
        this.#forwarding = false;
        if (this.#forwardAgain) {
          this.#forwardAgain = false;
          this.#forwardVelocity();
        }
      });
  }

  /** Start the link; resolves once connected or after `waitMs` (the link keeps retrying). */
  async start(waitMs = 3000): Promise<void> {
    this.transport.start();
    await this.transport.waitConnected(waitMs);
  }

  /** Velocity 0 to the robot (if anything was commanded), then close the link. */
  async stop(): Promise<void> {
    const v = this.#keeper.commanded;
    if (this.transport.connected && (v[0] !== 0 || v[1] !== 0 || v[2] !== 0 || this.#keeper.current.some((x) => x !== 0))) {
      this.#keeper.clear();
      await this.transport.request(SET_VELOCITY.module, SET_VELOCITY.action, [0, 0, 0, false]).catch(() => undefined);
    }
    await this.transport.stop();
    this.state.link = "stopped";
  }
}

function okValues(r: PromiseSettledResult<TnyRawReply>): r is PromiseFulfilledResult<TnyRawReply> {
  return r.status === "fulfilled" && r.value.status === Status.Ok;
}

function isLinkError(e: unknown): boolean {
  const n = (e as Error | undefined)?.name;
  return n === "TnyClosedError" || n === "TnyTimeoutError";
}
