/**
 * The AIRBOT Arm-P7 as bodylink models it: 7 revolute joints, their limits, and the link model
 * the simulator's gravity-torque and IMU computations use. One table per quantity, joint order
 * J1..J7 everywhere (the order of the P7 SDK's `angles`/`velocities`/`efforts` tuples).
 *
 * Sources (see docs/p7.md):
 * - command limits: the P7 SDK guide's `ARM_JOINT_LIMITS` (raw limits shrunk by 0.010 rad);
 * - effort limits: the upper bounds of the SDK's `JointMoveOptions.eff` ((0,70)×2, (0,40)×2, (0,12)×3);
 * - default speed π/3 rad/s: the SDK's default `set_arm_speed`.
 * Everything else (axis layout, link lengths and masses, speed and acceleration limits, friction,
 * the IMU mounting) is **the simulator's own model**, chosen to be plausible for a 7-DoF arm of
 * this size; the vendor publishes none of it.
 *
 * Pure data, no I/O, browser-safe. Allocates only at module load.
 */

export const P7_JOINT_COUNT = 7;

/** Joint names in SDK order (the P7 guide calls them J1..J7). */
export const P7_JOINT_NAMES = Object.freeze(["joint1", "joint2", "joint3", "joint4", "joint5", "joint6", "joint7"] as const);
export type P7JointName = (typeof P7_JOINT_NAMES)[number];

/** Lower command limit per joint, rad (SDK `ARM_JOINT_LIMITS`). Targets below are refused. */
export const P7_MIN_RAD: readonly number[] = Object.freeze([-2.9569, -2.5731, -2.9569, -2.4335, -2.9569, -0.77539, -1.5608]);
/** Upper command limit per joint, rad (SDK `ARM_JOINT_LIMITS`). Targets above are refused. */
export const P7_MAX_RAD: readonly number[] = Object.freeze([2.9569, 0.82775, 2.9569, 0.16452, 2.9569, 0.77539, 1.2117]);
/** The raw (mechanical) limits are the command limits widened by this much, rad (SDK guide). */
export const P7_RAW_LIMIT_MARGIN_RAD = 0.01;

/**
 * Maximum joint speed, rad/s (simulator model). The SDK accepts `set_arm_speed` values up to
 * 7.855 rad/s; we use π rad/s for the three big joints and 2π rad/s for the wrist, which is what
 * arms of this class typically reach. A requested speed above these is clamped to them.
 */
export const P7_MAX_SPEED_RAD_S: readonly number[] = Object.freeze([Math.PI, Math.PI, Math.PI, Math.PI, 2 * Math.PI, 2 * Math.PI, 2 * Math.PI]);
/** Default move speed, rad/s: π/3 for every joint (the SDK's default arm speed). */
export const P7_DEFAULT_SPEED_RAD_S = Math.PI / 3;
/** Acceleration limit of planned moves and servo tracking, rad/s² (simulator model). */
export const P7_MAX_ACCEL_RAD_S2: readonly number[] = Object.freeze([8, 8, 10, 10, 20, 20, 20]);
/** Deceleration used to stop (error, emergency stop, lease lost, link lost), rad/s² (simulator model). */
export const P7_STOP_DECEL_RAD_S2: readonly number[] = Object.freeze([16, 16, 20, 20, 40, 40, 40]);
/** Effort limit per joint, N·m (upper bounds of the SDK's `JointMoveOptions.eff`). Reported efforts saturate here. */
export const P7_EFFORT_LIMIT_NM: readonly number[] = Object.freeze([70, 70, 40, 40, 12, 12, 12]);
/** Viscous friction per joint, N·m per rad/s (simulator model). */
export const P7_VISCOUS_NM_S_RAD: readonly number[] = Object.freeze([0.5, 0.5, 0.3, 0.3, 0.1, 0.1, 0.1]);
/** Motor rotor inertia reflected through the gearbox, kg·m² (simulator model). */
export const P7_ROTOR_INERTIA_KG_M2: readonly number[] = Object.freeze([0.05, 0.05, 0.03, 0.03, 0.01, 0.01, 0.01]);

/**
 * Joint axes in each joint's parent frame (simulator model): yaw, pitch, roll, pitch, roll,
 * pitch, roll. At all-zero angles the arm points straight up along the base's +z, so gravity
 * torques are zero there. 0 = x, 1 = y, 2 = z.
 */
export const P7_JOINT_AXIS: readonly (0 | 1 | 2)[] = Object.freeze([2, 1, 2, 1, 2, 1, 2] as const);
/** Height of joint 1 above the base origin, m (simulator model). */
export const P7_BASE_HEIGHT_M = 0.12;
/**
 * Length of link i (from joint i to joint i+1, along the link's own +z), m; the last one is
 * joint 7 to the flange (simulator model; total reach 0.8 m above joint 1).
 */
export const P7_LINK_LENGTH_M: readonly number[] = Object.freeze([0.1, 0.05, 0.25, 0.05, 0.22, 0.05, 0.08]);
/** Mass of link i, kg, as a point mass at the middle of the link (simulator model; 7.5 kg in all). */
export const P7_LINK_MASS_KG: readonly number[] = Object.freeze([1.5, 1.2, 1.8, 0.9, 1.2, 0.5, 0.4]);

/** Standard gravity, m/s²; gravity points along the base's −z. */
export const GRAVITY_M_S2 = 9.80665;

/**
 * Where the simulated IMU sits (simulator model; the P7's real mounting is not public): on link 7,
 * `offsetM` from joint 7 along the link's +z, with its axes aligned with link 7's frame. At zero
 * angles its axes are the base's, so at rest it reads (0, 0, +g).
 */
export const P7_IMU_MOUNT = Object.freeze({ link: 7, offsetM: 0.03, frame: "arm_imu" as const });

/** The pose the simulator starts in: all zeros (arm upright), inside every limit. */
export const P7_HOME_RAD: readonly number[] = Object.freeze([0, 0, 0, 0, 0, 0, 0]);

/** Poses a physics P7's world can be reset to (`POST /v1/sim/reset`): its home, at rest. */
export const P7_SIM_POSES = ["home"] as const;
export type P7SimPose = (typeof P7_SIM_POSES)[number];
/** Each reset pose's joint angles, rad. */
export const P7_SIM_POSE_RAD: Readonly<Record<P7SimPose, readonly number[]>> = Object.freeze({ home: P7_HOME_RAD });

/** Units of every quantity the P7 state carries (for docs and API schemas). */
export const P7_UNITS = Object.freeze({
  angles: "rad",
  velocities: "rad/s",
  efforts: "N·m",
  temperatures: "°C",
  errorIds: "raw integer (0 = normal)",
  angularVelocity: "rad/s (arm_imu frame)",
  linearAcceleration: "m/s² (arm_imu frame, includes gravity)",
  timestampMs: "ms, monotonic (runtime clock)",
  epochMs: "ms since the Unix epoch",
} as const);
