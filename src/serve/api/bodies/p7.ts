/**
 * The robot API's AIRBOT P7 adapter: the P7 runtime's three snapshot models (ArmJointState,
 * ArmMotorState, ImuState; docs/p7.md) as one state message, and the arm's commands.
 *
 * State fields (the same on the stream and on REST; 7 values per joint array, J1..J7):
 * `joint_positions` rad, `joint_velocities` rad/s, `joint_efforts` N·m, `motor_temperatures` °C,
 * `error_ids` raw integers (0 normal), `imu.angular_velocity` rad/s and `imu.linear_acceleration`
 * m/s² including gravity, in the arm_imu frame.
 *
 * Values are copied from the runtime's store by a cycle listener (perform side, no allocation)
 * whenever all three models of that cycle are valid, with that cycle's stamp. When the runtime
 * has no complete state (link lost, a length mismatch, stopped), the last complete one is served
 * with its own source stamp and the current link status, so a client sees both why values stopped
 * changing and how old they are (the SDK turns that into null).
 *
 * Commands (lease in the header; each body typed by its route's schema, `Static<S>`; the runtime
 * checks the values against the arm's limits once, and its driver's `write` takes them): move-joints (point to point with a speed
 * limit), servo-joints (track targets at full speed), clear-error. Targets outside the command
 * limits are **refused** by the P7 runtime (400 with the joint named), not clamped; speeds above
 * a joint's maximum are clamped and the answer lists the speeds applied; a joint with a nonzero
 * error id makes motion commands fail with 409 BL_ERR_CMD_JOINT_FAULT until cleared.
 *
 * Prepare side (allocates).
 */
import Type, { type Static } from "typebox";
import { SIM_WORLD_SLOTS } from "../../../bodies/sim-world.js";
import { P7_JOINT_COUNT, P7_JOINT_NAMES, P7_MAX_RAD, P7_MAX_SPEED_RAD_S, P7_MIN_RAD, P7_SIM_POSES } from "../../../bodies/p7/joints.js";
import type { P7State } from "../../../bodies/p7/state.js";
import type { P7Body } from "../../../runtime/p7-robot.js";
import type { BodyAdapter, BodyFields, CommandOutcome, CommandRoute, ReadRoute, SourceStamp } from "../adapter.js";
import { numbers } from "../schemas.js";
import { P7_CONTACT_LINKS } from "../../../bodies/p7/mjcf.js";
import { AdapterBase, f32 } from "./common.js";
import { SimWorldSchema, simResetRoute, simWorldAnswer } from "./sim-world.js";

const n = P7_JOINT_COUNT;
const jointNote = `${n} values, J1..J7`;

export const P7FieldsSchema = Type.Object({
  joint_positions: numbers(n, `rad, ${jointNote}`),
  joint_velocities: numbers(n, `rad/s, ${jointNote}`),
  joint_efforts: numbers(n, `N·m (motor torque feedback, not a calibrated force sensor), ${jointNote}`),
  motor_temperatures: numbers(n, `°C, ${jointNote}`),
  error_ids: Type.Array(Type.Integer({ minimum: 0 }), {
    minItems: n,
    maxItems: n,
    description: `Raw error id per motor: 0 normal, anything else an error bit or code (keep the integer), ${jointNote}`,
  }),
  imu: Type.Object(
    {
      angular_velocity: numbers(3, "rad/s, x y z"),
      linear_acceleration: numbers(3, "m/s², x y z, including gravity (at rest its norm is about 9.81)"),
    },
    { description: "In the arm_imu frame" },
  ),
  sim: Type.Optional(SimWorldSchema),
});

const limitsDoc = P7_JOINT_NAMES.map((j, i) => `${j} [${P7_MIN_RAD[i]}, ${P7_MAX_RAD[i]}]`).join(", ");

const MoveSchema = Type.Object(
  {
    positions: numbers(n, `Targets, rad, ${jointNote}; each inside its command limit (${limitsDoc}) or the command is refused`),
    speed: Type.Optional(
      Type.Union([Type.Number({ exclusiveMinimum: 0 }), numbers(n, "rad/s per joint")], {
        description: `Speed limit, rad/s: one number for every joint or ${n}; default π/3; above a joint's maximum (${P7_MAX_SPEED_RAD_S.map((v) => v.toFixed(3)).join(", ")}) → clamped`,
      }),
    ),
  },
  { additionalProperties: false },
);
const ServoSchema = Type.Object({ positions: numbers(n, `Targets, rad, ${jointNote}; inside the command limits`) }, { additionalProperties: false });
const ClearSchema = Type.Object({ joint: Type.Optional(Type.Integer({ minimum: 0, maximum: n - 1, description: "Joint index 0..6; omit for every joint" })) }, { additionalProperties: false });

export class P7Adapter extends AdapterBase<P7Body> implements BodyAdapter {
  readonly kind = "p7" as const;
  readonly jointNames: readonly string[] = P7_JOINT_NAMES;
  readonly schemas = { stream: P7FieldsSchema, rest: P7FieldsSchema };
  readonly reads: readonly ReadRoute[] = [];
  readonly commands: readonly CommandRoute[];
  // The last complete cycle's values (perform-side copy of the store; no allocation).
  #seq = 0;
  #timestampMs = 0;
  #epochMs = 0;
  readonly #angles = new Float64Array(n);
  readonly #velocities = new Float64Array(n);
  readonly #efforts = new Float64Array(n);
  readonly #temperatures = new Float64Array(n);
  readonly #errorIds = new Float64Array(n);
  readonly #angularVelocity = new Float64Array(3);
  readonly #linearAcceleration = new Float64Array(3);
  readonly #simWorld = new Float64Array(SIM_WORLD_SLOTS);
  readonly #simContacts = new Float32Array(P7_CONTACT_LINKS.length);

  constructor(robot: P7Body) {
    super(robot);
    this.listen(() => this.#copy());
    const move: CommandRoute<Static<typeof MoveSchema>> = {
      path: "/v1/commands/move-joints",
      summary: "Move all 7 joints to targets (rad) under a speed limit; joints arrive together",
      description: "Replaces any motion in progress. Answers the estimated duration and the speed limits applied.",
      request: MoveSchema,
      response: Type.Object({ eta_s: Type.Number(), speed_rad_s: numbers(n, "The speed limit applied per joint, rad/s") }),
      handle: (leaseId, b) => {
        const r = robot.moveJoints(leaseId, b.positions, b.speed === undefined ? {} : { speedRadS: b.speed });
        return r.ok ? { ok: true, result: { eta_s: r.etaS, speed_rad_s: [...r.speedRadS] } } : r;
      },
    };
    const servo: CommandRoute<Static<typeof ServoSchema>> = {
      path: "/v1/commands/servo-joints",
      summary: "Servo: each joint tracks its target (rad) at full speed; each call replaces the last",
      request: ServoSchema,
      response: Type.Object({}),
      handle: (leaseId, b) => {
        const r = robot.servoJoints(leaseId, b.positions);
        return r.ok ? { ok: true, result: {} } : r;
      },
    };
    const clear: CommandRoute<Static<typeof ClearSchema>> = {
      path: "/v1/commands/clear-error",
      summary: "Clear a joint's error id (or every joint's); diagnose the fault first",
      request: ClearSchema,
      response: Type.Object({ cleared_joints: Type.Array(Type.Integer(), { description: "Indices whose error id was nonzero and is now 0" }) }),
      handle: async (leaseId, b): Promise<CommandOutcome> => {
        const r = await robot.clearError(leaseId, b.joint);
        this.#copy(); // the runtime shows cleared ids at once; so does the API
        return r.ok ? { ok: true, result: { cleared_joints: [...r.clearedJoints] } } : r;
      },
    };
    const simReset = simResetRoute(P7_SIM_POSES, "home: every joint at 0 (upright), the pose the simulator starts in", "the arm holds it until commanded.", async (leaseId, pose) => {
      const r = await robot.simReset(leaseId, pose);
      this.#copy(); // the runtime shows the pose at once; so does the API
      return r;
    });
    this.commands = [move, servo, clear, simReset] as CommandRoute[];
  }

  /** Perform side: copy the store when the cycle produced all three models. */
  #copy(): void {
    const s = this.body.state;
    if (!s.jointValid || !s.motorValid || !s.imuValid) return;
    this.#seq = s.seq;
    this.#timestampMs = s.timestampMs;
    this.#epochMs = s.epochMs;
    this.#angles.set(s.angles);
    this.#velocities.set(s.velocities);
    this.#efforts.set(s.efforts);
    this.#temperatures.set(s.temperatures);
    this.#errorIds.set(s.errorIds);
    this.#angularVelocity.set(s.angularVelocity);
    this.#linearAcceleration.set(s.linearAcceleration);
    this.#simWorld.set(s.simWorld);
    this.#simContacts.set(s.simContacts);
  }

  source(): SourceStamp | null {
    if (this.#seq === 0) return null;
    return { seq: this.#seq, timestampMs: this.#timestampMs, epochMs: this.#epochMs, link: this.body.link };
  }

  read(): BodyFields | null {
    if (this.#seq === 0) return null;
    return p7Fields({
      angles: this.#angles,
      velocities: this.#velocities,
      efforts: this.#efforts,
      temperatures: this.#temperatures,
      errorIds: this.#errorIds,
      angularVelocity: this.#angularVelocity,
      linearAcceleration: this.#linearAcceleration,
      simWorld: this.#simWorld,
      simContacts: this.#simContacts,
    });
  }
}

/** The P7's state fields (P7FieldsSchema) from a state's arrays: what the API serves, and what a recording's /p7/state carries. Allocates. */
export function p7Fields(s: Pick<P7State, "angles" | "velocities" | "efforts" | "temperatures" | "errorIds" | "angularVelocity" | "linearAcceleration" | "simWorld" | "simContacts">): BodyFields {
  const contacts: Array<{ link: string; force_n: number }> = [];
  for (let i = 0; i < P7_CONTACT_LINKS.length; i++) if (s.simContacts[i]! > 0) contacts.push({ link: P7_CONTACT_LINKS[i]!, force_n: f32(s.simContacts[i]!) });
  const sim = simWorldAnswer(s.simWorld, contacts);
  return {
    joint_positions: Array.from(s.angles),
    joint_velocities: Array.from(s.velocities),
    joint_efforts: Array.from(s.efforts),
    motor_temperatures: Array.from(s.temperatures),
    error_ids: Array.from(s.errorIds),
    imu: { angular_velocity: Array.from(s.angularVelocity), linear_acceleration: Array.from(s.linearAcceleration) },
    ...(sim ? { sim } : {}),
  };
}
