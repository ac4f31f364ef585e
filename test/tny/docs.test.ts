/** docs/protocol/tny360.md lists exactly the table's modules and actions, with the same codes, control and simulator columns. */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { MODULES, type ModuleSpec, statusName } from "../../src/wire/tny/constants.js";

const doc = readFileSync(new URL("../../docs/protocol/tny360.md", import.meta.url), "utf8");
const hex = (n: number) => `0x${n.toString(16).padStart(2, "0").toUpperCase()}`;

describe("docs/protocol/tny360.md", () => {
  it("has one row per action of the table, with its codes, control flag and what the simulator answers", () => {
    const rows = new Map<string, { codes: string; control: string; sim: string }>();
    for (const line of doc.split("\n")) {
      const m = /^\| (0x[0-9A-F]{2} 0x[0-9A-F]{2}) \| (\w+\.\w+) \| .* \| (yes|—) \| (.*) \|$/.exec(line);
      if (m) rows.set(m[2]!, { codes: m[1]!, control: m[3]!, sim: m[4]! });
    }
    const expected = new Map<string, { codes: string; control: string; sim: string }>();
    for (const mod of MODULES as readonly ModuleSpec[]) {
      for (const a of mod.actions) {
        expected.set(`${mod.name}.${a.name}`, {
          codes: `${hex(mod.code)} ${hex(a.code)}`,
          control: a.command ? "yes" : "—",
          sim: a.sim.served ? `served${a.rpc ? " (replies after a tick)" : ""}` : `${statusName(a.sim.status)}: ${a.sim.why}`,
        });
      }
    }
    expect(Object.fromEntries(rows)).toEqual(Object.fromEntries(expected));
  });

  it("shows the golden vectors the tests use", () => {
    expect(doc).toContain("`01 01 01 00 03 02 0d 00` `cd cc 4c 3e 00 00 00 00 00 00 00 00 01`");
    expect(doc).toContain("`02 00 01 00 00 00 00 00`");
    expect(doc).toContain("`01 01 02 00 03 00 02 00` `ff 0f`");
  });
});
