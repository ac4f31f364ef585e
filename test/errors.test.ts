import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { BodylinkError, ERRORS } from "../src/errors.js";

describe("the error table", () => {
  it("docs/errors.md lists exactly the codes of src/errors.ts, with their status and message", () => {
    const doc = readFileSync("docs/errors.md", "utf8");
    const documented = [...doc.matchAll(/^\| `(BL_ERR_[A-Z_]+)` \| (\d+) \| (.*) \|$/gm)].map((m) => [m[1], Number(m[2]), m[3]!.replace(/\\\|/g, "|")]);
    expect(documented).toEqual(Object.entries(ERRORS).map(([k, v]) => [k, v.status, v.message]));
  });
  it("every code follows BL_ERR_<AREA>_<WHAT> and every message is one line", () => {
    for (const [k, v] of Object.entries(ERRORS)) {
      expect(k).toMatch(/^BL_ERR_[A-Z]+_[A-Z_]+$/);
      expect(v.message).not.toMatch(/\n/);
    }
  });
  it("formats its arguments into the template", () => {
    const e = new BodylinkError("BL_ERR_LINK_BUSY", "pid 7, sim", 7);
    expect(e.message).toBe("the chest board is held by a running runtime (pid 7, sim); stop it first: Ctrl-C in its terminal, or kill 7 (on a stock robot: systemctl stop lola hal)");
    expect(e.status).toBe(409);
  });
});
