/**
 * Authority across the broker (docs/fleet.md "Signatures", docs/security.md "The fleet"): ed25519
 * through `node:crypto`. Operators sign the requests that move a robot or release its latch; the
 * robot checks them against the operator keys it trusts, within a timestamp window and a nonce
 * cache (no replay). Robots sign their e-stop/reset acknowledgements and their presence records;
 * fleet clients count only what verifies against the robot keys they know. A stop is never signed:
 * stopping is always safe, and refusing a stop for a bad signature never is.
 *
 * The signed bytes are plain text, one field a line, so any language can produce them:
 *
 *   request:  "bodylink-req-v1" SUBJECT ROBOT COMMAND TS_MS NONCE KEY_ID LEASE_ID SHA256(BODY)
 *   reply:    "bodylink-ack-v1" ROBOT REQUEST_SUBJECT REQUEST_NONCE KEY_ID SHA256(BODY)
 *   presence: "bodylink-presence-v1" ROBOT KEY_ID SHA256(RECORD_JSON)
 *
 * (joined by "\n"; ROBOT is "*" on the fleet-wide subjects; SHA256 in lowercase hex). The fields
 * ride in NATS headers ({@link SIG_HEADERS}) so a request's body stays the robot API's body.
 *
 * Prepare side (allocates); never on the cycle.
 */
import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject, randomBytes, sign as edSign, verify as edVerify } from "node:crypto";
import { BodylinkError } from "../errors.js";
import { FLEET_LEASE_HEADER, nameOfSubject, SUBJECT_ROOT } from "./subjects.js";

/** NATS header names of a signed request or reply. */
export const SIG_HEADERS = {
  key: "x-bodylink-key",
  timestamp: "x-bodylink-ts",
  nonce: "x-bodylink-nonce",
  signature: "x-bodylink-sig",
  lease: FLEET_LEASE_HEADER,
} as const;

/** A signed request older or newer than this (by the robot's clock) is refused. Default 30 s: field laptops drift. */
export const SIGNATURE_MAX_SKEW_MS = 30_000;
/** Nonces remembered at once; beyond it a signed request is refused (fail closed) until old ones age out. */
export const NONCE_CACHE_MAX = 16_384;

const PUBLIC_PREFIX = "ed25519:";
const TOKEN = /^[A-Za-z0-9_-]{1,128}$/;

/** One side of a key pair, as the key tooling writes it: `ed25519:` and the raw 32 bytes in base64url. */
export type PublicKeyText = `ed25519:${string}`;

/** A key that signs: its holder's name, its id (what a signature names) and the private key. */
export interface SigningKey {
  readonly name: string;
  readonly id: string;
  readonly publicKey: PublicKeyText;
  readonly privateKey: KeyObject;
}

/** Keys a verifier accepts, by key id, each with the name it belongs to. */
export type TrustedKeys = ReadonlyMap<string, { readonly name: string; readonly key: KeyObject; readonly publicKey: PublicKeyText }>;

const sha256Hex = (b: Uint8Array | string) => createHash("sha256").update(b).digest("hex");

/** A key's id: the first 16 hex digits of SHA-256 over its raw 32 bytes (short enough for logs, long enough not to collide by accident). */
export function keyIdOf(publicKey: PublicKeyText): string {
  return sha256Hex(rawOf(publicKey)).slice(0, 16);
}

function rawOf(publicKey: string): Buffer {
  if (!publicKey.startsWith(PUBLIC_PREFIX)) throw new BodylinkError("BL_ERR_FLEET_CONFIG", `${JSON.stringify(publicKey.slice(0, 20))} is not a public key (ed25519:BASE64URL)`);
  const raw = Buffer.from(publicKey.slice(PUBLIC_PREFIX.length), "base64url");
  if (raw.length !== 32) throw new BodylinkError("BL_ERR_FLEET_CONFIG", `public key ${publicKey.slice(0, 20)}… has ${raw.length} bytes, not 32`);
  return raw;
}

/** node:crypto's KeyObject for `ed25519:…` text. */
export function publicKeyObject(publicKey: PublicKeyText): KeyObject {
  return createPublicKey({ key: { kty: "OKP", crv: "Ed25519", x: rawOf(publicKey).toString("base64url") }, format: "jwk" });
}

function publicTextOf(k: KeyObject): PublicKeyText {
  const x = k.export({ format: "jwk" }).x;
  if (typeof x !== "string") throw new BodylinkError("BL_ERR_FLEET_CONFIG", "not an ed25519 key");
  return `${PUBLIC_PREFIX}${x}`;
}

/** A new key pair; `pem` is the private key as PKCS#8 PEM (what a key file holds). */
export function generateSigningKey(name: string): SigningKey & { pem: string } {
  const { privateKey, publicKey } = generateKeyPairSync("ed25519");
  const pub = publicTextOf(publicKey);
  return { name, id: keyIdOf(pub), publicKey: pub, privateKey, pem: privateKey.export({ format: "pem", type: "pkcs8" }).toString() };
}

/** A signing key from its PKCS#8 PEM text. */
export function signingKeyFromPem(name: string, pem: string): SigningKey {
  let privateKey: KeyObject;
  try {
    privateKey = createPrivateKey(pem);
  } catch (e) {
    throw new BodylinkError("BL_ERR_FLEET_CONFIG", `the signing key of ${name} does not parse: ${(e as Error).message}`);
  }
  if (privateKey.asymmetricKeyType !== "ed25519") throw new BodylinkError("BL_ERR_FLEET_CONFIG", `the signing key of ${name} is ${privateKey.asymmetricKeyType}, not ed25519`);
  const pub = publicTextOf(createPublicKey(privateKey));
  return { name, id: keyIdOf(pub), publicKey: pub, privateKey };
}

/** A verifier's table from names and public keys (a trusted-operators or known-robots list). */
export function trustedKeys(entries: ReadonlyArray<{ readonly name: string; readonly key: PublicKeyText }>): TrustedKeys {
  const out = new Map<string, { name: string; key: KeyObject; publicKey: PublicKeyText }>();
  for (const e of entries) out.set(keyIdOf(e.key), { name: e.name, key: publicKeyObject(e.key), publicKey: e.key });
  return out;
}

const sign = (k: SigningKey, text: string) => edSign(null, Buffer.from(text), k.privateKey).toString("base64url");
function verifySig(key: KeyObject, text: string, sig: string): boolean {
  const raw = Buffer.from(sig, "base64url");
  if (raw.length !== 64) return false;
  try {
    return edVerify(null, Buffer.from(text), key, raw);
  } catch {
    return false;
  }
}

/** The robot a subject addresses and the command it carries: `bodylink.NAME.cmd.X` → (NAME, X), `bodylink.reset` → ("*", "reset"). Pure. */
export function targetOf(subject: string): { robot: string; command: string } {
  const parts = subject.split(".");
  if (parts.length === 2 && parts[0] === SUBJECT_ROOT) return { robot: "*", command: parts[1]! };
  const robot = nameOfSubject(subject) ?? "";
  return { robot, command: parts[2] === "cmd" ? (parts[3] ?? "") : (parts[2] ?? "") };
}

/** The text a request's signature covers (pure: the canonical bytes, as UTF-8). */
export function requestSigningText(f: { subject: string; timestampMs: number; nonce: string; keyId: string; leaseId: string; body: Uint8Array }): string {
  const { robot, command } = targetOf(f.subject);
  return ["bodylink-req-v1", f.subject, robot, command, String(f.timestampMs), f.nonce, f.keyId, f.leaseId, sha256Hex(f.body)].join("\n");
}

/** The text a reply's signature covers (pure). */
export function replySigningText(f: { robot: string; requestSubject: string; requestNonce: string; keyId: string; body: Uint8Array }): string {
  return ["bodylink-ack-v1", f.robot, f.requestSubject, f.requestNonce, f.keyId, sha256Hex(f.body)].join("\n");
}

/** The text a presence record's signature covers (pure). */
export function presenceSigningText(f: { robot: string; keyId: string; record: string }): string {
  return ["bodylink-presence-v1", f.robot, f.keyId, sha256Hex(f.record)].join("\n");
}

/** A fresh nonce: 16 random bytes, base64url. */
export const newNonce = (): string => randomBytes(16).toString("base64url");

/** Header values that sign a request on `subject` with `body` (and the lease header when given). */
export function signRequest(k: SigningKey, subject: string, body: Uint8Array, opts: { leaseId?: string; nowMs?: number; nonce?: string } = {}): Record<string, string> {
  const timestampMs = Math.round(opts.nowMs ?? Date.now());
  const nonce = opts.nonce ?? newNonce();
  const leaseId = opts.leaseId ?? "";
  const h: Record<string, string> = { [SIG_HEADERS.key]: k.id, [SIG_HEADERS.timestamp]: String(timestampMs), [SIG_HEADERS.nonce]: nonce };
  h[SIG_HEADERS.signature] = sign(k, requestSigningText({ subject, timestampMs, nonce, keyId: k.id, leaseId, body }));
  if (leaseId) h[SIG_HEADERS.lease] = leaseId;
  return h;
}

/** Header values that sign the robot's reply `body` to a request on `requestSubject` that carried `requestNonce` ("" when none). */
export function signReply(k: SigningKey, requestSubject: string, requestNonce: string, body: Uint8Array): Record<string, string> {
  return { [SIG_HEADERS.key]: k.id, [SIG_HEADERS.signature]: sign(k, replySigningText({ robot: k.name, requestSubject, requestNonce, keyId: k.id, body })) };
}

/**
 * Does this reply come from `robot`? Its key must be the one `known` lists under that name, and its
 * signature must cover this body, the request's subject and the nonce the asker sent.
 */
export function verifyReply(known: TrustedKeys, robot: string, requestSubject: string, requestNonce: string, body: Uint8Array, get: (h: string) => string): boolean {
  const keyId = get(SIG_HEADERS.key);
  const k = known.get(keyId);
  if (!k || k.name !== robot) return false;
  return verifySig(k.key, replySigningText({ robot, requestSubject, requestNonce, keyId, body }), get(SIG_HEADERS.signature));
}

/** A presence record as stored: the record's JSON text and the robot's signature over it. */
export interface SignedPresence {
  readonly v: 1;
  /** The PresenceRecord, as JSON text (signed byte for byte). */
  readonly record: string;
  readonly key: string;
  readonly sig: string;
}

export function signPresence(k: SigningKey, record: string): SignedPresence {
  return { v: 1, record, key: k.id, sig: sign(k, presenceSigningText({ robot: k.name, keyId: k.id, record })) };
}

/** The record's text when `value` is a presence record signed by `robot`'s key in `known`; else null. */
export function verifyPresence(known: TrustedKeys, robot: string, value: unknown): string | null {
  if (!isSignedPresence(value)) return null;
  const k = known.get(value.key);
  if (!k || k.name !== robot) return null;
  return verifySig(k.key, presenceSigningText({ robot, keyId: value.key, record: value.record }), value.sig) ? value.record : null;
}

export function isSignedPresence(v: unknown): v is SignedPresence {
  const x = v as SignedPresence;
  return typeof v === "object" && v !== null && x.v === 1 && typeof x.record === "string" && typeof x.key === "string" && typeof x.sig === "string";
}

/** Why a signed request was refused (the robot answers with the code; the message says what to do). */
export type RequestRefusal = BodylinkError;

/**
 * The robot's check of signed requests: a trusted key, a valid signature over the canonical text,
 * a timestamp within ±{@link SIGNATURE_MAX_SKEW_MS}, a nonce not seen within that window. The
 * nonce cache is bounded in time (entries leave when their timestamp leaves the window) and in
 * size (full: refuse, never forget early). Signatures are checked before the cache is touched, so
 * only holders of a trusted key can fill it.
 */
export class RequestVerifier {
  readonly #trusted: TrustedKeys;
  readonly #skewMs: number;
  readonly #max: number;
  /** key id + nonce → when it may be forgotten (epoch ms). Insertion order is roughly expiry order. */
  readonly #seen = new Map<string, number>();

  constructor(trusted: TrustedKeys, opts: { maxSkewMs?: number; maxNonces?: number } = {}) {
    this.#trusted = trusted;
    this.#skewMs = opts.maxSkewMs ?? SIGNATURE_MAX_SKEW_MS;
    this.#max = opts.maxNonces ?? NONCE_CACHE_MAX;
  }

  /** How many operator keys this robot trusts (0: it can be seen and stopped, never commanded). */
  get trustedCount(): number {
    return this.#trusted.size;
  }

  /** The operator's name when the request verifies; a BodylinkError saying why not otherwise. */
  check(subject: string, body: Uint8Array, get: (h: string) => string, nowMs = Date.now()): { operator: string; keyId: string } | RequestRefusal {
    if (this.#trusted.size === 0) return new BodylinkError("BL_ERR_FLEET_NO_OPERATORS");
    const keyId = get(SIG_HEADERS.key);
    const sig = get(SIG_HEADERS.signature);
    if (!keyId && !sig) return new BodylinkError("BL_ERR_FLEET_UNSIGNED");
    const tsText = get(SIG_HEADERS.timestamp);
    const nonce = get(SIG_HEADERS.nonce);
    const leaseId = get(SIG_HEADERS.lease);
    if (!/^\d{1,15}$/.test(tsText) || !TOKEN.test(nonce) || !TOKEN.test(keyId) || (leaseId !== "" && !TOKEN.test(leaseId)))
      return new BodylinkError("BL_ERR_FLEET_SIGNATURE", "malformed signature headers");
    const k = this.#trusted.get(keyId);
    if (!k) return new BodylinkError("BL_ERR_FLEET_SIGNATURE", `key ${keyId} is not among this robot's trusted operators`);
    const timestampMs = Number(tsText);
    if (!verifySig(k.key, requestSigningText({ subject, timestampMs, nonce, keyId, leaseId, body }), sig))
      return new BodylinkError("BL_ERR_FLEET_SIGNATURE", `the signature of ${k.name} (key ${keyId}) does not match this request`);
    if (Math.abs(nowMs - timestampMs) > this.#skewMs)
      return new BodylinkError("BL_ERR_FLEET_SIGNATURE", `signed ${Math.round((nowMs - timestampMs) / 1000)} s from this robot's clock (at most ${this.#skewMs / 1000} s); check both clocks`);
    this.#forget(nowMs);
    const id = `${keyId}/${nonce}`;
    if (this.#seen.has(id)) return new BodylinkError("BL_ERR_FLEET_SIGNATURE", "this signed request was already used (a replay)");
    if (this.#seen.size >= this.#max) return new BodylinkError("BL_ERR_FLEET_SIGNATURE", `more than ${this.#max} signed requests within ${(2 * this.#skewMs) / 1000} s; slow down`);
    this.#seen.set(id, timestampMs + this.#skewMs);
    return { operator: k.name, keyId };
  }

  /** Nonces remembered now (for tests and health). */
  get remembered(): number {
    return this.#seen.size;
  }

  #forget(nowMs: number): void {
    for (const [id, until] of this.#seen) {
      if (until >= nowMs) break; // roughly in order: a later entry that expired earlier waits for the next pass
      this.#seen.delete(id);
    }
  }
}
