/** serve's warnings for flags that the chosen body or the other flags make pointless (inapplicableFlags). */
import { describe, expect, it } from "vitest";
import { inapplicableFlags, type ServeOptions } from "../../src/cli/serve.js";

const base: ServeOptions = { body: "tny360", host: "127.0.0.1", lola: true, lolaReaders: 0, lolaGraceMs: 100, acceptBoardVersion: [11], seed: 1, tny: true };
const given =
  (...keys: string[]) =>
  (k: string) =>
    keys.includes(k);

describe("inapplicableFlags", () => {
  it("is quiet where a flag applies", () => {
    expect(inapplicableFlags({ ...base, tnyPort: 0 }, given("tnyPort"))).toEqual([]);
    expect(inapplicableFlags({ ...base, coreWake: "wait" }, given("coreWake"))).toEqual([]);
  });
  it("warns with --no-tny and on another body", () => {
    expect(inapplicableFlags({ ...base, tny: false, tnyPort: 0 }, given("tnyPort"))).toEqual(["--tny-port has no effect with --no-tny; ignored"]);
    expect(inapplicableFlags({ ...base, body: "p7", tnyHost: "10.0.0.2" }, given("tnyHost"))).toEqual(["--tny-host applies to --body tny360 only; ignored with --body p7"]);
    expect(inapplicableFlags({ ...base, body: "nao", lola: false, lolaReaders: 2 }, given("lolaReaders"))).toEqual(["--lola-readers has no effect with --no-lola; ignored"]);
  });
});
