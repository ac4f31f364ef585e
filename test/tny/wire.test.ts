import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { fromHex, Reader, toHex } from "../../src/wire/bytes.js";
import { actionByCode, actionSpec, type ActionSpec, MODULE_BY_CODE, MODULES, type ModuleSpec, Status, STATUS_NAMES, statusName, TNY_HEADER_BYTES, WIRE_TYPES } from "../../src/wire/tny/constants.js";
import { decodeArgs, decodeFrame, decodeHeader, decodeMessage, decodeReturns, errorIdOf, resultOf } from "../../src/wire/tny/decode.js";
import { encodeRawRequest, encodeRequest, encodeResponse, fieldsByteLength } from "../../src/wire/tny/encode.js";
import { TnyDecodeError, TnyEncodeError } from "../../src/wire/tny/types.js";
import { arbFields, f32le, u16le, u32le } from "./arbitraries.js";

const spec = (m: string, a: string) => actionSpec(m, a);
const ALL: { module: ModuleSpec; action: ActionSpec }[] = (MODULES as readonly ModuleSpec[]).flatMap((module) => module.actions.map((action) => ({ module, action })));

describe("TNY golden vectors (tny360.md §3.4)", () => {
  it("body setVelocity(0.2, 0, 0, true), msg_id 1, RequireAck: encodes byte for byte", () => {
    const { module, action } = spec("body", "setVelocity");
    const bytes = encodeRequest(1, module, action, [0.2, 0, 0, true]);
    expect(toHex(bytes)).toBe("01 01 01 00 03 02 0d 00 cd cc 4c 3e 00 00 00 00 00 00 00 00 01");
  });

  it("body setVelocity golden bytes decode back to the same call", () => {
    const bytes = fromHex("01 01 01 00 03 02 0d 00 cd cc 4c 3e 00 00 00 00 00 00 00 00 01");
    const msg = decodeFrame(bytes);
    expect(msg).toMatchObject({ kind: "request", flags: 1, msgId: 1, module: 3, action: 2 });
    if (msg.kind !== "request") throw new Error("not a request");
    expect(msg.payload.length).toBe(13);
    const args = decodeArgs(spec("body", "setVelocity").action.args, msg.payload);
    expect(args).toEqual([Math.fround(0.2), 0, 0, true]);
  });

  it("Ok response with an empty payload to msg_id 1", () => {
    const bytes = encodeResponse(1, Status.Ok);
    expect(toHex(bytes)).toBe("02 00 01 00 00 00 00 00");
    expect(decodeFrame(fromHex("02 00 01 00 00 00 00 00"))).toMatchObject({ kind: "response", flags: 0, msgId: 1, status: 0 });
  });

  it("body setEnabled(0x0FFF), msg_id 2", () => {
    const { module, action } = spec("body", "setEnabled");
    const bytes = encodeRequest(2, module, action, [0x0fff]);
    expect(toHex(bytes)).toBe("01 01 02 00 03 00 02 00 ff 0f");
    const msg = decodeFrame(bytes);
    if (msg.kind !== "request") throw new Error("not a request");
    expect(decodeArgs(action.args, msg.payload)).toEqual([0x0fff]);
  });

  it("a left-out clear_overrides decodes to its default, true (§4)", () => {
    const { module, action } = spec("body", "setVelocity");
    const bytes = encodeRequest(7, module, action, [0.2, 0, 0]);
    expect(bytes.length).toBe(8 + 12);
    expect(toHex(bytes.subarray(0, 8))).toBe("01 01 07 00 03 02 0c 00");
    const msg = decodeFrame(bytes);
    if (msg.kind !== "request") throw new Error("not a request");
    expect(decodeArgs(action.args, msg.payload)[3]).toBe(true);
  });

  it("error responses carry the status and length 0", () => {
    expect(toHex(encodeResponse(0x1234, Status.UnknownAction))).toBe("02 00 34 12 02 00 00 00");
    expect(
      toHex(
        encodeResponse(5, Status.OutOfMemory, spec("body", "getPosture").action.returns, [
          { x: 1, y: 2, z: 3 },
          { x: 0, y: 0, z: 0 },
        ]),
      ),
    ).toBe("02 00 05 00 06 00 00 00");
  });

  it("body getPosture reply: two Vec3f, 24 bytes", () => {
    const { action } = spec("body", "getPosture");
    const expected = new Uint8Array([
      0x02,
      0x00,
      ...u16le(9),
      ...u16le(0),
      ...u16le(24), // header: response, msg 9, Ok, 24 bytes
      ...f32le(0.01),
      ...f32le(-0.02),
      ...f32le(0.12), // position m
      ...f32le(0.1),
      ...f32le(0),
      ...f32le(-0.5), // rotation rad
    ]);
    const bytes = encodeResponse(9, 0, action.returns, [
      { x: 0.01, y: -0.02, z: 0.12 },
      { x: 0.1, y: 0, z: -0.5 },
    ]);
    expect(toHex(bytes, 100)).toBe(toHex(expected, 100));
    const msg = decodeFrame(bytes);
    if (msg.kind !== "response") throw new Error("not a response");
    expect(resultOf(action.returns, decodeReturns(action.returns, msg.payload))).toEqual({
      position: { x: Math.fround(0.01), y: Math.fround(-0.02), z: Math.fround(0.12) },
      rotation: { x: Math.fround(0.1), y: 0, z: Math.fround(-0.5) },
    });
  });

  it("system getLogLine reply: u32, u8, u8, then two u16-length strings", () => {
    const { action } = spec("system", "getLogLine");
    const expected = new Uint8Array([
      0x02,
      0x00,
      ...u16le(3),
      ...u16le(0),
      ...u16le(4 + 1 + 1 + 2 + 3 + 2 + 2), // header
      ...u32le(1500), // timestampMs
      0x01, // level Warning
      0x02, // indent
      ...u16le(3),
      0x73,
      0x69,
      0x6d, // tag "sim"
      ...u16le(2),
      0x68,
      0x69, // message "hi"
    ]);
    const bytes = encodeResponse(3, 0, action.returns, [1500, 1, 2, "sim", "hi"]);
    expect(toHex(bytes, 100)).toBe(toHex(expected, 100));
  });

  it("ErrorEvent is the firmware's 44-byte struct with 1 padding byte", () => {
    const { action } = spec("error", "getErrorEventByIndex");
    const ev = { timestampMs: 0x01020304, eventId: 0x0a0b, module: 0x05, subsystem: 0x01, code: 0x02, severity: 0x03, payload: new Uint8Array([0xaa, 0xbb]) };
    const bytes = encodeResponse(1, 0, action.returns, [ev]);
    expect(bytes.length).toBe(8 + 44);
    const p = bytes.subarray(8);
    expect(toHex(p.subarray(0, 13))).toBe("04 03 02 01 0b 0a 05 01 02 03 02 aa bb");
    expect([...p.subarray(13)]).toEqual(new Array(31).fill(0)); // 30 zero payload bytes + 1 padding
    const back = decodeReturns(action.returns, p)[0] as typeof ev;
    expect(back).toEqual(ev);
    expect(errorIdOf(back).toString(16)).toBe("5010203");
  });

  it("CalibrationData: 36 bytes with 3 padding bytes in replies, 33 packed in setCalibrationData", () => {
    const cal = { dcMinMs: 0.5, dcMaxMs: 2.5, dcDeadband: 0, feedbackMinV: 0.5, feedbackMaxV: 2.75, feedbackNoiseV: 0, feedbackLatencyMs: 0, feedbackInverted: true, maxSpeed: 2 };
    const get = spec("motor", "getCalibrationData").action;
    const reply = encodeResponse(1, 0, get.returns, [cal]).subarray(8);
    expect(reply.length).toBe(36);
    expect(toHex(reply.subarray(28, 36))).toBe("01 00 00 00 " + toHex(new Uint8Array(f32le(2))));
    expect(decodeReturns(get.returns, reply)[0]).toEqual(cal);
    const set = spec("motor", "setCalibrationData");
    const req = encodeRequest(2, set.module, set.action, [4, cal]);
    expect(req.length).toBe(8 + 1 + 33);
    expect(toHex(req.subarray(8 + 1 + 28, 8 + 1 + 33))).toBe("01 " + toHex(new Uint8Array(f32le(2))));
    expect(decodeArgs(set.action.args, req.subarray(8))).toEqual([4, cal]);
  });

  it("joint setJointAngles carries 14 float32 in JointId order (56 bytes)", () => {
    const { module, action } = spec("joint", "setJointAngles");
    const angles = Array.from({ length: 14 }, (_, i) => i * 0.125);
    const req = encodeRequest(0xffff, module, action, [angles]);
    expect(toHex(req.subarray(0, 8))).toBe("01 01 ff ff 05 07 38 00");
    expect(toHex(req.subarray(8 + 4, 8 + 8))).toBe(toHex(new Uint8Array(f32le(0.125))));
  });
});

describe("TNY table", () => {
  it("action codes are the index in each module's array; codes and names are unique", () => {
    const codes = new Set<number>();
    for (const mod of MODULES as readonly ModuleSpec[]) {
      expect(codes.has(mod.code)).toBe(false);
      codes.add(mod.code);
      expect(MODULE_BY_CODE[mod.code]).toBe(mod);
      const names = new Set<string>();
      mod.actions.forEach((act, i) => {
        expect(act.code).toBe(i);
        expect(actionByCode(mod, i)).toBe(act);
        expect(names.has(act.name)).toBe(false);
        names.add(act.name);
        // only a trailing field may be optional
        act.args.forEach((f, k) => {
          if (f.optional) expect(k).toBe(act.args.length - 1);
        });
      });
      // past the real action count: undefined, not an out-of-bounds slot (§12 #1)
      expect(actionByCode(mod, mod.actions.length)).toBeUndefined();
      expect(actionByCode(mod, mod.actions.length * 4 - 1)).toBeUndefined();
    }
  });

  it("registers the firmware's modules at the firmware's ids (§5)", () => {
    const byCode = Object.fromEntries((MODULES as readonly ModuleSpec[]).map((m) => [m.code, m.name]));
    expect(byCode).toEqual({
      0: "system",
      1: "protocol",
      2: "gait",
      3: "body",
      4: "leg",
      5: "joint",
      6: "motor",
      7: "imu",
      9: "power",
      14: "i2c",
      15: "adc",
      16: "wifi",
      19: "error",
      20: "diagnostic",
    });
    for (const unregistered of [0x08, 0x0a, 0x0b, 0x0c, 0x0d, 0x11, 0x12, 0x15, 0xff]) expect(MODULE_BY_CODE[unregistered]).toBeUndefined();
  });

  it("status names cover the firmware's 0..6 and bodylink's EmergencyStop (7)", () => {
    expect(STATUS_NAMES).toHaveLength(8);
    expect(statusName(7)).toBe("EmergencyStop (7)");
    expect(statusName(2)).toBe("UnknownAction (2)");
    expect(statusName(99)).toBe("status 99");
  });

  it("every wire type used in the table has a size entry", () => {
    for (const { action } of ALL) for (const f of [...action.args, ...action.returns]) expect(WIRE_TYPES[f.type]).toBeDefined();
  });
});

describe("TNY decoder: malformed input", () => {
  const setVelocity = fromHex("01 01 01 00 03 02 0d 00 cd cc 4c 3e 00 00 00 00 00 00 00 00 01");

  it("every prefix of a frame is 'need more' for the stream decoder, and malformed for the frame decoder", () => {
    for (let n = 0; n < setVelocity.length; n++) {
      const r = new Reader(setVelocity.subarray(0, n));
      expect(decodeMessage(r)).toBeUndefined();
      expect(r.offset).toBe(0);
      expect(() => decodeFrame(setVelocity.subarray(0, n))).toThrow(TnyDecodeError);
    }
  });

  it("a frame longer than its header says is malformed (one message per frame)", () => {
    const longer = new Uint8Array([...setVelocity, 0x00]);
    expect(() => decodeFrame(longer)).toThrow(/length/);
  });

  it("short, long, non-boolean, non-finite and out-of-range arguments are rejected with the offset", () => {
    const sv = spec("body", "setVelocity").action.args;
    // every request's arguments are read from one scratch copy: what a decode returned stays as it was after the next
    const angles = spec("joint", "setJointAngles").action.args;
    const a = decodeArgs(angles, new Uint8Array(new Float32Array(14).fill(0.5).buffer));
    const b = decodeArgs(sv, new Uint8Array([...f32le(0.25), ...f32le(-0.125), ...f32le(1), 1]));
    decodeArgs(angles, new Uint8Array(new Float32Array(14).fill(-1).buffer));
    expect(Array.from(a[0] as Float32Array)).toEqual(new Array(14).fill(0.5));
    expect(b).toEqual([0.25, -0.125, 1, true]);
    expect(() => decodeArgs(sv, new Uint8Array(11))).toThrow(TnyDecodeError); // 11 of 12 bytes
    expect(() => decodeArgs(sv, new Uint8Array(14))).toThrow(/extra byte/);
    expect(() => decodeArgs(sv, new Uint8Array([...new Uint8Array(12), 2]))).toThrow(/bool 0 or 1/);
    expect(() => decodeArgs(sv, new Uint8Array([...f32le(Number.NaN), ...new Uint8Array(8)]))).toThrow(/finite float32 for x/);
    expect(() => decodeArgs(sv, new Uint8Array([...new Uint8Array(4), ...f32le(Number.POSITIVE_INFINITY), ...new Uint8Array(4)]))).toThrow(/offset 4/);
    expect(() => decodeArgs(spec("joint", "setAngle").action.args, new Uint8Array([14, ...f32le(0)]))).toThrow(/jointId ≤ 13/);
    expect(() => decodeArgs(spec("gait", "setType").action.args, new Uint8Array([3]))).toThrow(/gait ≤ 2/);
    expect(() => decodeArgs(spec("body", "setEnabled").action.args, new Uint8Array(u16le(0x4000)))).toThrow(/enabledMask/);
    const ssid = "x".repeat(32);
    const wifi = new Uint8Array([...u16le(32), ...new TextEncoder().encode(ssid), ...u16le(0)]);
    expect(() => decodeArgs(spec("wifi", "connectToAP").action.args, wifi)).toThrow(/shorter than 32/);
    expect(() => decodeArgs(spec("wifi", "connectToAP").action.args, new Uint8Array([...u16le(200), 1, 2]))).toThrow(TnyDecodeError);
  });

  it("error events with payloadSize > 32 are malformed", () => {
    const p = new Uint8Array(44);
    p[10] = 33;
    expect(() => decodeReturns(spec("error", "getErrorEventById").action.returns, p)).toThrow(/payloadSize/);
  });

  it("returns are lenient: appended bytes from a newer firmware are skipped", () => {
    const { action } = spec("power", "getVoltage");
    expect(decodeReturns(action.returns, new Uint8Array([...f32le(7.5), 1, 2, 3]))).toEqual([7.5]);
    // …but a short reply (the firmware's empty Ok for imu getAcceleration, §12 #7) is an error
    expect(() => decodeReturns(spec("imu", "getAcceleration").action.returns, new Uint8Array(0))).toThrow(TnyDecodeError);
  });

  it("unknown message types are returned, not thrown; events decode", () => {
    expect(decodeFrame(fromHex("07 00 05 00 00 00 00 00"))).toMatchObject({ kind: "unknown", type: 7, msgId: 5 });
    expect(decodeFrame(fromHex("03 00 05 00 09 00 01 00 ff"))).toMatchObject({ kind: "event", eventId: 9 });
    expect(decodeHeader(new Reader(new Uint8Array(7)))).toBeUndefined();
  });

  it("the encoder refuses bad values before writing", () => {
    const { module, action } = spec("body", "setVelocity");
    expect(() => encodeRequest(1, module, action, [0.2, 0, "0"])).toThrow(TnyEncodeError);
    expect(() => encodeRequest(1, module, action, [0.2, 0, 0, 1])).toThrow(/boolean/);
    const sa = spec("joint", "setAngle");
    expect(() => encodeRequest(1, sa.module, sa.action, [256, 0])).toThrow(/0\.\.255/);
    expect(() => encodeRequest(1, sa.module, sa.action, [1.5, 0])).toThrow(TnyEncodeError);
    const sj = spec("joint", "setJointAngles");
    expect(() => encodeRequest(1, sj.module, sj.action, [[1, 2, 3]])).toThrow(/14 numbers/);
    const w = spec("wifi", "connectToAP");
    expect(() => encodeRequest(1, w.module, w.action, ["x".repeat(32), ""])).toThrow(/shorter than 32/);
    expect(() => fieldsByteLength(action.args, [1, 2, 3, true, 5])).toThrow(/5 values/);
  });
});

describe("TNY codec properties", () => {
  it("every action: request args round-trip through encode → decodeFrame → decodeArgs", () => {
    for (const { module, action } of ALL) {
      fc.assert(
        fc.property(arbFields(action.args), fc.integer({ min: 0, max: 0xffff }), (args, msgId) => {
          const bytes = encodeRequest(msgId, module, action, args);
          const msg = decodeFrame(bytes);
          if (msg.kind !== "request") return false;
          expect([msg.msgId, msg.module, msg.action, msg.flags]).toEqual([msgId, module.code, action.code, 1]);
          const back = decodeArgs(action.args, msg.payload);
          const expected = args.map((v, i) => (v === undefined ? action.args[i]!.defaultValue : v));
          expect(back).toEqual(expected);
          return true;
        }),
        { numRuns: 40 },
      );
    }
  });

  it("every action: Ok replies round-trip through encode → decodeFrame → decodeReturns", () => {
    for (const { action } of ALL) {
      fc.assert(
        fc.property(arbFields(action.returns), fc.integer({ min: 0, max: 0xffff }), (values, msgId) => {
          const bytes = encodeResponse(msgId, 0, action.returns, values);
          const msg = decodeFrame(bytes);
          if (msg.kind !== "response") return false;
          expect(msg.status).toBe(0);
          expect(decodeReturns(action.returns, msg.payload)).toEqual(values);
          return true;
        }),
        { numRuns: 40 },
      );
    }
  });

  it("decodeArgs from an offset (the server reads the frame in place) decodes, and fails, as on the payload alone", () => {
    const outcome = (f: () => unknown[]): unknown => {
      try {
        return f();
      } catch (e) {
        if (!(e instanceof TnyDecodeError)) throw e;
        return `${e.offset}: ${e.message}`; // offsets count from the payload either way
      }
    };
    for (const { action } of ALL) {
      fc.assert(
        fc.property(fc.uint8Array({ maxLength: 300 }), fc.uint8Array({ maxLength: 12 }), (payload, before) => {
          const frame = new Uint8Array([...before, ...payload]);
          expect(outcome(() => decodeArgs(action.args, frame, before.length))).toEqual(outcome(() => decodeArgs(action.args, payload)));
        }),
        { numRuns: 30 },
      );
    }
  });

  it("decodeArgs of scalar arguments (the server's fast path) agrees with a DataView oracle on any payload, bytes of the right size included", () => {
    const SCALAR: Record<string, number> = { u8: 1, u16: 2, u32: 4, i32: 4, f32: 4, bool: 1 };
    const scalarActions = ALL.filter(({ action }) => action.args.length > 0 && action.args.every((f) => f.type in SCALAR));
    expect(scalarActions.map(({ module, action }) => `${module.name}.${action.name}`)).toEqual(expect.arrayContaining(["body.setVelocity", "body.setPosture", "joint.setAngle", "gait.setType"]));
    /** The strict rules read field by field with a DataView: the values, or null where decodeArgs must throw. */
    const oracle = (action: ActionSpec, p: Uint8Array): unknown[] | null => {
      const v = new DataView(p.buffer, p.byteOffset, p.byteLength);
      const out: unknown[] = [];
      let at = 0;
      for (const f of action.args) {
        if (f.optional && at === p.length) {
          out.push(f.defaultValue);
          continue;
        }
        if (at + SCALAR[f.type]! > p.length) return null;
        let x: number | boolean;
        if (f.type === "f32") {
          x = v.getFloat32(at, true);
          if (!Number.isFinite(x)) return null;
        } else if (f.type === "bool") {
          const b = v.getUint8(at);
          if (b > 1) return null;
          x = b === 1;
        } else {
          x = f.type === "u8" ? v.getUint8(at) : f.type === "u16" ? v.getUint16(at, true) : f.type === "u32" ? v.getUint32(at, true) : v.getInt32(at, true);
          if (f.max !== undefined && x > f.max) return null;
        }
        out.push(x);
        at += SCALAR[f.type]!;
      }
      return at === p.length ? out : null;
    };
    const outcome = (action: ActionSpec, frame: Uint8Array, start: number): unknown[] | null => {
      try {
        return decodeArgs(action.args, frame, start);
      } catch (e) {
        if (!(e instanceof TnyDecodeError)) throw e;
        return null;
      }
    };
    for (const { action } of scalarActions) {
      const size = action.args.reduce((n, f) => n + SCALAR[f.type]!, 0);
      // the exact size most of the time (where the fast path runs), near it otherwise; bytes before the payload as in a frame
      const payload = fc.oneof(fc.uint8Array({ minLength: size, maxLength: size }), fc.uint8Array({ maxLength: size + 3 }));
      fc.assert(
        fc.property(payload, fc.uint8Array({ maxLength: 8 }), (p, before) => {
          expect(outcome(action, new Uint8Array([...before, ...p]), before.length)).toEqual(oracle(action, p));
        }),
        { numRuns: 300 },
      );
    }
  });

  it("encodeResponse writes every byte: an allocator that hands out dirty memory gives the same reply", () => {
    const dirty = (n: number): Uint8Array => new Uint8Array(n).fill(0xa5);
    for (const { action } of ALL) {
      fc.assert(
        fc.property(arbFields(action.returns), fc.integer({ min: 0, max: 0xffff }), fc.constantFrom(0, 0, 1, 3, 4, 7), (values, msgId, status) => {
          expect(encodeResponse(msgId, status, action.returns, values, dirty)).toEqual(encodeResponse(msgId, status, action.returns, values));
        }),
        { numRuns: 20 },
      );
    }
  });

  it("decodeArgs/decodeReturns on arbitrary bytes either decode or throw TnyDecodeError, for every action", () => {
    for (const { action } of ALL) {
      fc.assert(
        fc.property(fc.uint8Array({ maxLength: 80 }), (bytes) => {
          for (const [fields, fn] of [
            [action.args, decodeArgs],
            [action.returns, decodeReturns],
          ] as const) {
            try {
              fn(fields, bytes);
            } catch (e) {
              if (!(e instanceof TnyDecodeError)) throw e;
            }
          }
        }),
        { numRuns: 60 },
      );
    }
  });

  it("a stream of messages split at any byte boundary decodes to the same messages", () => {
    const arbMsg = fc.record({
      msgId: fc.integer({ min: 0, max: 0xffff }),
      module: fc.integer({ min: 0, max: 255 }),
      action: fc.integer({ min: 0, max: 255 }),
      payload: fc.uint8Array({ maxLength: 40 }),
    });
    fc.assert(
      fc.property(fc.array(arbMsg, { maxLength: 8 }), fc.integer({ min: 1, max: 64 }), (msgs, chunk) => {
        const frames = msgs.map((m) => encodeRawRequest(m.msgId, m.module, m.action, m.payload));
        const all = new Uint8Array(frames.reduce((n, f) => n + f.length, 0));
        let at = 0;
        for (const f of frames) {
          all.set(f, at);
          at += f.length;
        }
        // feed in chunks: keep unconsumed bytes, append the next chunk, decode what is complete
        const got: unknown[] = [];
        let pending = new Uint8Array(0);
        for (let off = 0; off < all.length; off += chunk) {
          const next = all.subarray(off, off + chunk);
          const buf = new Uint8Array(pending.length + next.length);
          buf.set(pending);
          buf.set(next, pending.length);
          const r = new Reader(buf);
          for (;;) {
            const m = decodeMessage(r);
            if (!m) break;
            if (m.kind !== "request") return false;
            got.push({ msgId: m.msgId, module: m.module, action: m.action, payload: m.payload.slice() });
          }
          pending = buf.slice(r.offset);
        }
        expect(pending.length).toBe(0);
        expect(got).toEqual(msgs);
        return true;
      }),
      { numRuns: 200 },
    );
  });

  it("decodeMessage never throws on arbitrary bytes and never reads past them", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), (bytes) => {
        const r = new Reader(bytes);
        for (;;) {
          const m = decodeMessage(r);
          if (!m) break;
          expect(m.payload.byteOffset + m.payload.length).toBeLessThanOrEqual(bytes.byteOffset + bytes.length);
        }
        expect(r.offset).toBeLessThanOrEqual(bytes.length);
        if (bytes.length >= TNY_HEADER_BYTES) expect(decodeHeader(new Reader(bytes))).toBeDefined();
      }),
      { numRuns: 300 },
    );
  });
});
