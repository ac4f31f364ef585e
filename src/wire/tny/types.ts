/**
 * TNY-360 binary API: message and value types. Types only (plus the two error classes the codec
 * throws); pure and browser-safe.
 *
 * The per-action argument and return types are derived from the table in `constants.ts`, so the
 * client SDK's `robot.body.setVelocity(x, y, z, clearOverrides?)` and the simulator's handlers are
 * typed by the same single source of truth.
 */
import type { ActionName, ActionOf, FieldSpec, ModuleName, WireTypeName } from "./constants.js";

/** The 8-byte header, decoded. `code` is module|action<<8 for requests and the status for responses. */
export interface TnyHeader {
  readonly type: number;
  readonly flags: number;
  readonly msgId: number;
  /** Bytes 4–5 as a u16 LE: request module (low byte) and action (high byte), or response status. */
  readonly code: number;
  /** Payload length declared by the header. */
  readonly length: number;
}

export interface TnyRequest {
  readonly kind: "request";
  readonly flags: number;
  readonly msgId: number;
  readonly module: number;
  readonly action: number;
  /** Borrowed view of the payload (valid until the caller reuses the frame). */
  readonly payload: Uint8Array;
}

export interface TnyResponse {
  readonly kind: "response";
  readonly flags: number;
  readonly msgId: number;
  readonly status: number;
  /** Borrowed view of the payload. */
  readonly payload: Uint8Array;
}

/** Defined by the firmware (type 3) and never sent by it. */
export interface TnyEvent {
  readonly kind: "event";
  readonly msgId: number;
  readonly eventId: number;
  readonly payload: Uint8Array;
}

/** A message whose type byte is none of the above: kept, not thrown (style §2). */
export interface TnyUnknownMessage {
  readonly kind: "unknown";
  readonly type: number;
  readonly msgId: number;
  readonly payload: Uint8Array;
}

export type TnyMessage = TnyRequest | TnyResponse | TnyEvent | TnyUnknownMessage;

// ---------------------------------------------------------------------------------------------
// Value types

/** Vec3f. Units depend on the action (m, m/s, rad, rad/s, m/s²). */
export interface Vec3 {
  readonly x: number;
  readonly y: number;
  readonly z: number;
}

/**
 * `Error::ErrorEvent`. The four bytes module, subsystem, code, severity form the error id
 * `0xMMSSCCVV` (see `errorIdOf` in decode.ts); `module` uses `ErrorModuleId`, not protocol ids.
 */
export interface ErrorEvent {
  readonly timestampMs: number;
  readonly eventId: number;
  readonly module: number;
  readonly subsystem: number;
  readonly code: number;
  readonly severity: number;
  /** Copy of the first `payloadSize` payload bytes (max 32). */
  readonly payload: Uint8Array;
}

/** `MotorController::CalibrationData` (units as the firmware uses them). */
export interface MotorCalibration {
  /** PWM pulse width at the minimum angle, ms. */
  readonly dcMinMs: number;
  /** PWM pulse width at the maximum angle, ms. */
  readonly dcMaxMs: number;
  readonly dcDeadband: number;
  /** Feedback voltage at the minimum, V. */
  readonly feedbackMinV: number;
  /** Feedback voltage at the maximum, V. */
  readonly feedbackMaxV: number;
  /** Feedback noise, V (σ). */
  readonly feedbackNoiseV: number;
  readonly feedbackLatencyMs: number;
  readonly feedbackInverted: boolean;
  /** Maximum speed, range per second. */
  readonly maxSpeed: number;
}

/** TypeScript type of each wire type as the decoder returns it. */
export interface WireValueMap {
  u8: number;
  u16: number;
  u32: number;
  i32: number;
  f32: number;
  bool: boolean;
  string: string;
  vec3f: Vec3;
  f32x14: Float32Array;
  f32x16: Float32Array;
  errorEvent: ErrorEvent;
  calibrationDataPadded: MotorCalibration;
  calibrationDataPacked: MotorCalibration;
  bytes8: Uint8Array;
  bytesRest: Uint8Array;
}

/** TypeScript type of each wire type as the encoder accepts it (arrays may be any array-like). */
export interface WireInputMap extends Omit<WireValueMap, "f32x14" | "f32x16"> {
  f32x14: ArrayLike<number>;
  f32x16: ArrayLike<number>;
}

export type WireValue = WireValueMap[WireTypeName];

// ---------------------------------------------------------------------------------------------
// Per-action types derived from the table

type InputsOf<F extends readonly FieldSpec[]> = { -readonly [K in keyof F]: F[K] extends FieldSpec ? WireInputMap[F[K]["type"]] : never };
type ValuesOf<F extends readonly FieldSpec[]> = { -readonly [K in keyof F]: F[K] extends FieldSpec ? WireValueMap[F[K]["type"]] : never };

/** Call arguments: one per field, a trailing optional field may be left out. */
export type ArgsOf<F extends readonly FieldSpec[]> = F extends readonly [...infer H extends readonly FieldSpec[], infer L extends FieldSpec & { readonly optional: true }]
  ? [...InputsOf<H>, WireInputMap[L["type"]]?]
  : InputsOf<F>;

/** Decoded arguments as a handler receives them: every field present (defaults filled in). */
export type DecodedArgsOf<F extends readonly FieldSpec[]> = ValuesOf<F>;

/** What a handler returns for an Ok reply: one value per return field, in order. */
export type ReturnTupleOf<F extends readonly FieldSpec[]> = InputsOf<F>;

/** A client call's result: nothing, the single value, or an object keyed by field names. */
export type ResultOf<F extends readonly FieldSpec[]> = F extends readonly []
  ? undefined
  : F extends readonly [infer O extends FieldSpec]
    ? WireValueMap[O["type"]]
    : { readonly [P in F[number] as P["name"]]: WireValueMap[P["type"]] };

export type ActionArgs<M extends ModuleName, A extends string> = ArgsOf<ActionOf<M, A>["args"]>;
export type ActionResult<M extends ModuleName, A extends string> = ResultOf<ActionOf<M, A>["returns"]>;
export type ActionDecodedArgs<M extends ModuleName, A extends string> = DecodedArgsOf<ActionOf<M, A>["args"]>;
export type ActionReturnTuple<M extends ModuleName, A extends string> = ReturnTupleOf<ActionOf<M, A>["returns"]>;

/** "module.action" keys of every action in the table. */
export type ActionKey = { [M in ModuleName]: `${M}.${ActionName<M>}` }[ModuleName];

// ---------------------------------------------------------------------------------------------
// Errors the codec throws

/**
 * Malformed bytes: short payload, bad bool, value out of range, trailing bytes. Carries the
 * offset and what was expected vs found; servers answer InvalidParameters (3).
 */
export class TnyDecodeError extends Error {
  constructor(
    readonly offset: number,
    readonly expected: string,
    readonly found: string,
  ) {
    super(`TNY payload malformed at offset ${offset}: expected ${expected}, found ${found}`);
    this.name = "TnyDecodeError";
  }
}

/** A value that cannot be encoded (wrong type, out of range, too long): a caller bug, thrown early. */
export class TnyEncodeError extends RangeError {
  constructor(message: string) {
    super(message);
    this.name = "TnyEncodeError";
  }
}

// ---------------------------------------------------------------------------------------------
// Per-key helpers ("body.setVelocity") for handler tables

type SplitKey<K extends string> = K extends `${infer M extends ModuleName}.${infer A}` ? [M, A] : never;

/** Decoded arguments of the action named by a "module.action" key. */
export type KeyDecodedArgs<K extends ActionKey> = SplitKey<K> extends [infer M extends ModuleName, infer A extends string] ? DecodedArgsOf<ActionOf<M, A>["args"]> : never;
/** Return tuple of the action named by a "module.action" key. */
export type KeyReturnTuple<K extends ActionKey> = SplitKey<K> extends [infer M extends ModuleName, infer A extends string] ? ReturnTupleOf<ActionOf<M, A>["returns"]> : never;
