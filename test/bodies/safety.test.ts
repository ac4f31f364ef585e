/**
 * The safety-code table (src/bodies/safety.ts): every code has its words and its class, numbers
 * round-trip, a number outside the table never reads as "none", and every code a body or a host
 * can report is one the robot API's schema lists (the codes themselves are typed: a typo does not compile).
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { LINK_CODE, LINK_STATUS } from "../../src/bodies/link.js";
import { leaseEndCode, SAFETY_CODE, SAFETY_CODES, SAFETY_FAULT, SAFETY_TEXT, safetyCodeWord } from "../../src/bodies/safety.js";
import { linkCodeOf, safetyCodeOf } from "../../src/shm/codes.js";
import { HealthSchema } from "../../src/serve/api/schemas.js";

describe("safety codes", () => {
  it("one table: unique words, a text and a class each, numbers round-trip", () => {
    expect(new Set(SAFETY_CODES).size).toBe(SAFETY_CODES.length);
    expect(Object.keys(SAFETY_TEXT).sort()).toEqual([...SAFETY_CODES].sort());
    expect(Object.keys(SAFETY_FAULT).sort()).toEqual([...SAFETY_CODES].sort());
    for (const c of SAFETY_CODES) {
      expect(SAFETY_TEXT[c].length).toBeGreaterThan(10);
      expect(safetyCodeWord(SAFETY_CODE[c])).toBe(c);
    }
    expect(SAFETY_CODE.none).toBe(0);
    expect(SAFETY_FAULT.none).toBe(false);
    expect(SAFETY_FAULT.cycle_late && SAFETY_FAULT.link_lost && SAFETY_FAULT.estop).toBe(true);
  });

  it("the per-cycle lookups (last answer kept) agree with the tables in any order of calls", () => {
    // Each word twice in a row (the kept answer), then every pair (a change each call).
    for (const c of SAFETY_CODES) for (let i = 0; i < 2; i++) expect(safetyCodeOf(c)).toBe(SAFETY_CODE[c]);
    for (const a of SAFETY_CODES) for (const b of SAFETY_CODES) expect([safetyCodeOf(a), safetyCodeOf(b)]).toEqual([SAFETY_CODE[a], SAFETY_CODE[b]]);
    for (const a of LINK_STATUS) for (const b of LINK_STATUS) expect([linkCodeOf(a), linkCodeOf(b), linkCodeOf(b)]).toEqual([LINK_CODE[a], LINK_CODE[b], LINK_CODE[b]]);
  });

  it("a number outside the table is a fault, never 'none'", () => {
    for (const n of [SAFETY_CODES.length, 255, -1, 1.5, Number.NaN]) {
      expect(safetyCodeWord(n)).toBe("internal_error");
    }
  });

  it("a lease's end has its own code", () => {
    expect([leaseEndCode("expired"), leaseEndCode("revoked"), leaseEndCode("released")]).toEqual(["lease_expired", "lease_revoked", "lease_released"]);
  });

  it("the robot API's health schema lists exactly the table", () => {
    const schema = HealthSchema.properties.safety_code as unknown as { anyOf: Array<{ const: string }> };
    expect(schema.anyOf.map((s) => s.const)).toEqual([...SAFETY_CODES]);
  });

  it("docs/api.md's table is this table", () => {
    const rows = [...readFileSync("docs/api.md", "utf8").matchAll(/^\| `([a-z_]+)` \| (yes)? \| (.*) \|$/gm)].map((m) => [m[1], m[2] === "yes", m[3]]);
    expect(rows).toEqual(SAFETY_CODES.map((c) => [c, SAFETY_FAULT[c], SAFETY_TEXT[c]]));
  });
});
