/**
 * What each body's threaded core takes (src/rt/<body>-worker.ts; its host src/host/<body>-host.ts):
 * plain data, it crosses in workerData. The buffer's layout is every core's (core-shm.ts) with the
 * body's state region (src/bodies/<body>/layout.ts).
 */
import type { NaoSimKind } from "../bodies/nao/sim-world.js";
import type { CoreBaseOptions } from "./core-shm.js";

export interface NaoCoreOptions extends CoreBaseOptions {
  seed: number;
  usb: boolean;
  acceptBoardVersions: readonly number[];
  /** The simulated body's mechanics (without --usb): the kinematic puppet or MuJoCo physics. */
  sim?: NaoSimKind;
  lola: { path: string; fallbackPath: string | null; readers: number; graceMs: number; group?: string } | null;
  /**
   * Run on top of the robot's own LoLA at `path` instead of the chest board (docs/lola.md, "On a
   * stock robot"): the core owns the upstream client, the driver and our LoLA server.
   */
  upstream?: { path: string; stallMs?: number } | null;
}

export interface P7CoreOptions extends CoreBaseOptions {
  seed: number;
}

export interface Tny360CoreOptions extends CoreBaseOptions {
  seed: number;
  /** A real robot instead of the simulator. */
  remote: { host: string; port: number } | null;
  /**
   * The TNY-360 API server, when it runs on the core's thread (docs/architecture.md says why it
   * does by default): where it listens, the access rules (web-access.ts), and whether a taken port
   * falls back to a free one (no --tny-port given).
   */
  server: {
    host: string;
    port: number;
    fallbackToFreePort: boolean;
    token: string | null;
    allowHosts: string[];
    allowOrigins: string[];
  } | null;
}
