/**
 * The options of an in-process `serve` of a simulated body for tests that record or view it: the
 * robot API on a free loopback port, no LoLA socket, the TNY-360 API server on a free port, quiet.
 * Spread it and add the body, the recording, the seed (and `tny: false` where no TNY-360 API server is wanted).
 * The kinematic mechanics, explicitly (serve's default is physics, ~10x the NAO's CPU per cycle, and
 * benches spread this too, outside vitest's BODYLINK_SIM): add `sim: "physics"` where a test needs MuJoCo.
 */
import type { ServeOptions } from "../../src/cli/serve.js";

export const SIM_RUNTIME_OPTIONS: Readonly<Omit<ServeOptions, "body" | "seed">> = {
  host: "127.0.0.1",
  apiPort: 0,
  lola: false,
  lolaReaders: 0,
  lolaGraceMs: 100,
  acceptBoardVersion: [11],
  tny: true,
  tnyPort: 0,
  quiet: true,
  sim: "kinematic",
};

/**
 * The same for a LoLA client driving the simulated NAO's chest board: its LoLA socket on (add
 * `lolaPath`), no read-only clients, both board versions, no TNY-360 API server.
 */
export const LOLA_SIM_RUNTIME_OPTIONS: Readonly<Omit<ServeOptions, "body" | "seed">> = { ...SIM_RUNTIME_OPTIONS, lola: true, acceptBoardVersion: [10, 11], tny: false };
