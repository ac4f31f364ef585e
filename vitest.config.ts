import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 20_000,
    hookTimeout: 20_000,
    // Real sockets and servers: keep files in separate forks, two at a time (CI has 2 cores).
    pool: "forks",
    maxWorkers: 2,
    reporters: ["default"],
  },
});
