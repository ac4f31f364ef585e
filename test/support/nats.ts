/**
 * A real nats-server for tests (Debian's nats-server package, JetStream on, store in a temporary
 * directory, loopback, a free port). `hasNats` is false when the package is missing: tests skip
 * with one line naming it. With `configFile`, it runs exactly that file (`nats-server -c FILE`,
 * nothing else on the command line: the file says where to listen, e.g. `127.0.0.1:-1`).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { locate, SYSTEM_PACKAGES, skipLine } from "./system-packages.js";

/** Debian installs it in /usr/sbin (root's PATH only); BODYLINK_NATS_SERVER overrides. */
const found = locate(SYSTEM_PACKAGES.natsServer);
export const NATS_SERVER = found ?? "/usr/sbin/nats-server";
export const hasNats = found !== null;
/** The one line that says why the fleet tests skip ("" when nats-server is installed). */
export const NATS_SKIP = skipLine(SYSTEM_PACKAGES.natsServer) ?? "";

export interface NatsServer {
  readonly url: string;
  readonly port: number;
  /** Stop it (SIGTERM, or SIGKILL), keeping the store. */
  stop(signal?: NodeJS.Signals): Promise<void>;
  /** Start it again on the same port and store. */
  restart(): Promise<void>;
  /** Stop and remove the store. */
  close(): Promise<void>;
  /** What the server wrote to stderr so far (every start), e.g. its "Slow Consumer Detected" lines. */
  log(): string;
}

export async function startNats(opts: { config?: string; configFile?: string } = {}): Promise<NatsServer> {
  const dir = mkdtempSync(join(tmpdir(), "bodylink-nats-"));
  let port = 0;
  let child: ChildProcess | null = null;
  let serverLog = "";
  const conf = join(dir, "nats.conf");
  if (opts.config) writeFileSync(conf, opts.config);
  const launch = async (p: number): Promise<number> => {
    const args = opts.configFile
      ? ["-c", opts.configFile, ...(p === 0 ? [] : ["-p", String(p)])]
      : ["-a", "127.0.0.1", "-p", String(p === 0 ? -1 : p), "-js", "-sd", join(dir, "js"), ...(opts.config ? ["-c", conf] : [])];
    const c = spawn(NATS_SERVER, args, { stdio: ["ignore", "ignore", "pipe"] });
    child = c;
    let log = "";
    return new Promise<number>((resolve, reject) => {
      const t = setTimeout(() => reject(new Error(`nats-server did not start: ${log}`)), 15_000);
      c.stderr!.on("data", (d: Buffer) => {
        log += String(d);
        serverLog += String(d);
        const m = /Listening for client connections on [^\s]*:(\d+)/.exec(log);
        if (m && /Server is ready/.test(log)) {
          clearTimeout(t);
          resolve(Number(m[1]));
        }
      });
      c.once("exit", (code) => {
        clearTimeout(t);
        reject(new Error(`nats-server exited with ${code}: ${log}`));
      });
    });
  };
  port = await launch(0);
  const stop = async (signal: NodeJS.Signals = "SIGTERM") => {
    const c = child;
    if (!c || c.exitCode !== null) return;
    const exited = new Promise((r) => c.once("exit", r));
    c.kill(signal);
    await exited;
    child = null;
  };
  return {
    url: `nats://127.0.0.1:${port}`,
    port,
    stop,
    async restart() {
      await stop();
      await launch(port);
    },
    async close() {
      await stop("SIGKILL");
      rmSync(dir, { recursive: true, force: true });
    },
    log: () => serverLog,
  };
}
