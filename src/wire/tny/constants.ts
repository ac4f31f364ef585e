/**
 * TNY-360 binary API: the ONE table of modules and actions (tny360.md §3–§7), plus the header
 * constants, status codes and protocol enums. Pure data; no I/O, browser-safe, allocates only at
 * module load.
 *
 * Everything that speaks the protocol reads this file: the encoder and decoder (argument and
 * return layouts), bodylink's TNY server (which actions it serves, which need control, which reply
 * after a control tick), the client SDK (method names and types are derived from it), the docs
 * (`docs/protocol/tny360.md` is checked against it by a test) and the tests.
 *
 * Action codes are the index in the firmware's `actions[]` array, because that is what the
 * dispatcher uses (§6). Names follow the firmware so searching the reference finds the code.
 */

// ---------------------------------------------------------------------------------------------
// Transport and header (§2, §3.1)

/** Default WebSocket port of the binary API (firmware `WebSocket.hpp`). */
export const TNY_DEFAULT_PORT = 5621;
/** The robot serves at most 3 sockets (`max_open_sockets = 3`). */
export const TNY_MAX_CONNECTIONS = 3;
/** Header size: type u8, flags u8, msg_id u16, module u8 + action u8 (or status u16), length u16. */
export const TNY_HEADER_BYTES = 8;
/** `WEBSOCKET_MAX_MSG_SIZE`: a larger request frame is refused (firmware: silently). */
export const TNY_MAX_REQUEST_BYTES = 256;
/** Largest payload a request can carry. */
export const TNY_MAX_REQUEST_PAYLOAD_BYTES = TNY_MAX_REQUEST_BYTES - TNY_HEADER_BYTES;
/** Largest payload the u16 length field can describe (responses have no 256-byte limit). */
export const TNY_MAX_PAYLOAD_BYTES = 0xffff;
/** SDK request timeout (2 s in both upstream SDKs). */
export const TNY_DEFAULT_TIMEOUT_MS = 2000;

/** Byte 0 of the header. */
export const MessageType = { Request: 1, Response: 2, Event: 3 } as const;
export type MessageTypeCode = (typeof MessageType)[keyof typeof MessageType];

/** Byte 1 of a request. The firmware never reads it; bodylink answers every request regardless. */
export const MessageFlags = { None: 0x00, RequireAck: 0x01 } as const;

/** `ResponseStatus` (u16 at bytes 4–5 of a response). An error response has `length = 0`. */
export const Status = {
  Ok: 0,
  UnknownModule: 1,
  UnknownAction: 2,
  InvalidParameters: 3,
  UnknownError: 4,
  NotFound: 5,
  OutOfMemory: 6,
  /**
   * bodylink's extension, never sent by the vendor firmware (which has no e-stop): a command refused
   * because the emergency stop is latched. Vendor SDKs report it as an unknown status.
   */
  EmergencyStop: 7,
} as const;
export type StatusName = keyof typeof Status;
export type StatusCode = (typeof Status)[StatusName];

/** Status names by code, for messages ("UnknownAction (2)"). */
export const STATUS_NAMES: readonly StatusName[] = ["Ok", "UnknownModule", "UnknownAction", "InvalidParameters", "UnknownError", "NotFound", "OutOfMemory", "EmergencyStop"];

export function statusName(code: number): string {
  const n = STATUS_NAMES[code];
  return n ? `${n} (${code})` : `status ${code}`;
}

// ---------------------------------------------------------------------------------------------
// Enums (§7, §8)

/** `Joint::Id`: 14 joints, legs FL, BL, BR, FR (roll, pitch, knee each), then the two ears. */
export const JointId = {
  FrontLeftHipRoll: 0,
  FrontLeftHipPitch: 1,
  FrontLeftKneePitch: 2,
  BackLeftHipRoll: 3,
  BackLeftHipPitch: 4,
  BackLeftKneePitch: 5,
  BackRightHipRoll: 6,
  BackRightHipPitch: 7,
  BackRightKneePitch: 8,
  FrontRightHipRoll: 9,
  FrontRightHipPitch: 10,
  FrontRightKneePitch: 11,
  EarLeft: 12,
  EarRight: 13,
} as const;
export type JointName = keyof typeof JointId;
export const JOINT_COUNT = 14;
/** Body `setEnabled` bitfield: bit i = JointId i. Bits 0–11 legs, 12–13 ears. */
export const JOINT_MASK_ALL = 0x3fff;
export const JOINT_MASK_LEGS = 0x0fff;
export const JOINT_MASK_EARS = 0x3000;

/** `Leg::Id`: counter-clockwise seen from above, starting front-left. */
export const LegId = { FrontLeft: 0, BackLeft: 1, BackRight: 2, FrontRight: 3 } as const;
export type LegName = keyof typeof LegId;
export const LEG_COUNT = 4;
/** Leg `setEnabled` flag bits. */
export const LegJointFlag = { HipRoll: 0x01, HipPitch: 0x02, KneePitch: 0x04 } as const;
export const LEG_FLAGS_ALL = 0x07;

/** `GaitPlanner::GaitType` in the firmware (the docs' Stand/Walk/Trot/Gallop is wrong, §12 #3). */
export const GaitType = { Creep: 0, Walk: 1, Run: 2 } as const;
export type GaitName = keyof typeof GaitType;
export const GAIT_NAMES: readonly GaitName[] = ["Creep", "Walk", "Run"];

/** Log levels as the code uses them (the doc comment is wrong, §12 #5). */
export const LogLevel = { Info: 0, Warning: 1, Error: 2, Debug: 3, Success: 4 } as const;
export type LogLevelCode = (typeof LogLevel)[keyof typeof LogLevel];

/** `ErrorSeverity` (u8). */
export const ErrorSeverity = { Trace: 1, Warning: 2, Error: 3, Critical: 4 } as const;

/** `Error::ModuleID`: a numbering separate from the protocol module ids (§7). */
export const ErrorModuleId = {
  System: 0x01,
  Protocol: 0x02,
  Gait: 0x03,
  Body: 0x04,
  Leg: 0x05,
  Joint: 0x06,
  MotorDriver: 0x07,
  MotorController: 0x08,
  IMU: 0x09,
  Laser: 0x0a,
  Power: 0x0b,
  Face: 0x0c,
  Camera: 0x0d,
  Speaker: 0x0e,
  Microphone: 0x0f,
  I2C: 0x10,
  ADC: 0x11,
  WiFi: 0x12,
  Bluetooth: 0x13,
  LED: 0x14,
  Screen: 0x15,
  Diagnostic: 0x16,
} as const;

/** Auto-life flags and levels (`DecisionLoop.hpp`). A level above Full is InvalidParameters. */
export const AutoLifeFlag = { None: 0, Safeguard: 1 << 0, AutoGait: 1 << 1, AutoPosture: 1 << 2, Animate: 1 << 3, Wandering: 1 << 4 } as const;
export const AutoLifeLevel = { Off: 0x00, Safeguard: 0x01, Animate: 0x0f, Full: 0x1f } as const;

/** `MotorController::CalibrationState`. */
export const MotorCalibrationState = { Uncalibrated: 0, Calibrating: 1, Calibrated: 2, Error: 3 } as const;

/** Ring sizes on the robot: log lines and error events. */
export const LOG_RING_SIZE = 32;
export const ERROR_RING_SIZE = 32;

// ---------------------------------------------------------------------------------------------
// Wire types (§4, §7)

/**
 * Every argument/return layout the API uses. Sizes are fixed except `string` (u16 length + bytes),
 * `bytes8` (u8 length + bytes) and `bytesRest` (everything left in the payload).
 */
export const WIRE_TYPES = {
  u8: { bytes: 1, doc: "uint8" },
  u16: { bytes: 2, doc: "uint16 LE" },
  u32: { bytes: 4, doc: "uint32 LE" },
  i32: { bytes: 4, doc: "int32 LE" },
  f32: { bytes: 4, doc: "IEEE-754 float32 LE" },
  bool: { bytes: 1, doc: "1 byte, 0 or 1 (bodylink refuses other values)" },
  string: { bytes: -1, doc: "u16 LE length, then that many bytes, no NUL" },
  vec3f: { bytes: 12, doc: "Vec3f: x, y, z float32" },
  f32x14: { bytes: 56, doc: "14 × float32, index = JointId" },
  f32x16: { bytes: 64, doc: "16 × float32, index = ADC channel" },
  errorEvent: {
    bytes: 44,
    doc: "Error::ErrorEvent as the firmware sends it: u32 timestampMs, u16 eventId, u8 module, u8 subsystem, u8 code, u8 severity, u8 payloadSize, u8[32] payload, 1 padding byte",
  },
  calibrationDataPadded: { bytes: 36, doc: "MotorController::CalibrationData as getCalibrationData sends it: 7 × f32, bool feedback_inverted @28, 3 padding bytes, f32 max_speed @32" },
  calibrationDataPacked: { bytes: 33, doc: "the same fields packed, as setCalibrationData reads them: 7 × f32, bool, f32" },
  bytes8: { bytes: -1, doc: "u8 length, then that many bytes" },
  bytesRest: { bytes: -1, doc: "the rest of the payload" },
} as const;
export type WireTypeName = keyof typeof WIRE_TYPES;

/** ErrorEvent payload capacity (bytes). */
export const ERROR_EVENT_PAYLOAD_BYTES = 32;

// ---------------------------------------------------------------------------------------------
// The table

export interface FieldSpec {
  /** camelCase name; also the key in a multi-value return object. */
  readonly name: string;
  readonly type: WireTypeName;
  readonly doc: string;
  /** Unit of the value as it crosses the wire (m, m/s, rad, rad/s, V, A, W, ms, …). */
  readonly unit?: string;
  /** A trailing argument the sender may leave out; the firmware then uses `defaultValue`. */
  readonly optional?: true;
  readonly defaultValue?: boolean;
  /** Integers: inclusive range checked by the decoder (out of range → InvalidParameters). */
  readonly max?: number;
  /** Strings: byte length must be below this (the firmware's `readString` fails at `len >= max`). */
  readonly maxLength?: number;
}

/** How bodylink's simulated robot answers an action. */
export type SimSupport = { readonly served: true } | { readonly served: false; readonly status: StatusCode; readonly why: string };

export interface ActionSpec {
  readonly code: number;
  readonly name: string;
  readonly doc: string;
  readonly args: readonly FieldSpec[];
  readonly returns: readonly FieldSpec[];
  /** Changes the robot: on bodylink's TNY server it needs control authority (a lease). */
  readonly command: boolean;
  /** The firmware runs it on the control core (`RPC::ExecuteThreadSafe`): the reply comes after the next tick. */
  readonly rpc: boolean;
  readonly sim: SimSupport;
}

export interface ModuleSpec {
  readonly code: number;
  readonly name: string;
  readonly doc: string;
  readonly actions: readonly ActionSpec[];
}

const SERVED = { served: true } as const;
/** bodylink's simulator lacks this hardware or feature: it answers UnknownError (4), never an empty Ok. */
function notServed<const W extends string>(why: W) {
  return { served: false, status: Status.UnknownError, why } as const;
}

function f<const N extends string, const T extends WireTypeName, const E extends Omit<FieldSpec, "name" | "type" | "doc"> = Record<never, never>>(
  name: N,
  type: T,
  doc: string,
  extra?: E,
): { readonly name: N; readonly type: T; readonly doc: string } & E {
  return { name, type, doc, ...(extra as E) };
}

const CLEAR_OVERRIDES = f("clearOverrides", "bool", "clear the 14 joint overrides (firmware clear_overrides); optional, default true", { optional: true, defaultValue: true });
const JOINT_ID = f("jointId", "u8", "JointId 0–13", { max: JOINT_COUNT - 1 });
const LEG_ID = f("legId", "u8", "Leg id: 0 FrontLeft, 1 BackLeft, 2 BackRight, 3 FrontRight", { max: LEG_COUNT - 1 });

interface ActionOpts<A extends readonly FieldSpec[], R extends readonly FieldSpec[], S extends SimSupport> {
  readonly args?: A;
  readonly returns?: R;
  readonly command?: boolean;
  readonly rpc?: boolean;
  readonly sim?: S;
}

function a<
  const C extends number,
  const N extends string,
  const A extends readonly FieldSpec[] = readonly [],
  const R extends readonly FieldSpec[] = readonly [],
  const S extends SimSupport = typeof SERVED,
>(
  code: C,
  name: N,
  doc: string,
  o: ActionOpts<A, R, S> = {},
): { readonly code: C; readonly name: N; readonly doc: string; readonly args: A; readonly returns: R; readonly command: boolean; readonly rpc: boolean; readonly sim: S } {
  return {
    code,
    name,
    doc,
    args: (o.args ?? []) as unknown as A,
    returns: (o.returns ?? []) as unknown as R,
    command: o.command ?? false,
    rpc: o.rpc ?? false,
    sim: (o.sim ?? SERVED) as S,
  };
}

// `A` is constrained to unknown[] on purpose: an ActionSpec[] constraint would contextually type the
// action literals and widen their inferred (empty) argument lists to FieldSpec[].
function m<const C extends number, const N extends string, const A extends readonly unknown[]>(code: C, name: N, doc: string, actions: A) {
  return { code, name, doc, actions } as const;
}

function vec3<const N extends string>(name: N, doc: string, unit: string) {
  return f(name, "vec3f", doc, { unit });
}

export const MODULES = [
  m(0x00, "system", "System: ping, reboot, auto-life, statistics, log lines, loop switches.", [
    a(0x00, "ping", "Round trip; empty payloads."),
    a(0x01, "reboot", "Replies, then restarts. bodylink's simulator resets its robot (joints off, REST pose, rings cleared); sockets stay open.", { command: true }),
    a(0x02, "setSettings", "Not implemented in the firmware (answers Ok, ignores).", {
      args: [f("settings", "string", "settings text")],
      command: true,
      sim: notServed("not implemented in the firmware either (it answers Ok and ignores the settings)"),
    }),
    a(0x03, "getSettings", "Not implemented in the firmware (answers Ok with an empty payload). Code 0x03 is the array index; the doc comment's 0x01 is wrong (§12 #4).", {
      returns: [f("settings", "string", "settings text")],
      sim: notServed("not implemented in the firmware, which answers an empty Ok that no reader can decode"),
    }),
    a(0x04, "setAutolifeLevel", "Auto-life level; above Full (0x1F) is InvalidParameters. The behaviour itself is TODO in the firmware.", {
      args: [f("level", "u8", "AutoLifeLevel bit flags", { max: AutoLifeLevel.Full })],
      command: true,
    }),
    a(0x05, "getAutolifeLevel", "Current auto-life level (default Full, 0x1F).", { returns: [f("level", "u8", "AutoLifeLevel bit flags")] }),
    a(0x06, "getStatistics", "Chip temperature, CPU usage per core, RAM usage (28 bytes).", {
      returns: [
        f("temperatureC", "f32", "chip temperature", { unit: "°C" }),
        f("cpuCore0Pct", "f32", "CPU usage of core 0 (Brain)", { unit: "%" }),
        f("cpuCore1Pct", "f32", "CPU usage of core 1 (Reflex)", { unit: "%" }),
        f("ramInternalTotalBytes", "u32", "internal RAM total", { unit: "B" }),
        f("ramInternalUsedBytes", "u32", "internal RAM used", { unit: "B" }),
        f("psramTotalBytes", "u32", "PSRAM total", { unit: "B" }),
        f("psramUsedBytes", "u32", "PSRAM used", { unit: "B" }),
      ],
    }),
    a(0x07, "getNbLogLines", "Lines in the log ring (32 lines).", { returns: [f("count", "u8", "number of lines")] }),
    a(0x08, "getLogLine", "One log line; index 0 is the oldest line (inferred). Index ≥ count is InvalidParameters.", {
      args: [f("index", "u8", "line index")],
      returns: [
        f("timestampMs", "u32", "time since boot", { unit: "ms" }),
        f("level", "u8", "LogLevel: 0 Info, 1 Warning, 2 Error, 3 Debug, 4 Success"),
        f("indent", "u8", "indentation level"),
        f("tag", "string", "subsystem tag"),
        f("message", "string", "text"),
      ],
    }),
    a(0x09, "setControlLoopEnabled", "Start or stop the 200 Hz control loop (joints freeze while stopped).", { args: [f("enabled", "bool", "run the control loop")], command: true }),
    a(0x0a, "getControlLoopEnabled", "Whether the control loop runs.", { returns: [f("enabled", "bool", "control loop runs")] }),
    a(0x0b, "setDecisionLoopEnabled", "Start or stop the 30 Hz decision loop; stopped, the 500 ms intent watchdog zeroes the velocity.", {
      args: [f("enabled", "bool", "run the decision loop")],
      command: true,
    }),
    a(0x0c, "getDecisionLoopEnabled", "Whether the decision loop runs.", { returns: [f("enabled", "bool", "decision loop runs")] }),
  ]),
  m(0x01, "protocol", "Stream settings: stubs in the firmware (no events are ever sent).", [
    a(0x00, "setStreamFrequency", "Stub in the firmware (answers Ok, does nothing). Per the docs u16; the SDKs send a float32 (§12 #9).", {
      args: [f("frequencyHz", "u16", "stream frequency", { unit: "Hz" })],
      sim: notServed("streams do not exist: the firmware stub answers Ok and never sends an event"),
    }),
    a(0x01, "setStreamFlags", "Stub in the firmware. Per the docs u8; the SDKs send a uint16 (§12 #9).", {
      args: [f("flags", "u8", "stream flags")],
      sim: notServed("streams do not exist: the firmware stub answers Ok and never sends an event"),
    }),
  ]),
  m(0x02, "gait", "Gait type of the planner.", [
    a(0x00, "setType", "Gait type: 0 Creep, 1 Walk, 2 Run; other values are InvalidParameters (the firmware does not check, §12 #16).", {
      args: [f("gait", "u8", "GaitType", { max: GaitType.Run })],
      command: true,
    }),
    a(0x01, "getType", "Current gait type (default Walk).", { returns: [f("gait", "u8", "GaitType")] }),
  ]),
  m(0x03, "body", "Body control: enable bits, velocity, posture, smooth enable/disable.", [
    a(0x00, "setEnabled", "Enable bits of the 14 joints (bit i = JointId i); bits above 13 are InvalidParameters.", {
      args: [f("enabledMask", "u16", "bitfield over JointId", { max: JOINT_MASK_ALL })],
      command: true,
      rpc: true,
    }),
    a(0x01, "getEnabled", "Enable bits of the 14 joints.", { returns: [f("enabledMask", "u16", "bitfield over JointId")], rpc: true }),
    a(0x02, "setVelocity", "Target body velocity; with clearOverrides (default true) the 14 joint overrides are cleared.", {
      args: [
        f("x", "f32", "X velocity (forward)", { unit: "m/s" }),
        f("y", "f32", "Y velocity (left)", { unit: "m/s" }),
        f("z", "f32", "rotational velocity around Z (yaw rate)", { unit: "rad/s" }),
        CLEAR_OVERRIDES,
      ],
      command: true,
    }),
    a(0x03, "getTargetVelocity", "Target body velocity (x m/s, y m/s, z = yaw rad/s).", { returns: [vec3("velocity", "x, y in m/s; z = yaw rate in rad/s", "m/s, m/s, rad/s")] }),
    a(0x04, "setPosture", "Target body position and rotation (Euler XYZ) in the world frame; z is the height above ground (default 0.12 m).", {
      args: [
        f("x", "f32", "X position", { unit: "m" }),
        f("y", "f32", "Y position", { unit: "m" }),
        f("z", "f32", "Z position (height above ground)", { unit: "m" }),
        f("rx", "f32", "X rotation (roll, Euler XYZ)", { unit: "rad" }),
        f("ry", "f32", "Y rotation (pitch, Euler XYZ)", { unit: "rad" }),
        f("rz", "f32", "Z rotation (yaw, Euler XYZ)", { unit: "rad" }),
        CLEAR_OVERRIDES,
      ],
      command: true,
    }),
    a(0x05, "getPosture", "Target body position (m) and rotation (rad, Euler XYZ), 24 bytes.", {
      returns: [f("position", "vec3f", "body position", { unit: "m" }), f("rotation", "vec3f", "body rotation, Euler XYZ", { unit: "rad" })],
    }),
    a(0x06, "enableSmooth", "Enable the whole body smoothly: REST at 5 % of max speed, then STAND at 10 %. Returns the estimated seconds (−1 on error).", {
      returns: [f("estimatedS", "f32", "estimated time to complete", { unit: "s" })],
      command: true,
    }),
    a(0x07, "disableSmooth", "Go to REST at 10 % of max speed, then disable the 12 leg joints. Returns the estimated seconds.", {
      returns: [f("estimatedS", "f32", "estimated time to complete", { unit: "s" })],
      command: true,
    }),
  ]),
  m(0x04, "leg", "Per-leg enable bits, absolute foot override, contact switch.", [
    a(0x00, "setEnabled", "Enable bits of one leg (bit 0 hip roll, bit 1 hip pitch, bit 2 knee pitch).", {
      args: [LEG_ID, f("flags", "u8", "LegJointFlag bits", { max: LEG_FLAGS_ALL })],
      command: true,
      rpc: true,
    }),
    a(0x01, "getEnabled", "Enable bits of one leg.", { args: [LEG_ID], returns: [f("flags", "u8", "LegJointFlag bits")], rpc: true }),
    a(
      0x02,
      "setPosition",
      "Absolute foot override in the planner's foot frame (ground level under the body centre; default FL foot at (0.09, 0.10, 0)); clears that leg's joint overrides when clearOverrides.",
      {
        args: [LEG_ID, f("x", "f32", "foot X", { unit: "m" }), f("y", "f32", "foot Y", { unit: "m" }), f("z", "f32", "foot Z", { unit: "m" }), CLEAR_OVERRIDES],
        command: true,
      },
    ),
    a(0x03, "getTargetPosition", "The stored leg override (not the live planner target).", { args: [LEG_ID], returns: [f("position", "vec3f", "foot override", { unit: "m" })] }),
    a(0x04, "getGrounded", "Paw contact switch (grounded when its ADC voltage is below 2.0 V).", { args: [LEG_ID], returns: [f("grounded", "bool", "paw touches the ground")] }),
  ]),
  m(0x05, "joint", "Per-joint enable, absolute angle override, angle read-outs.", [
    a(0x00, "setEnabled", "Enable one joint.", { args: [JOINT_ID, f("enabled", "bool", "enable")], command: true, rpc: true }),
    a(0x01, "getEnabled", "Whether one joint is enabled.", { args: [JOINT_ID], returns: [f("enabled", "bool", "enabled")], rpc: true }),
    a(0x02, "setAngle", "Absolute joint override; a target outside the joint's limits is InvalidParameters and the old one is kept.", {
      args: [JOINT_ID, f("angle", "f32", "target angle", { unit: "rad" })],
      command: true,
    }),
    a(0x03, "getTargetAngle", "Target angle the joint is driven to.", { args: [JOINT_ID], returns: [f("angle", "f32", "target angle", { unit: "rad" })] }),
    a(0x04, "getFeedbackAngle", "Potentiometer feedback angle (ears have no feedback: their model angle).", { args: [JOINT_ID], returns: [f("angle", "f32", "feedback angle", { unit: "rad" })] }),
    a(0x05, "getModelAngle", "Velocity-limited internal model angle.", { args: [JOINT_ID], returns: [f("angle", "f32", "model angle", { unit: "rad" })] }),
    a(0x06, "getEstimatedAngle", "Estimated angle (filter of model and feedback).", { args: [JOINT_ID], returns: [f("angle", "f32", "estimated angle", { unit: "rad" })] }),
    a(
      0x07,
      "setJointAngles",
      "Absolute overrides for all 14 joints, index = JointId (FL, BL, BR, FR, EarL, EarR; the doc comment's order is wrong, §12 #6). Any value outside its limits refuses the whole call.",
      {
        args: [f("angles", "f32x14", "target angles, index = JointId", { unit: "rad" })],
        command: true,
      },
    ),
    a(0x08, "getJointAngles", "Feedback angles of all 14 joints, index = JointId.", { returns: [f("angles", "f32x14", "feedback angles, index = JointId", { unit: "rad" })] }),
  ]),
  m(0x06, "motor", "Raw servo duty cycle and calibration (joint_id selects the servo).", [
    a(0x00, "setDutyCycle", "Write a PWM duty cycle (0.0–5.0 ms) straight to the PCA9685.", {
      args: [JOINT_ID, f("dutyMs", "f32", "pulse width", { unit: "ms" })],
      command: true,
      sim: notServed("the simulator has no PWM driver to bypass the joint model"),
    }),
    a(0x01, "getDutyCycle", "Current PWM pulse width (the joint's target angle through its calibrated range).", { args: [JOINT_ID], returns: [f("dutyMs", "f32", "pulse width", { unit: "ms" })] }),
    a(0x02, "getCalibrationState", "0 Uncalibrated, 1 Calibrating, 2 Calibrated, 3 Error.", { args: [JOINT_ID], returns: [f("state", "u8", "MotorCalibrationState")] }),
    a(0x03, "getCalibrationData", "Calibration record, 36 bytes as the firmware sends it (with 3 padding bytes).", {
      args: [JOINT_ID],
      returns: [f("data", "calibrationDataPadded", "calibration record")],
    }),
    a(0x04, "setCalibrationData", "Store a calibration record (33 packed bytes after joint_id).", {
      args: [JOINT_ID, f("data", "calibrationDataPacked", "calibration record")],
      command: true,
      sim: notServed("the simulator's servos are ideal: there is no calibration to store"),
    }),
    a(0x05, "deleteCalibrationData", "Delete the stored calibration.", { args: [JOINT_ID], command: true, sim: notServed("the simulator's servos are ideal: there is no calibration to delete") }),
    a(0x06, "startCalibration", "Auto-calibrate against the end-stops.", { args: [JOINT_ID], command: true, sim: notServed("the simulator has no end-stops to calibrate against") }),
    a(0x07, "stopCalibration", "Stop an auto-calibration.", { args: [JOINT_ID], command: true, sim: notServed("the simulator has no end-stops to calibrate against") }),
    a(0x08, "getCalibrationProgress", "Calibration progress 0.0–1.0.", {
      args: [JOINT_ID],
      returns: [f("progress", "f32", "0.0–1.0")],
      sim: notServed("the simulator has no end-stops to calibrate against"),
    }),
  ]),
  m(0x07, "imu", "MPU6050 inertial unit.", [
    a(0x00, "getAcceleration", "Specific force in the body frame (the firmware answers an empty Ok, §12 #7; bodylink serves it).", { returns: [vec3("acceleration", "x, y, z", "m/s²")] }),
    a(0x01, "getAngularVelocity", "Angular velocity in the body frame (the firmware answers an empty Ok, §12 #7; bodylink serves it).", { returns: [vec3("angularVelocity", "x, y, z", "rad/s")] }),
    a(0x02, "getDownVector", "Unit gravity direction in the body frame.", { returns: [vec3("down", "unit vector", "1")] }),
    a(0x03, "getOrientation", "Euler XYZ (roll, pitch, yaw). The firmware always reports yaw 0 (§12 #15); bodylink's simulator reports its integrated heading.", {
      returns: [vec3("orientation", "roll, pitch, yaw", "rad")],
    }),
    a(0x04, "getCalibrationState", "Not implemented in the firmware (empty payload).", {
      returns: [f("state", "u8", "calibration state")],
      sim: notServed("IMU calibration is not implemented in the firmware either"),
    }),
    a(0x05, "getCalibrationData", "Not implemented in the firmware.", {
      returns: [f("data", "bytesRest", "calibration bytes (TBD upstream)")],
      sim: notServed("IMU calibration is not implemented in the firmware either"),
    }),
    a(0x06, "setCalibrationData", "Not implemented in the firmware.", {
      args: [f("data", "bytesRest", "calibration bytes (TBD upstream)")],
      command: true,
      sim: notServed("IMU calibration is not implemented in the firmware either"),
    }),
    a(0x07, "startCalibration", "Not implemented in the firmware.", { command: true, sim: notServed("IMU calibration is not implemented in the firmware either") }),
    a(0x08, "stopCalibration", "Not implemented in the firmware.", { command: true, sim: notServed("IMU calibration is not implemented in the firmware either") }),
    a(0x09, "getCalibrationProgress", "Not implemented in the firmware; u8 percent per the docs (the SDKs read a float32).", {
      returns: [f("progressPct", "u8", "percent")],
      sim: notServed("IMU calibration is not implemented in the firmware either"),
    }),
  ]),
  m(0x09, "power", "INA219 power monitor.", [
    a(0x00, "getVoltage", "Bus voltage.", { returns: [f("voltage", "f32", "bus voltage", { unit: "V" })] }),
    a(0x01, "getCurrent", "Current drawn.", { returns: [f("current", "f32", "current", { unit: "A" })] }),
    a(0x02, "getPower", "Power drawn.", { returns: [f("power", "f32", "power", { unit: "W" })] }),
  ]),
  m(0x0e, "i2c", "Secondary I²C bus (extension port).", [
    a(0x00, "pingDevice", "Whether a device acknowledges the 7-bit address.", { args: [f("address", "u8", "7-bit address", { max: 0x7f })], returns: [f("found", "bool", "device answered")] }),
    a(0x01, "writeRegisters", "Write registers: address, register, u8 length, bytes (the SDKs leave the length out, §12 #9).", {
      args: [f("address", "u8", "7-bit address", { max: 0x7f }), f("register", "u8", "first register"), f("data", "bytes8", "bytes to write")],
      command: true,
      sim: notServed("no device is attached to the simulated extension bus"),
    }),
    a(0x02, "readRegisters", "Read `length` registers (OutOfMemory when the firmware cannot allocate).", {
      args: [f("address", "u8", "7-bit address", { max: 0x7f }), f("register", "u8", "first register"), f("length", "u8", "bytes to read")],
      returns: [f("data", "bytesRest", "register bytes")],
      sim: notServed("no device is attached to the simulated extension bus"),
    }),
  ]),
  m(0x0f, "adc", "Analog multiplexer: joint feedback and paw contacts.", [
    a(0x00, "getAllChannels", "16 channel voltages (joint feedback on the channels of §8, paws on 3, 7, 11, 15).", {
      returns: [f("volts", "f32x16", "channel voltages, index = channel", { unit: "V" })],
      rpc: true,
    }),
  ]),
  m(0x10, "wifi", "Wi-Fi station credentials.", [
    a(0x00, "connectToAP", "Store credentials in NVS and join that network.", {
      args: [f("ssid", "string", "network name, < 32 bytes", { maxLength: 32 }), f("password", "string", "password, < 64 bytes", { maxLength: 64 })],
      command: true,
      sim: notServed("the simulator has no radio"),
    }),
  ]),
  m(0x13, "error", "Error event ring (32 events).", [
    a(0x00, "getErrorCount", "Events in the ring.", { returns: [f("count", "u16", "events stored")] }),
    a(0x01, "getErrorEventByIndex", "One event; index 0 is the most recent. Index ≥ count is InvalidParameters.", {
      args: [f("index", "u16", "0 = most recent")],
      returns: [f("event", "errorEvent", "the event")],
    }),
    a(0x02, "getErrorEventById", "One event by its eventId; NotFound (5) when the ring has no such event (inferred).", {
      args: [f("eventId", "u16", "event id")],
      returns: [f("event", "errorEvent", "the event")],
    }),
    a(0x03, "clearErrorEvents", "Empty the ring.", { command: true }),
  ]),
  m(0x14, "diagnostic", "Self-checks (the docs' 0x13 is wrong; the firmware uses 0x14, §12 #2).", [
    a(0x00, "isEnabled", "Whether the robot booted in diagnostic mode.", { returns: [f("enabled", "bool", "diagnostic mode")] }),
    a(0x01, "rebootInDiagnosticMode", "Reboot into diagnostic mode (firmware name RebootInDiagnosticMode; UnknownError on failure).", {
      command: true,
      sim: notServed("the simulator has no diagnostic boot mode"),
    }),
    a(0x02, "checkLED", "0 = success, else an error id.", { returns: [f("result", "u8", "0 success")], sim: notServed("the simulator has no LEDs") }),
    a(0x03, "checkI2C", "0 = success, else an error id.", { returns: [f("result", "u8", "0 success")], sim: notServed("the simulator does not model the I²C buses") }),
    a(0x04, "checkSpeaker", "0 = success, else an error id.", { returns: [f("result", "u8", "0 success")], sim: notServed("the simulator has no speaker") }),
    a(0x05, "checkMicrophone", "0 = success, else an error id.", { returns: [f("result", "u8", "0 success")], sim: notServed("the simulator has no microphone") }),
    a(0x06, "checkCamera", "0 = success, else an error id.", { returns: [f("result", "u8", "0 success")], sim: notServed("the simulator has no camera") }),
    a(0x07, "checkLaser", "0 = success, else an error id.", { returns: [f("result", "u8", "0 success")], sim: notServed("the simulator has no laser") }),
    a(0x08, "checkIMU", "0 = success, else an error id.", { returns: [f("result", "u8", "0 success")] }),
    a(0x09, "checkPower", "0 = success, else an error id.", { returns: [f("result", "u8", "0 success")] }),
    a(0x0a, "checkMotorDriver", "0 = success, else an error id.", { returns: [f("result", "u8", "0 success")] }),
    a(0x0b, "checkAnalogReader", "0 = success, else an error id.", { returns: [f("result", "u8", "0 success")] }),
    a(0x0c, "checkControlLoop", "0 = success; 1 when the control loop is stopped (inferred id).", { returns: [f("result", "u8", "0 success")] }),
    a(0x0d, "checkDecisionLoop", "0 = success; 1 when the decision loop is stopped (inferred id).", { returns: [f("result", "u8", "0 success")] }),
  ]),
] as const;

// The table must satisfy the spec shape (checked here rather than with `satisfies`, which would
// widen the inferred literal argument lists through contextual typing).
const _tableShape: readonly ModuleSpec[] = MODULES;
void _tableShape;

/**
 * Module ids that the website docs name but the firmware does not register: they answer
 * UnknownModule (1), exactly like any other unregistered id (§5, §12 #2).
 */
export const UNREGISTERED_MODULES: readonly { readonly code: number | null; readonly name: string; readonly note: string }[] = [
  { code: 0x08, name: "laser", note: "docs say 0x09, which clashes with power; no firmware actions" },
  { code: 0x0b, name: "face", note: "docs only; no firmware actions" },
  { code: 0x0c, name: "camera", note: "only the MJPEG HTTP server on port 90" },
  { code: 0x0d, name: "speaker", note: "docs only; no firmware actions" },
  { code: null, name: "microphone", note: "docs say 0x0E, which is i2c" },
  { code: 0x11, name: "bluetooth", note: "file exists, empty action table, not registered" },
  { code: 0x12, name: "led", note: "file exists, empty action table, not registered" },
];

// ---------------------------------------------------------------------------------------------
// Derived lookups (built once at load)

export type ModuleTable = typeof MODULES;
export type ModuleName = ModuleTable[number]["name"];
export type ModuleOf<M extends ModuleName> = Extract<ModuleTable[number], { readonly name: M }>;
export type ActionName<M extends ModuleName> = ModuleOf<M>["actions"][number]["name"];
export type ActionOf<M extends ModuleName, A extends string> = Extract<ModuleOf<M>["actions"][number], { readonly name: A }>;

/** Module spec by code (index 0–255); undefined = unregistered → UnknownModule. */
export const MODULE_BY_CODE: readonly (ModuleSpec | undefined)[] = (() => {
  const t: (ModuleSpec | undefined)[] = new Array(256).fill(undefined);
  for (const mod of MODULES as readonly ModuleSpec[]) t[mod.code] = mod;
  return t;
})();

/** Module spec by name. */
export const MODULE_BY_NAME: ReadonlyMap<string, ModuleSpec> = new Map((MODULES as readonly ModuleSpec[]).map((mod) => [mod.name, mod]));

/** One number per action (module code × 256 + action code), e.g. for a set of served actions that crosses threads. */
export function servedKey(moduleCode: number, actionCode: number): number {
  return moduleCode * 256 + actionCode;
}

/**
 * The action at `actionCode` of a module, or undefined. Bounds-checked against the real action
 * count: the firmware's `sizeof(actions)` bug (§12 #1) is not reproduced.
 */
export function actionByCode(mod: ModuleSpec, actionCode: number): ActionSpec | undefined {
  const act = mod.actions[actionCode];
  return act && act.code === actionCode ? act : undefined;
}

/** Look up a spec by names (throws for an unknown name: a programming error). */
export function actionSpec(moduleName: string, actionName: string): { module: ModuleSpec; action: ActionSpec } {
  const mod = MODULE_BY_NAME.get(moduleName);
  const act = mod?.actions.find((x) => x.name === actionName);
  if (!mod || !act) throw new Error(`no TNY-360 action ${moduleName}.${actionName}`);
  return { module: mod, action: act };
}
