/**
 * What a NAO driver is: the body seam (../driver.ts) for NaoState and NAO commands. Two links
 * implement it or will: the chest board (chestboard.ts, USB or simulated) and an upstream LoLA
 * (the robot's own LoLA socket, decoded by the LoLA codec). The NAO core (runtime/nao-robot.ts:
 * arbitration, safety ramps, smooth motions) only sees this interface.
 *
 * A driver fills the measured fields of NaoState (sensors, joints, board status and counters) on
 * `read`; the core owns `seq`, the timestamps, `valid`, `link` and `safetyReason`.
 */
import type { NaoCommands } from "../../bodies/nao/commands.js";
import type { NaoPreferences } from "../../bodies/nao/prefs.js";
import type { NaoState } from "../../bodies/nao/state.js";
import type { BoardReport } from "../../transport/chestboard-link.js";
import type { BodyDriver } from "../driver.js";

/** What the core hands to `write` every cycle (one object for the runtime's life). */
export interface NaoOutput {
  /** The targets (LoLA order and units). */
  readonly commands: NaoCommands;
  /** [0]: the safety ramp's stiffness scale 0..1 (every stiffness is multiplied by it). A typed slot: no boxed double. */
  readonly scale: Float64Array;
  /** Where the driver records the stiffness actually sent per joint (the state's `stiffness`). */
  readonly sentStiffness: Float32Array;
}

/** Read outcomes beyond IO.None/IO.Fresh: why this exchange failed (text in NAO_IO_TEXT). */
export const NAO_IO = {
  None: 0,
  Fresh: 1,
  /** The chest board did not acknowledge the frame (CRC mismatch). */
  Unacknowledged: 16,
  /** No answer within the timeout. */
  NoAnswer: 17,
  /** The command could not be sent. */
  WriteFailed: 18,
  /** A transfer failed outright. */
  ReadFailed: 19,
  /** An answer came but could not be decoded (`lastErrorText` says how). */
  BadFrame: 20,
  /** The link itself went down (an upstream LoLA closed, stalled or sent garbage): lost at once, not after a count. */
  LinkDown: 21,
} as const;

export const NAO_IO_TEXT: Readonly<Record<number, string>> = {
  [NAO_IO.None]: "nothing new",
  [NAO_IO.Fresh]: "answered",
  [NAO_IO.Unacknowledged]: "frame not acknowledged (CRC mismatch)",
  [NAO_IO.NoAnswer]: "no answer within 20 ms",
  [NAO_IO.WriteFailed]: "bulk write failed",
  [NAO_IO.ReadFailed]: "transfer failed",
  [NAO_IO.BadFrame]: "answer frame unusable",
  [NAO_IO.LinkDown]: "the link went down",
};

export interface NaoDriver extends BodyDriver<NaoState, NaoOutput> {
  /** After configure: the body's preferences (body id and version, joint zeros, FSR and IMU calibration). */
  readonly prefs: NaoPreferences | null;
  /**
   * Set by a link that never has a preference block (an upstream LoLA): why, for the one clear
   * answer `/v1/preferences` and `bodylink prefs` give. Absent: prefs come after configure.
   */
  readonly prefsUnavailable?: string;
  /** After configure: the motor-board handshake's result per board (a driver without boards: []). */
  readonly boards: readonly BoardReport[];
  /** After configure: 1 where a joint can be driven, LoLA order (25). */
  readonly jointInitialized: Uint8Array;
  /** True while a transfer is in flight (the next write would be Busy). */
  readonly busy: boolean;
  /** Why the last read was not Fresh (a stable string per cause: no allocation per cycle). */
  readonly lastErrorText: string;
}
