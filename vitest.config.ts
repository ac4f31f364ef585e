import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    testTimeout: 20_000,
    hookTimeout: 20_000,
    // Real sockets and servers: keep files in separate forks, two at a time (CI has 2 cores).
    pool: "forks",
    maxWorkers: 2,
    reporters: ["default"],
    // dist/ fresh before any file runs (the CLI runs from it; test/package.test.ts imports it);
    // then one line per missing system package (chromium, nats-server), once per run.
    globalSetup: ["test/support/build-dist.ts", "test/support/report-skips.ts"],
    projects: [
      {
        extends: true,
        test: { name: "node", include: ["test/**/*.test.ts"], exclude: ["test/dashboard/**"], sequence: { groupOrder: 0 } },
      },
      {
        // The browser test starts chromium, which takes a core: run it after the rest, so timing
        // tests (the 20 Hz stream rate) never share the machine with it.
        extends: true,
        test: { name: "browser", include: ["test/dashboard/**/*.test.ts"], sequence: { groupOrder: 1 } },
      },
    ],
  },
});
