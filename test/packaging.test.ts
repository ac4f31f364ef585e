/**
 * Issue 14 item 12: what a published package needs beyond its code, and what a maintainer needs
 * from CI (item 13): a LICENSE matching package.json, the examples in the tarball, `ws` declared
 * for Node users of bodylink/client, docs links that resolve inside the repository, lint in CI.
 */
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";

const pkg = JSON.parse(readFileSync("package.json", "utf8")) as {
  license: string;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
  engines: { node: string };
  allowScripts?: Record<string, boolean>;
};

describe("the package as published", () => {
  it("has the MIT LICENSE its package.json names, and the tarball carries it and examples/", () => {
    expect(pkg.license).toBe("MIT");
    expect(readFileSync("LICENSE", "utf8")).toMatch(/^MIT License\n/);
    const out = execFileSync("npm", ["pack", "--dry-run", "--json", "--ignore-scripts"], { encoding: "utf8" });
    const files = (JSON.parse(out) as Array<{ files: Array<{ path: string }> }>)[0]!.files.map((f) => f.path);
    expect(files).toContain("LICENSE");
    expect(files).toContain("examples/lola-client.ts");
  }, 60_000);
  it("declares ws for Node users of bodylink/client (an optional peer), and docs/api.md says to install it", () => {
    expect(pkg.peerDependencies?.ws).toMatch(/^\^8\./);
    expect(pkg.peerDependenciesMeta?.ws?.optional).toBe(true);
    expect(readFileSync("docs/api.md", "utf8")).toContain("`npm install ws`");
  });
  it("every relative link in README.md and docs/ points at a file in the repository", () => {
    const pages = [
      "README.md",
      ...readdirSync("docs", { recursive: true })
        .map(String)
        .filter((f) => f.endsWith(".md"))
        .map((f) => join("docs", f)),
    ];
    const broken: string[] = [];
    for (const page of pages) {
      for (const m of readFileSync(page, "utf8").matchAll(/\]\(([^)#\s]+)(?:#[^)]*)?\)/g)) {
        const target = m[1]!;
        if (/^[a-z]+:/.test(target)) continue; // http:, https:, mailto:
        const path = join(dirname(page), target);
        if (path.startsWith("..") || !existsSync(path)) broken.push(`${page}: ${target}`);
      }
    }
    expect(broken).toEqual([]);
  });
  it("CI lints (type errors under test/ are caught only by tsc) before it tests", () => {
    const ci = readFileSync(".ci/run", "utf8");
    expect(ci).toMatch(/^npm run lint$/m);
    expect(ci.indexOf("npm run lint")).toBeLessThan(ci.indexOf("npm test"));
  });
});

interface LockEntry {
  version?: string;
  engines?: { node?: string } | string[];
  hasInstallScript?: boolean;
}
const semver = createRequire(import.meta.url)("semver") as {
  satisfies(version: string, range: string): boolean;
  minVersion(range: string): { version: string } | null;
};

describe("npm ci on Node 20 installs clean", () => {
  const lock = JSON.parse(readFileSync("package-lock.json", "utf8")) as { packages: Record<string, LockEntry> };
  const installed = Object.entries(lock.packages).filter(([path]) => path !== "");
  const oldestNode = semver.minVersion(pkg.engines.node)!.version;

  it("every locked package's engines.node admits the oldest Node bodylink supports (no EBADENGINE)", () => {
    expect(oldestNode).toBe("20.19.0");
    expect(installed.length).toBeGreaterThan(100);
    const refused: string[] = [];
    for (const [path, entry] of installed) {
      const range = Array.isArray(entry.engines) ? undefined : entry.engines?.node;
      if (range !== undefined && !semver.satisfies(oldestNode, range)) refused.push(`${path}@${entry.version}: node ${range}`);
    }
    expect(refused).toEqual([]);
  });
  it("every locked package with an install script is reviewed in allowScripts (npm 11 warns otherwise)", () => {
    const unreviewed = installed
      .filter(([, entry]) => entry.hasInstallScript === true)
      .map(([path]) => path.slice(path.lastIndexOf("node_modules/") + "node_modules/".length))
      .filter((name) => pkg.allowScripts?.[name] === undefined);
    expect(unreviewed).toEqual([]);
  });
});
