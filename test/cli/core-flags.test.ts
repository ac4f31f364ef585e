/** serve's warnings for the threaded-core flags that the other flags make pointless (inapplicableFlags). */
import { describe, expect, it } from "vitest";
import { inapplicableFlags, type ServeOptions } from "../../src/cli/serve.js";

const base: ServeOptions = { body: "tny360", host: "127.0.0.1", lola: true, lolaReaders: 0, lolaGraceMs: 100, acceptBoardVersion: [11], seed: 1, tny: true, core: "worker" };
const given = (...keys: string[]) => (k: string) => keys.includes(k);

describe("--tny-server", () => {
  it("is quiet where it applies: a threaded TNY-360 core with its server", () => {
    expect(inapplicableFlags({ ...base, tnyServer: "main" }, given("tnyServer"))).toEqual([]);
  });
  it("warns with --core main, with --no-tny and on another body", () => {
    expect(inapplicableFlags({ ...base, core: "main", tnyServer: "main" }, given("tnyServer"))).toEqual([
      "--tny-server chooses the thread of a threaded core; with --core main everything runs on the main thread (ignored)",
    ]);
    expect(inapplicableFlags({ ...base, tny: false, tnyServer: "main" }, given("tnyServer"))).toEqual(["--tny-server has no effect with --no-tny; ignored"]);
    expect(inapplicableFlags({ ...base, body: "p7", tnyServer: "main" }, given("tnyServer"))).toEqual(["--tny-server applies to --body tny360 only; ignored with --body p7"]);
  });
});
