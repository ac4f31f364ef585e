/**
 * NAO v6 chest-board link: the one table of codes, sizes and layouts.
 * The encoder, the decoder, the simulator, docs/protocol/chestboard.md and the tests all read this.
 *
 * From the seeds (001 "Chest board link"): USB vendor id, EP1 bulk OUT/IN, 20 ms timeouts, vendor
 * request 0x14 (5-byte ack: 0x2a + CRC-32 of the frame), 0x15 (2-byte status), ≤ 255 messages and
 * ≤ 4 KB per frame, a length table, standard CRC-32, messages starting kind/bus/address, the
 * 4,635-byte preference block read in 32-byte pieces, the handshake bytes `00 bus board 20`,
 * `01 bus board 07|08`, the 32-byte configuration answer.
 * Everything else here is **(inferred)** and defined once: see docs/protocol/chestboard.md.
 */

export const USB = {
  /** The chest board's vendor id (udev rule 90-hal.rules). */
  VENDOR_ID: 0xffff,
  /** Bulk OUT endpoint 1. */
  EP_OUT: 0x01,
  /** Bulk IN endpoint 1. */
  EP_IN: 0x81,
  BULK_TIMEOUT_MS: 20,
  /** Largest answer frame read from EP1 IN. */
  BULK_IN_MAX_BYTES: 512,
  /** Vendor IN request: acknowledge the frame just sent. */
  REQ_ACK: 0x14,
  ACK_BYTES: 5,
  /** First byte of a valid acknowledgement. */
  ACK_MAGIC: 0x2a,
  /** Vendor IN request: chest board status, asked when a bulk read timed out (inferred meaning). */
  REQ_STATUS: 0x15,
  STATUS_BYTES: 2,
} as const;

/** Frame layout (inferred): u16 count, count × u16 message lengths, messages, u32 CRC-32. */
export const FRAME = {
  MAX_MESSAGES: 255,
  MAX_BYTES: 4096,
  COUNT_BYTES: 2,
  LENGTH_ENTRY_BYTES: 2,
  CRC_BYTES: 4,
  /** Smallest message: kind, bus, address. */
  MESSAGE_HEADER_BYTES: 3,
} as const;

/** Message kinds. Requests from the host have the high bit clear; answers set it (inferred). */
export enum Kind {
  /** `00 bus board reg`: read a board register (0x20 = configuration, the handshake). */
  Read = 0x00,
  /** `01 bus board op`: a one-byte board command (start, chest tools). */
  Control = 0x01,
  /** `02 bus board` + per joint {u16 position counts, u8 stiffness 0..255}. */
  Actuate = 0x02,
  /** `03 00 group` + one u8 intensity per LED of the group. */
  Leds = 0x03,
  /** `04 00 00` + u16 offset + u8 length: read a piece of the preference block. */
  PrefRead = 0x04,
  /** `05 00 03` + u8 enables (bit 0 left, bit 1 right). */
  Sonar = 0x05,

  ReadReply = 0x80,
  ControlReply = 0x81,
  JointState = 0x82,
  HandState = 0x83,
  PrefData = 0x84,
  FootState = 0x85,
  InertialState = 0x86,
  BatteryState = 0x87,
  SonarState = 0x88,
  ChestState = 0x89,
  HeadState = 0x8a,
}

/** Registers read with Kind.Read (byte 3). */
export enum Register {
  /** 32-byte answer: 16 status + 16 configuration (the motor-board handshake). */
  Configuration = 0x20,
  /** Chest board firmware version (chest-version tool): u8 major, u8 minor, u16 build. */
  FirmwareVersion = 0x10,
  /** Chest board mode (chest-mode tool): u8 mode. */
  Mode = 0x11,
}

/** One-byte board commands with Kind.Control (byte 3). */
export enum ControlOp {
  /** Start a joint board after an accepted handshake (seed: `01 bus board 07`, inferred "start"). */
  StartJointBoard = 0x07,
  /** Start a hand or foot board (seed: `01 bus board 08`). */
  StartHandFootBoard = 0x08,
  /** chest-harakiri: power the robot off. */
  PowerOff = 0x40,
  /** chest-harakiri -r: reboot the robot. */
  Reboot = 0x41,
}

/** Chest-board modes reported by Register.Mode (chest-mode tool). */
export enum ChestMode {
  Normal = 0,
  Charging = 1,
  Shutdown = 2,
}

export enum BoardType {
  Joint = 1,
  Hand = 2,
  Foot = 3,
  Chest = 4,
  Inertial = 5,
  Sonar = 6,
  Battery = 7,
}

export interface BoardSpec {
  readonly name: string;
  readonly bus: number;
  readonly address: number;
  readonly type: BoardType;
  /** Joints driven by this board, in the board's own order (LoLA names). */
  readonly joints: readonly string[];
  /** True for boards that take part in the motor-board handshake. */
  readonly handshake: boolean;
}

const j = (name: string, bus: number, address: number, joints: string[]): BoardSpec => ({ name, bus, address, type: BoardType.Joint, joints, handshake: true });

/** Every board behind the chest board (inferred addresses; names follow HAL's log: HeadBoard, LeftShoulderBoard, …). */
export const BOARDS: readonly BoardSpec[] = [
  { name: "ChestBoard", bus: 0, address: 0x01, type: BoardType.Chest, joints: [], handshake: false },
  { name: "InertialBoard", bus: 0, address: 0x02, type: BoardType.Inertial, joints: [], handshake: false },
  { name: "SonarBoard", bus: 0, address: 0x03, type: BoardType.Sonar, joints: [], handshake: false },
  { name: "BatteryBoard", bus: 0, address: 0x04, type: BoardType.Battery, joints: [], handshake: false },
  j("HeadBoard", 1, 0x10, ["HeadYaw", "HeadPitch"]),
  j("LeftShoulderBoard", 2, 0x20, ["LShoulderPitch", "LShoulderRoll"]),
  j("LeftArmBoard", 2, 0x21, ["LElbowYaw", "LElbowRoll", "LWristYaw"]),
  { name: "LeftHandBoard", bus: 2, address: 0x22, type: BoardType.Hand, joints: ["LHand"], handshake: true },
  j("RightShoulderBoard", 3, 0x30, ["RShoulderPitch", "RShoulderRoll"]),
  j("RightArmBoard", 3, 0x31, ["RElbowYaw", "RElbowRoll", "RWristYaw"]),
  { name: "RightHandBoard", bus: 3, address: 0x32, type: BoardType.Hand, joints: ["RHand"], handshake: true },
  j("LeftHipBoard", 4, 0x40, ["LHipYawPitch", "LHipRoll", "LHipPitch"]),
  j("LeftThighBoard", 4, 0x41, ["LKneePitch"]),
  j("LeftAnkleBoard", 4, 0x42, ["LAnklePitch", "LAnkleRoll"]),
  { name: "LeftFootBoard", bus: 4, address: 0x43, type: BoardType.Foot, joints: [], handshake: true },
  j("RightHipBoard", 5, 0x50, ["RHipRoll", "RHipPitch"]),
  j("RightThighBoard", 5, 0x51, ["RKneePitch"]),
  j("RightAnkleBoard", 5, 0x52, ["RAnklePitch", "RAnkleRoll"]),
  { name: "RightFootBoard", bus: 5, address: 0x53, type: BoardType.Foot, joints: [], handshake: true },
];

/** The head bus (I²C behind the chest board): touch pads, INA230, TMP100. Byte 2 is a device, not a board. */
export const HEAD_BUS = { bus: 6, address: 0x00 } as const;

export const BOARD_BY_NAME: ReadonlyMap<string, BoardSpec> = new Map(BOARDS.map((b) => [b.name, b]));

/** Payload sizes after the 3-byte header, per kind (the decoder rejects other sizes). */
export const PAYLOAD = {
  /** Per joint in Actuate: u16 position counts, u8 stiffness. */
  ACTUATE_PER_JOINT: 3,
  /** Per joint in JointState/HandState: u16 position counts, u16 current counts, u8 temperature counts, u8 status. */
  JOINT_RECORD: 6,
  /** Configuration answer: register byte + 16 status + 16 configuration. */
  CONFIG_ANSWER: 1 + 32,
  /** FootState: 4 × u16 FSR counts, u8 bumper bits. */
  FOOT: 9,
  /** InertialState: i16 accel ×3, i16 gyro ×3, i16 angle ×2. */
  INERTIAL: 16,
  /** BatteryState: u16 charge ‰, i16 status register (bit 15 set on a real robot: negative), i16 current mA, u16 temperature 0.1 °C. */
  BATTERY: 8,
  /** SonarState: u16 left, u16 right echo counts. */
  SONAR: 4,
  /** ChestState: u8 button bits. */
  CHEST: 1,
  /** HeadState: u8 touch bits, u16 INA230 bus voltage, i16 INA230 current, u16 INA230 power, i16 TMP100 raw, u8 flags. */
  HEAD: 10,
  /** PrefRead request: u16 offset, u8 length. */
  PREF_READ: 3,
} as const;

/** LED groups addressed with Kind.Leds: byte 2 is the group (a register, not a board). */
export const LED_GROUP_IDS = { Chest: 0, LEar: 1, REar: 2, LEye: 3, REye: 4, LFoot: 5, RFoot: 6, Skull: 7 } as const;

/** HeadState flags. */
export const HEAD_FLAG_TMP100_VALID = 0x01;

/** Preference block (seed: 4,635 bytes, 32-byte pieces, CRC). Layout inferred; see prefs.ts. */
export const PREFS = {
  BLOCK_BYTES: 4635,
  PIECE_BYTES: 32,
  /** 145 pieces; the last is 27 bytes. */
  PIECES: Math.ceil(4635 / 32),
} as const;

/** Handshake: the request register, retries and default accepted configuration versions. */
export const HANDSHAKE = {
  REQUEST_REGISTER: Register.Configuration,
  ATTEMPTS: 3,
  /** Version 10 (HAL 2.8.5) and 11 (boards updated by NAOqi 2.8.7): the fields read after the check mean the same. */
  DEFAULT_ACCEPTED_VERSIONS: [10, 11] as readonly number[],
  STATUS_BYTES: 16,
  CONFIG_BYTES: 16,
} as const;
