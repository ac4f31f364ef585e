/** Issue 21 item 2: the shipped models are the generators' output, byte for byte (`npm run models` rewrites them). */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { MODEL_FILES } from "../../src/bodies/models.js";

describe("shipped simulation models", () => {
  for (const [path, generate] of Object.entries(MODEL_FILES)) {
    it(`${path} is what its generator writes (run npm run models after changing a table)`, () => {
      expect(readFileSync(path, "utf8")).toBe(generate());
    });
    it(`${path}: generating twice gives the same text`, () => {
      expect(generate()).toBe(generate());
    });
  }
  it("the package ships models/", () => {
    const pkg = JSON.parse(readFileSync("package.json", "utf8")) as { files: string[] };
    expect(pkg.files).toContain("models/");
  });
});
