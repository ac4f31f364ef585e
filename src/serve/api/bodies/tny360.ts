/**
 * The robot API's TNY-360 adapter: the quadruped's state (simulated, or polled from a real robot)
 * as one state message, and its commands through the runtime's typed command methods.
 *
 * State fields (the same on the stream and on REST; joint arrays are 14 values in JointId order,
 * the order of GET /v1/info joint_names: four legs FL, BL, BR, FR × hip roll, hip pitch, knee, then
 * the two ears):
 * `joint_positions` rad, `joint_targets` rad, `joint_velocities` rad/s, `joint_efforts` N·m or
 * null (a real robot has no torque estimate), `joint_enabled`, `joint_temperatures` null (hobby
 * servos have no sensor); `imu` orientation rad (Euler XYZ), angular velocity rad/s and linear
 * acceleration m/s² (null on a real robot, whose firmware answers empty), down vector; `paws`
 * grounded per leg; `odometry`; `locomotion` (target velocity, posture, height, gait, enable
 * mask, smooth phase; the firmware's "body" module, renamed because `body` is the envelope's body
 * kind); `power`; `errors`; `source` ("sim" or "remote").
 *
 * The SDK's common models follow from these: joints (angles, velocities, efforts in N·m), IMU;
 * the motor model (temperatures, error ids) has no data on this body and is always null.
 *
 * Commands (lease in the header; the runtime validates through the same path as the TNY wire):
 * velocity (renew within 500 ms or it decays to zero), posture, enabled mask, gait, joints (all 14
 * overrides), joint (one), leg (foot position), smooth enable/disable (answers estimated seconds).
 * Targets outside a joint's limits are **refused** (400, the robot keeps its previous target), as
 * the firmware does. On a real robot commands are forwarded (`forwarded: true`) and its refusals
 * are counted in health's errors.failedCommands.
 *
 * Prepare side (allocates one frozen snapshot per read).
 */
import Type from "typebox";
import { JOINT_COUNT, JOINT_NAMES, JOINTS, LEG_COUNT } from "../../../bodies/tny360/joints.js";
import type { Tny360Snapshot } from "../../../bodies/tny360/state.js";
import type { Awaitable } from "../../../runtime/authority.js";
import type { Tny360Body, Tny360CommandResult } from "../../../runtime/tny360-robot.js";
import { GAIT_NAMES } from "../../../wire/tny/constants.js";
import type { BodyAdapter, BodyFields, CommandOutcome, CommandRoute, ReadRoute, SourceStamp } from "../adapter.js";
import { numbers } from "../schemas.js";
import { SimWorldSchema, simResetRoute } from "./sim-world.js";
import { TNY360_SIM_POSES } from "../../../bodies/tny360/poses.js";
import { AdapterBase, f32 } from "./common.js";

const n = JOINT_COUNT;
const jointNote = `${n} values in JointId order (GET /v1/info joint_names)`;
const nullableNumbers = (k: number, description: string) => Type.Array(Type.Union([Type.Number(), Type.Null()]), { minItems: k, maxItems: k, description });
const orNull = (v: number | null): number | null => (v === null ? null : f32(v));
const limitsDoc = JOINTS.map((j) => `${j.name} [${j.minRad.toFixed(4)}, ${j.maxRad.toFixed(4)}]`).join(", ");

export const TnyFieldsSchema = Type.Object({
  source: Type.Union([Type.Literal("sim"), Type.Literal("remote")], { description: "bodylink's simulator, or a real robot over its WebSocket API" }),
  joint_positions: numbers(n, `rad, measured (ears: model angle), ${jointNote}`),
  joint_targets: numbers(n, `rad, the target each joint is driven to, ${jointNote}`),
  joint_velocities: numbers(n, `rad/s, ${jointNote}`),
  joint_efforts: nullableNumbers(n, `N·m, holding torque estimate (null on a real robot), ${jointNote}`),
  joint_enabled: Type.Array(Type.Boolean(), { minItems: n, maxItems: n, description: `servo powered, ${jointNote}` }),
  joint_temperatures: nullableNumbers(n, `°C; always null: the servos have no temperature sensor, ${jointNote}`),
  imu: Type.Object({
    orientation: numbers(3, "rad, Euler XYZ (roll, pitch, yaw); a real robot's firmware reports yaw 0"),
    angular_velocity: nullableNumbers(3, "rad/s, body frame (null on a real robot)"),
    linear_acceleration: nullableNumbers(3, "m/s², body frame, including gravity: +9.81 on z at rest (null on a real robot)"),
    down: numbers(3, "unit gravity direction in the body frame"),
  }),
  paws: Type.Object({
    legs: Type.Array(Type.String(), { description: "FL, BL, BR, FR" }),
    grounded: Type.Array(Type.Boolean(), { minItems: LEG_COUNT, maxItems: LEG_COUNT }),
  }),
  odometry: Type.Object(
    {
      x: Type.Number({ description: "m" }),
      y: Type.Number({ description: "m" }),
      yaw: Type.Number({ description: "rad" }),
      vx: Type.Number({ description: "m/s" }),
      vy: Type.Number({ description: "m/s" }),
      yaw_rate: Type.Number({ description: "rad/s" }),
    },
    { description: "Planner frame in the start frame; a real robot's is dead reckoning from the commanded velocity" },
  ),
  locomotion: Type.Object({
    target_velocity: Type.Object({ x: Type.Number({ description: "m/s" }), y: Type.Number({ description: "m/s" }), yaw: Type.Number({ description: "rad/s" }) }),
    posture: Type.Object({
      x: Type.Number({ description: "m" }),
      y: Type.Number({ description: "m" }),
      z: Type.Number({ description: "m, height above ground" }),
      rx: Type.Number({ description: "rad" }),
      ry: Type.Number({ description: "rad" }),
      rz: Type.Number({ description: "rad" }),
    }),
    height: Type.Union([Type.Number(), Type.Null()], { description: "m, measured (null on a real robot)" }),
    // A tuple of literals, so Static<> sees them (mapping GAIT_NAMES gives an array, typed never);
    // test/client/messages-types.test.ts checks it against GaitName and GAIT_NAMES.
    gait: Type.Union([Type.Literal("Creep"), Type.Literal("Walk"), Type.Literal("Run")]),
    enabled_mask: Type.Integer({ description: "bit i = joint i powered" }),
    smooth: Type.Union([Type.Literal("idle"), Type.Literal("enabling"), Type.Literal("disabling")]),
  }),
  power: Type.Object({ voltage: Type.Number({ description: "V" }), current: Type.Number({ description: "A" }), power: Type.Number({ description: "W" }) }),
  errors: Type.Object({
    count: Type.Integer({ description: "Events in the robot's error ring" }),
    last_event_id: Type.Integer(),
    last_error_id: Type.Integer({ description: "0xMMSSCCVV, raw" }),
  }),
  sim: Type.Optional(SimWorldSchema),
});

const clearOverrides = Type.Optional(Type.Boolean({ description: "Clear joint overrides (default true)" }));
const Forwarded = Type.Object({ forwarded: Type.Boolean({ description: "Sent on to a real robot, which answers later" }) });

export class Tny360Adapter extends AdapterBase<Tny360Body> implements BodyAdapter {
  readonly kind = "tny360" as const;
  readonly jointNames: readonly string[] = JOINT_NAMES;
  readonly schemas = { stream: TnyFieldsSchema, rest: TnyFieldsSchema };
  readonly reads: readonly ReadRoute[] = [];
  readonly commands: readonly CommandRoute[];

  constructor(robot: Tny360Body) {
    super(robot);
    const outcome = (r: Tny360CommandResult): CommandOutcome => (r.ok ? { ok: true, result: { forwarded: r.forwarded } } : { ok: false, error: r.error });
    // A host answers most commands at once (its mailbox), a few once the core did (a leg's foot).
    const done = (r: Awaitable<Tny360CommandResult>): CommandOutcome | Promise<CommandOutcome> => (r instanceof Promise ? r.then(outcome) : outcome(r));
    const route = <B>(
      path: string,
      summary: string,
      request: ReturnType<typeof Type.Object>,
      handle: (leaseId: string, b: B) => CommandOutcome | Promise<CommandOutcome>,
      description?: string,
    ): CommandRoute => ({ path, summary, request, response: Forwarded, handle, ...(description ? { description } : {}) }) as CommandRoute;
    this.commands = [
      route<{ x: number; y: number; yaw: number; clear_overrides?: boolean }>(
        "/v1/commands/velocity",
        "Walk: body velocity x, y (m/s) and yaw (rad/s)",
        Type.Object({ x: Type.Number(), y: Type.Number(), yaw: Type.Number(), clear_overrides: clearOverrides }, { additionalProperties: false }),
        (id, b) => done(robot.setVelocity(id, b.x, b.y, b.yaw, b.clear_overrides ?? true)),
        "Renew at least every 500 ms: a velocity not renewed decays to zero, and it is cleared at once when the lease that set it ends.",
      ),
      route<{ x: number; y: number; z: number; rx: number; ry: number; rz: number; clear_overrides?: boolean }>(
        "/v1/commands/posture",
        "Body posture: position x, y, z (m; z = height) and rotation rx, ry, rz (rad, Euler XYZ)",
        Type.Object(
          { x: Type.Number(), y: Type.Number(), z: Type.Number(), rx: Type.Number(), ry: Type.Number(), rz: Type.Number(), clear_overrides: clearOverrides },
          { additionalProperties: false },
        ),
        (id, b) => done(robot.setPosture(id, { xM: b.x, yM: b.y, zM: b.z, rxRad: b.rx, ryRad: b.ry, rzRad: b.rz }, b.clear_overrides ?? true)),
      ),
      route<{ mask: number }>(
        "/v1/commands/enabled",
        "Power joints: bit i = joint i (0x0FFF = the 12 leg joints)",
        Type.Object({ mask: Type.Integer({ minimum: 0, maximum: (1 << n) - 1 }) }, { additionalProperties: false }),
        (id, b) => done(robot.setEnabledMask(id, b.mask)),
      ),
      route<{ gait: "Creep" | "Walk" | "Run" }>(
        "/v1/commands/gait",
        "Gait: Creep, Walk or Run",
        Type.Object({ gait: Type.Union(GAIT_NAMES.map((g) => Type.Literal(g))) }, { additionalProperties: false }),
        (id, b) => done(robot.setGait(id, b.gait)),
      ),
      route<{ positions: number[] }>(
        "/v1/commands/joints",
        "Override all 14 joints (rad, JointId order)",
        Type.Object({ positions: numbers(n, `rad, ${jointNote}; limits: ${limitsDoc}`) }, { additionalProperties: false }),
        (id, b) => done(robot.setJointAngles(id, b.positions)),
        "Any value outside its joint's limits refuses the whole command (400); the robot keeps its previous targets.",
      ),
      route<{ joint: number; position: number }>(
        "/v1/commands/joint",
        "Override one joint (rad)",
        Type.Object({ joint: Type.Integer({ minimum: 0, maximum: n - 1, description: "JointId" }), position: Type.Number({ description: "rad" }) }, { additionalProperties: false }),
        (id, b) => done(robot.setJointAngle(id, b.joint, b.position)),
      ),
      route<{ leg: number; x: number; y: number; z: number; clear_overrides?: boolean }>(
        "/v1/commands/leg",
        "A leg's foot position in the planner frame (m)",
        Type.Object(
          { leg: Type.Integer({ minimum: 0, maximum: LEG_COUNT - 1, description: "0 FL, 1 BL, 2 BR, 3 FR" }), x: Type.Number(), y: Type.Number(), z: Type.Number(), clear_overrides: clearOverrides },
          { additionalProperties: false },
        ),
        (id, b) => done(robot.setLegPosition(id, b.leg, b.x, b.y, b.z, b.clear_overrides ?? true)),
      ),
    ];
    const smooth = (enable: boolean): CommandRoute =>
      ({
        path: enable ? "/v1/commands/smooth-enable" : "/v1/commands/smooth-disable",
        summary: enable ? "Smooth enable: into REST, then STAND; answers the estimated seconds" : "Smooth disable: into REST, then the leg joints off; answers the estimated seconds",
        request: Type.Object({}, { additionalProperties: false }),
        response: Type.Object({ estimated_s: Type.Number(), forwarded: Type.Boolean() }),
        handle: async (id: string): Promise<CommandOutcome> => {
          const r = await (enable ? robot.enableSmooth(id) : robot.disableSmooth(id));
          return r.ok ? { ok: true, result: { estimated_s: r.estimatedS, forwarded: r.forwarded } } : { ok: false, error: r.error };
        },
      }) as CommandRoute;
    const simReset = simResetRoute(
      TNY360_SIM_POSES,
      "stand (as a smooth enable leaves it: every joint on, on four paws), rest (as it boots: leg joints off, on its folded legs) or lying (on its back, leg joints off: a fall)",
      "the firmware as that pose leaves it (no smooth sequence, override, velocity or posture offset; odometry from here).",
      (leaseId, pose) => robot.simReset(leaseId, pose),
    );
    this.commands = [...this.commands, smooth(true), smooth(false), simReset as CommandRoute];
  }

  source(): SourceStamp | null {
    const s = this.body.state;
    if (!s.valid) return null;
    return { seq: s.seq, timestampMs: s.timestampMs, epochMs: s.epochMs, link: s.link };
  }

  read(): BodyFields | null {
    const s: Tny360Snapshot | null = this.body.snapshot();
    return s ? tnyFields(s) : null;
  }
}

/** The TNY-360's state fields (TnyFieldsSchema) from a snapshot: what the API serves, and what a recording's /tny360/state carries. Allocates. */
export function tnyFields(s: Tny360Snapshot): BodyFields {
  const j = s.joints;
  const b = s.body;
  return {
    source: s.source,
    joint_positions: j.positionRad.map(f32),
    joint_targets: j.targetRad.map(f32),
    joint_velocities: j.velocityRadS.map(f32),
    joint_efforts: j.effortNm.map(orNull),
    joint_enabled: [...j.enabled],
    joint_temperatures: j.temperatureC.map(orNull),
    imu: {
      orientation: s.imu.orientationRad.map(f32),
      angular_velocity: s.imu.angularVelocityRadS.map(orNull),
      linear_acceleration: s.imu.linearAccelerationMS2.map(orNull),
      down: s.imu.down.map(f32),
    },
    paws: { legs: [...s.paws.legs], grounded: [...s.paws.grounded] },
    odometry: {
      x: s.odometry.xM,
      y: s.odometry.yM,
      yaw: s.odometry.yawRad,
      vx: s.odometry.vxMS,
      vy: s.odometry.vyMS,
      yaw_rate: s.odometry.yawRateRadS,
    },
    locomotion: {
      target_velocity: { x: f32(b.targetVelocity.xMS), y: f32(b.targetVelocity.yMS), yaw: f32(b.targetVelocity.yawRadS) },
      posture: { x: f32(b.posture.xM), y: f32(b.posture.yM), z: f32(b.posture.zM), rx: f32(b.posture.rxRad), ry: f32(b.posture.ryRad), rz: f32(b.posture.rzRad) },
      height: b.heightM === null ? null : f32(b.heightM),
      gait: b.gait,
      enabled_mask: b.enabledMask,
      smooth: b.smooth,
    },
    power: { voltage: f32(s.power.voltageV), current: f32(s.power.currentA), power: f32(s.power.powerW) },
    errors: { count: s.errors.count, last_event_id: s.errors.lastEventId, last_error_id: s.errors.lastErrorId },
    ...(s.sim
      ? {
          sim: {
            time_s: s.sim.timeS,
            base_position_m: [...s.sim.basePositionM],
            base_orientation_xyzw: [...s.sim.baseOrientationXyzw],
            fallen: s.sim.fallen,
            real_time_factor: s.sim.realTimeFactor,
            contacts: s.sim.contacts.map((c) => ({ link: c.link, force_n: f32(c.forceN) })),
          },
        }
      : {}),
  };
}
