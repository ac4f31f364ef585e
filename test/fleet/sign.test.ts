/**
 * The fleet's signatures (src/fleet/sign.ts): the canonical texts (golden), ed25519 round trips
 * against node:crypto, every tampered field refused (fast-check), replay, clock skew, the nonce
 * cache's bounds, and the key file formats.
 */
import { createPublicKey, sign as edSign, verify as edVerify } from "node:crypto";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  generateSigningKey,
  keyIdOf,
  presenceSigningText,
  publicKeyObject,
  RequestVerifier,
  replySigningText,
  requestSigningText,
  SIG_HEADERS,
  signingKeyFromPem,
  signPresence,
  signReply,
  signRequest,
  targetOf,
  trustedKeys,
  verifyPresence,
  verifyReply,
} from "../../src/fleet/sign.js";

const enc = (s: string) => new TextEncoder().encode(s);
const getter = (h: Record<string, string>) => (k: string) => h[k] ?? "";
// SHA-256 of `{"reason":"area clear"}` and of the empty string, by `printf … | sha256sum`.
const SHA_RESET_BODY = "8af6dcb367fd00664ea95fba55c4399b40d7d8cb75bc6935a0c8aff81357e107";
const SHA_EMPTY = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

describe("canonical texts (golden)", () => {
  it("a request names subject, robot, command, time, nonce, key, lease and the body's SHA-256, one a line", () => {
    expect(requestSigningText({ subject: "bodylink.arm-1.cmd.move-joints", timestampMs: 1764806400000, nonce: "n0nce", keyId: "0123456789abcdef", leaseId: "L1", body: new Uint8Array() })).toBe(
      ["bodylink-req-v1", "bodylink.arm-1.cmd.move-joints", "arm-1", "move-joints", "1764806400000", "n0nce", "0123456789abcdef", "L1", SHA_EMPTY].join("\n"),
    );
    // Fleet-wide subjects address robot "*".
    expect(
      requestSigningText({ subject: "bodylink.reset", timestampMs: 1, nonce: "n", keyId: "k", leaseId: "", body: enc('{"reason":"area clear"}') })
        .split("\n")
        .slice(0, 4),
    ).toEqual(["bodylink-req-v1", "bodylink.reset", "*", "reset"]);
    expect(targetOf("bodylink.nao-1.reset")).toEqual({ robot: "nao-1", command: "reset" });
    expect(targetOf("bodylink.nao-1.cmd.acquire")).toEqual({ robot: "nao-1", command: "acquire" });
    expect(targetOf("bodylink.estop")).toEqual({ robot: "*", command: "estop" });
  });

  it("replies and presence records", () => {
    expect(replySigningText({ robot: "arm-1", requestSubject: "bodylink.estop", requestNonce: "abc", keyId: "k1", body: new Uint8Array() })).toBe(
      ["bodylink-ack-v1", "arm-1", "bodylink.estop", "abc", "k1", SHA_EMPTY].join("\n"),
    );
    expect(presenceSigningText({ robot: "arm-1", keyId: "k1", record: "" })).toBe(["bodylink-presence-v1", "arm-1", "k1", SHA_EMPTY].join("\n"));
  });

  it("the body's hash is SHA-256 in lowercase hex (sha256sum's)", () => {
    const t = requestSigningText({ subject: "bodylink.reset", timestampMs: 1, nonce: "n", keyId: "k", leaseId: "", body: enc('{"reason":"area clear"}') });
    expect(t.split("\n")[8]).toBe(SHA_RESET_BODY);
  });
});

describe("keys", () => {
  it("a key's PEM round-trips; its id is 16 hex digits of SHA-256 over the raw public key; node:crypto verifies what we sign", () => {
    const k = generateSigningKey("coach");
    const again = signingKeyFromPem("coach", k.pem);
    expect(again.publicKey).toBe(k.publicKey);
    expect(again.id).toBe(k.id);
    expect(k.id).toMatch(/^[0-9a-f]{16}$/);
    expect(keyIdOf(k.publicKey)).toBe(k.id);
    expect(k.publicKey).toMatch(/^ed25519:[A-Za-z0-9_-]{43}$/);
    const h = signRequest(k, "bodylink.reset", enc("{}"), { nowMs: 5, nonce: "abc" });
    const text = requestSigningText({ subject: "bodylink.reset", timestampMs: 5, nonce: "abc", keyId: k.id, leaseId: "", body: enc("{}") });
    // An independent check: node:crypto with the public key rebuilt from its text.
    expect(edVerify(null, Buffer.from(text), createPublicKey(publicKeyObject(k.publicKey).export({ format: "pem", type: "spki" })), Buffer.from(h[SIG_HEADERS.signature]!, "base64url"))).toBe(true);
    expect(edSign(null, Buffer.from(text), k.privateKey).toString("base64url")).toBe(h[SIG_HEADERS.signature]); // ed25519 is deterministic
  });

  it("bad key material is one clear error", () => {
    expect(() => signingKeyFromPem("x", "not a pem")).toThrow(/the signing key of x does not parse/);
    expect(() => publicKeyObject("ed25519:AAAA")).toThrow(/has 3 bytes, not 32/);
    expect(() => publicKeyObject("rsa:AAAA" as `ed25519:${string}`)).toThrow(/is not a public key/);
  });
});

describe("a robot checks signed requests", () => {
  const coach = generateSigningKey("coach");
  const rogue = generateSigningKey("rogue");
  const trusted = trustedKeys([{ name: "coach", key: coach.publicKey }]);
  const SUBJ = "bodylink.arm-1.cmd.move-joints";
  const body = enc('{"positions_rad":[0,0.2,0,0,0,0,0]}');

  it("accepts a trusted operator's signature once; a replay, another key, no signature and no trusted key are refused with their codes", () => {
    const v = new RequestVerifier(trusted);
    const h = signRequest(coach, SUBJ, body, { leaseId: "lease-1" });
    expect(v.check(SUBJ, body, getter(h))).toEqual({ operator: "coach", keyId: coach.id });
    expect(v.check(SUBJ, body, getter(h))).toMatchObject({ code: "BL_ERR_FLEET_SIGNATURE", message: expect.stringMatching(/already used \(a replay\)/) });
    expect(v.check(SUBJ, body, getter(signRequest(rogue, SUBJ, body)))).toMatchObject({ code: "BL_ERR_FLEET_SIGNATURE", message: expect.stringMatching(/not among this robot's trusted operators/) });
    expect(v.check(SUBJ, body, getter({}))).toMatchObject({ code: "BL_ERR_FLEET_UNSIGNED", status: 403 });
    expect(new RequestVerifier(new Map()).check(SUBJ, body, getter(h))).toMatchObject({ code: "BL_ERR_FLEET_NO_OPERATORS" });
    // A rogue key that claims the coach's key id does not verify.
    const forged = { ...signRequest(rogue, SUBJ, body), [SIG_HEADERS.key]: coach.id };
    expect(v.check(SUBJ, body, getter(forged))).toMatchObject({ code: "BL_ERR_FLEET_SIGNATURE", message: expect.stringMatching(/does not match/) });
  });

  it("any change to the subject, body, lease, time, nonce or signature is refused (property)", () => {
    const fields = ["subject", "body", "lease", "ts", "nonce", "sig"] as const;
    fc.assert(
      fc.property(fc.constantFrom(...fields), fc.nat(), (field, seed) => {
        const v = new RequestVerifier(trusted);
        const now = 1_800_000_000_000;
        const h = { ...signRequest(coach, SUBJ, body, { leaseId: "lease-1", nowMs: now }) };
        let subj = SUBJ;
        let b = body;
        if (field === "subject") subj = "bodylink.arm-2.cmd.move-joints";
        if (field === "body") {
          b = body.slice();
          b[seed % b.length] ^= 1 << (seed % 8);
        }
        if (field === "lease") h[SIG_HEADERS.lease] = "lease-2";
        if (field === "ts") h[SIG_HEADERS.timestamp] = String(now + 1 + (seed % 1000));
        if (field === "nonce") h[SIG_HEADERS.nonce] = `${h[SIG_HEADERS.nonce]}x`;
        if (field === "sig") {
          const s = Buffer.from(h[SIG_HEADERS.signature]!, "base64url");
          s[seed % 64]! ^= 1 << (seed % 8);
          h[SIG_HEADERS.signature] = s.toString("base64url");
        }
        const r = v.check(subj, b, getter(h), now);
        return "code" in r && r.code === "BL_ERR_FLEET_SIGNATURE";
      }),
      { numRuns: 300 },
    );
  });

  it("a request outside ±30 s of the robot's clock is refused; the nonce cache is bounded in time and size", () => {
    const v = new RequestVerifier(trusted, { maxSkewMs: 1000, maxNonces: 3 });
    const now = 1_800_000_000_000;
    expect(v.check(SUBJ, body, getter(signRequest(coach, SUBJ, body, { nowMs: now - 1500 })), now)).toMatchObject({
      message: expect.stringMatching(/signed 2 s from this robot's clock \(at most 1 s\)/),
    });
    expect(v.check(SUBJ, body, getter(signRequest(coach, SUBJ, body, { nowMs: now + 1500 })), now)).toMatchObject({ code: "BL_ERR_FLEET_SIGNATURE" });
    for (let i = 0; i < 3; i++) expect(v.check(SUBJ, body, getter(signRequest(coach, SUBJ, body, { nowMs: now })), now)).toMatchObject({ operator: "coach" });
    // Full: refused (never forgotten early, which would let a replay through)…
    expect(v.check(SUBJ, body, getter(signRequest(coach, SUBJ, body, { nowMs: now })), now)).toMatchObject({ message: expect.stringMatching(/more than 3 signed requests within 2 s; slow down/) });
    expect(v.remembered).toBe(3);
    // …until those requests leave the window.
    expect(v.check(SUBJ, body, getter(signRequest(coach, SUBJ, body, { nowMs: now + 1100 })), now + 1100)).toMatchObject({ operator: "coach" });
    expect(v.remembered).toBe(1);
  });

  it("malformed headers are refused before any crypto", () => {
    const v = new RequestVerifier(trusted);
    const h = signRequest(coach, SUBJ, body);
    for (const [k, bad] of [
      [SIG_HEADERS.timestamp, "12.5"],
      [SIG_HEADERS.nonce, "a\nb"],
      [SIG_HEADERS.key, "k k"],
      [SIG_HEADERS.lease, "x".repeat(200)],
    ] as const)
      expect(v.check(SUBJ, body, getter({ ...h, [k]: bad }))).toMatchObject({ code: "BL_ERR_FLEET_SIGNATURE", message: expect.stringMatching(/malformed/) });
  });
});

describe("robots sign their answers and presence", () => {
  const arm1 = generateSigningKey("arm-1");
  const arm2 = generateSigningKey("arm-2");
  const known = trustedKeys([
    { name: "arm-1", key: arm1.publicKey },
    { name: "arm-2", key: arm2.publicKey },
  ]);
  const ack = enc('{"name":"arm-1","ok":true,"estop":{"latched":true}}');

  it("an answer verifies only for its robot, its request's subject and nonce, and its exact body", () => {
    const h = signReply(arm1, "bodylink.estop", "n1", ack);
    expect(verifyReply(known, "arm-1", "bodylink.estop", "n1", ack, getter(h))).toBe(true);
    expect(verifyReply(known, "arm-1", "bodylink.estop", "n2", ack, getter(h))).toBe(false); // an old answer to another request
    expect(verifyReply(known, "arm-1", "bodylink.arm-1.estop", "n1", ack, getter(h))).toBe(false);
    expect(verifyReply(known, "arm-1", "bodylink.estop", "n1", enc('{"name":"arm-1","ok":true,"estop":{"latched":false}}'), getter(h))).toBe(false);
    // Another robot signing an answer in arm-1's name: its key is arm-2's.
    expect(verifyReply(known, "arm-1", "bodylink.estop", "n1", ack, getter(signReply(arm2, "bodylink.estop", "n1", ack)))).toBe(false);
    expect(verifyReply(known, "arm-1", "bodylink.estop", "n1", ack, getter({}))).toBe(false);
    expect(verifyReply(new Map(), "arm-1", "bodylink.estop", "n1", ack, getter(h))).toBe(false);
  });

  it("a presence record verifies only under its robot's name and key", () => {
    const rec = JSON.stringify({ name: "arm-1", host: "lab" });
    const p = signPresence(arm1, rec);
    expect(verifyPresence(known, "arm-1", JSON.parse(JSON.stringify(p)))).toBe(rec);
    expect(verifyPresence(known, "arm-2", p)).toBeNull();
    expect(verifyPresence(known, "arm-1", { ...p, record: rec.replace("lab", "evil") })).toBeNull();
    expect(verifyPresence(known, "arm-1", signPresence({ ...arm2, name: "arm-1" }, rec))).toBeNull();
    expect(verifyPresence(known, "arm-1", { name: "arm-1", host: "evil" })).toBeNull();
  });
});
