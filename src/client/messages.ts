/**
 * The robot API's wire shapes as the SDK sees them: the stream's hello and state messages and the
 * REST answers. They mirror the server's TypeBox schemas in src/serve/api
 * (test/client/messages-types.test.ts checks that they agree, under `npm run lint`). snake_case is the wire's spelling; the SDK's getters return camelCase snapshots.
 *
 * Types only: no runtime code, browser-safe.
 */

export type { BodyKind } from "../bodies/registry.js";
export type { LinkStatus } from "../bodies/link.js";
export type { SafetyCode } from "../bodies/safety.js";
import type { BodyKind } from "../bodies/registry.js";
import type { LinkStatus } from "../bodies/link.js";
import type { SafetyCode } from "../bodies/safety.js";

export interface HelloMessage {
  readonly type: "hello";
  readonly body: BodyKind;
  readonly api_version: number;
  readonly joint_names: readonly string[];
  readonly rate_hz: number;
  readonly epoch_ms: number;
}

/** The envelope of every state message (stream and GET /v1/state). */
export interface StateEnvelope {
  readonly type: "state";
  readonly body: BodyKind;
  /** Source cycle sequence number. */
  readonly seq: number;
  /** Source cycle time, runtime's monotonic clock, ms. */
  readonly timestamp_ms: number;
  /** Source cycle wall-clock time, ms since the Unix epoch. */
  readonly epoch_ms: number;
  readonly link: LinkStatus;
}

export interface NaoFields {
  readonly battery: {
    readonly charge: number;
    readonly current: number;
    /** Stream: LoLA's scale (28.5 °C reads 2.8). REST: whole °C. */
    readonly temperature: number;
    readonly charging: boolean;
    readonly status: number;
  };
  readonly imu: {
    readonly linear_acceleration: readonly number[];
    readonly angular_velocity: readonly number[];
    readonly roll_pitch: readonly number[];
  };
  readonly sonar: readonly number[];
  readonly left_foot_pressure: readonly number[];
  readonly right_foot_pressure: readonly number[];
  readonly foot_weight: { readonly left: number; readonly right: number };
  readonly center_of_pressure: { readonly left: readonly number[]; readonly right: readonly number[] };
  readonly touch: {
    readonly chest_button: boolean;
    readonly head_front: boolean;
    readonly head_middle: boolean;
    readonly head_rear: boolean;
    readonly left_foot: boolean;
    readonly left_hand: boolean;
    readonly right_foot: boolean;
    readonly right_hand: boolean;
  };
  readonly joint_positions: readonly number[];
  readonly joint_velocities: readonly number[];
  readonly joint_currents: readonly number[];
  readonly joint_temperatures: readonly number[];
  readonly joint_status: readonly number[];
  readonly joint_stiffness: readonly number[];
  /** A physics simulator's world (`serve --sim physics`, docs/simulation.md); absent otherwise. */
  readonly sim?: SimWorld;
  readonly head: { readonly voltage: number; readonly power: number; readonly current: number; readonly face_temperature: number };
}

/** A physics simulator's world in the state (`serve --sim physics`, docs/simulation.md). */
export interface SimWorld {
  readonly time_s: number;
  /** The base's origin in the world, m (the NAO's torso; the P7's base, bolted at the origin; the TNY-360's body centre). */
  readonly base_position_m: readonly number[];
  readonly base_orientation_xyzw: readonly number[];
  readonly fallen: boolean;
  /** Simulated seconds per real second over the last second (about 1 in real time; 0 while lockstep time stands still). */
  readonly real_time_factor: number;
  readonly contacts: ReadonlyArray<{ readonly link: string; readonly force_n: number }>;
}

export interface P7Fields {
  readonly joint_positions: readonly number[];
  readonly joint_velocities: readonly number[];
  readonly joint_efforts: readonly number[];
  readonly motor_temperatures: readonly number[];
  readonly error_ids: readonly number[];
  readonly imu: { readonly angular_velocity: readonly number[]; readonly linear_acceleration: readonly number[] };
  /** The physics arm's world (`serve --body p7 --sim physics`); absent otherwise. */
  readonly sim?: SimWorld;
}

export type NaoStateMessage = StateEnvelope & { readonly body: "nao" } & NaoFields;
export type P7StateMessage = StateEnvelope & { readonly body: "p7" } & P7Fields;
export type Tny360StateMessage = StateEnvelope & { readonly body: "tny360" } & Tny360Fields;
export interface Tny360Fields {
  readonly source: "sim" | "remote";
  readonly joint_positions: readonly number[];
  readonly joint_targets: readonly number[];
  readonly joint_velocities: readonly number[];
  /** null on a real robot (no torque estimate). */
  readonly joint_efforts: ReadonlyArray<number | null>;
  readonly joint_enabled: readonly boolean[];
  /** Always null: the servos have no temperature sensor. */
  readonly joint_temperatures: ReadonlyArray<number | null>;
  readonly imu: {
    readonly orientation: readonly number[];
    readonly angular_velocity: ReadonlyArray<number | null>;
    readonly linear_acceleration: ReadonlyArray<number | null>;
    readonly down: readonly number[];
  };
  readonly paws: { readonly legs: readonly string[]; readonly grounded: readonly boolean[] };
  readonly odometry: { readonly x: number; readonly y: number; readonly yaw: number; readonly vx: number; readonly vy: number; readonly yaw_rate: number };
  readonly locomotion: {
    readonly target_velocity: { readonly x: number; readonly y: number; readonly yaw: number };
    readonly posture: { readonly x: number; readonly y: number; readonly z: number; readonly rx: number; readonly ry: number; readonly rz: number };
    readonly height: number | null;
    readonly gait: "Creep" | "Walk" | "Run";
    readonly enabled_mask: number;
    readonly smooth: "idle" | "enabling" | "disabling";
  };
  readonly power: { readonly voltage: number; readonly current: number; readonly power: number };
  readonly errors: { readonly count: number; readonly last_event_id: number; readonly last_error_id: number };
  /** A physics simulator's world (`serve --body tny360 --sim physics`, docs/simulation.md); absent otherwise. */
  readonly sim?: SimWorld;
}
export type StateMessage = NaoStateMessage | P7StateMessage | Tny360StateMessage;

export interface ControlHolder {
  readonly owner: string;
  readonly source: "api" | "lola" | "tny" | "cli" | "fleet";
  readonly expires_at_epoch_ms: number;
  readonly expires_at: string;
}

export interface LeaseAnswer {
  readonly lease_id: string;
  readonly owner: string;
  readonly source: "api";
  readonly lease_ms: number;
  readonly expires_at_epoch_ms: number;
  readonly expires_at: string;
}

export interface ErrorAnswer {
  readonly code: string;
  readonly status: number;
  readonly message: string;
  readonly holder?: ControlHolder;
  readonly problems?: ReadonlyArray<{ readonly key: string; readonly reason: string }>;
}

export interface InfoAnswer {
  readonly body: BodyKind;
  readonly api_version: number;
  readonly joint_names: readonly string[];
  readonly stream: { readonly path: string; readonly rate_hz: number };
  readonly lease: { readonly header: string; readonly min_ms: number; readonly max_ms: number; readonly default_ms: number };
}

export interface HealthAnswer {
  readonly body: BodyKind;
  readonly link: LinkStatus;
  /** Why the body is in (or on its way to) its safe state ("none" when commands flow); see SAFETY_TEXT. */
  readonly safety_code: SafetyCode;
  readonly safety_reason: string | null;
  readonly cycle: {
    readonly nominal_period_ms: number;
    readonly cycles: number;
    readonly late_cycles: number;
    /** Of late_cycles, those the loop's own work made late, by its thread's CPU time (the rest: the machine's, the thread descheduled or woken late). */
    readonly late_cycles_own_work: number;
    /** Deadlines that passed without their cycle (a stall the loop skipped rather than burst through). */
    readonly missed_cycles: number;
    readonly period_ms: { readonly p50: number; readonly p99: number; readonly max: number };
    readonly exec_ms: { readonly p50: number; readonly p99: number; readonly max: number };
    /** How many of the latest cycles the percentiles describe. */
    readonly window_cycles: number;
    /** How long after its deadline each cycle started, ms. */
    readonly lateness_ms: { readonly p50: number; readonly p99: number; readonly max: number };
    readonly jitter_p99_ms: number;
    /** Young-generation collections the runtime scheduled between cycles, and their durations, ms. */
    readonly gc_collections: number;
    readonly gc_ms: { readonly p50: number; readonly p99: number; readonly max: number };
    /** CPU time of the thread that runs the cycle, ms (null where the OS does not say). */
    readonly core_cpu_ms: number | null;
    /** How often that thread was scheduled in since it started (its wake-ups; null where the OS does not say). */
    readonly core_wakeups: number | null;
    /** How long that thread has spun before its deadlines, ms (the wake-up's final spin). */
    readonly core_spun_ms: number;
    /** Collections V8 started by itself on that thread (not the scheduled ones), and the longest, ms. */
    readonly core_gc_collections: number;
    readonly core_gc_max_ms: number;
  };
  readonly errors: Readonly<Record<string, number>>;
  readonly control: ControlHolder | null;
  readonly estop: EstopAnswer;
  /** A simulated body's time (docs/simulation.md); null on a real robot. */
  readonly sim: {
    /** real-time: simulated time follows the wall clock; lockstep: it moves per LoLA answer or POST /v1/sim/step. */
    readonly clock: "real-time" | "lockstep";
    /** The body under the simulator ("physics", "kinematic"). */
    readonly model: string;
    /** Simulated time since the simulator started or was last reset, s. */
    readonly time_s: number;
    /** Simulated seconds per real second over the last second. */
    readonly real_time_factor: number;
  } | null;
  readonly api: {
    readonly subscribers: number;
    readonly messages_sent: number;
    readonly messages_skipped: number;
    /** How long one stretch of sending held the server's event loop, ms: the most the stream delays a cycle. */
    readonly send_slice_ms: { readonly p99: number; readonly max: number };
  };
  /** null (or absent from older runtimes) unless the runtime joined a fleet (serve --fleet). */
  readonly fleet?: FleetStatusAnswer | null;
}

/** The runtime's fleet bridge (docs/fleet.md); losing the broker never affects the body. */
export interface FleetStatusAnswer {
  /** The NATS server, credentials removed. */
  readonly url: string;
  /** This robot's name in the fleet. */
  readonly name: string;
  readonly connection: "connecting" | "connected" | "disconnected" | "closed";
  /** name-taken: another runtime holds this name in the fleet. */
  readonly presence: "pending" | "ok" | "name-taken";
  /** When the connection entered its current state, ms since the Unix epoch. */
  readonly since_epoch_ms: number;
  readonly disconnects: number;
  readonly last_error: string | null;
  readonly published: { readonly state: number; readonly health: number; readonly events: number };
  /** The e-stop connection: its own socket to the broker, subscribed to e-stops only. */
  readonly estop: { readonly connection: "connecting" | "connected" | "disconnected" | "closed"; readonly disconnects: number; readonly received: number };
  /** Fleet requests (commands, resets) through the per-sender rate limit: refused were answered 429/503, dropped were not. */
  readonly requests: {
    readonly admitted: number;
    readonly refused: number;
    readonly dropped: number;
    readonly in_flight: number;
    readonly senders: number;
    /** Floods shed: times the bridge stopped taking requests for a while and dropped the broker's backlog. */
    readonly sheds: number;
    readonly shedding: boolean;
  };
}

/** The emergency-stop latch (GET /v1/estop; docs/api.md "Emergency stop"). */
export interface EstopAnswer {
  /** True from the stop until an explicit reset; while latched nobody gets control. */
  readonly latched: boolean;
  readonly reason: string | null;
  readonly source: string | null;
  /** When it latched, ms since the Unix epoch. */
  readonly since_ms: number | null;
  /** 0: cut at once; 1: safe posture within a bounded time, then cut. */
  readonly category: 0 | 1 | null;
  /** settling: a category-1 stop is moving to its safe posture; cut: the body is in its safe state. */
  readonly phase: "none" | "settling" | "cut";
}

export interface EstopStateAnswer extends EstopAnswer {
  /** What a stop without a category gets on this body. */
  readonly default_category: 0 | 1;
}

export interface EstopStopAnswer extends EstopAnswer {
  readonly stopped: true;
  readonly reason: string;
}

export interface EstopResetAnswer extends EstopAnswer {
  /** False when there was nothing to reset. */
  readonly was_latched: boolean;
}

export interface ControlStatusAnswer {
  readonly held: boolean;
  readonly holder: ControlHolder | null;
}

/** What a body command answers on success (NAO joints/LEDs/sonar). */
export interface AppliedAnswer {
  readonly applied: readonly string[];
  readonly clamped: ReadonlyArray<{ readonly joint: string; readonly field: string; readonly requested: number; readonly applied: number }>;
  readonly notes: readonly string[];
}
