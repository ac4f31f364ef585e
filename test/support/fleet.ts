/**
 * A closed fleet for tests, as docs/fleet.md sets one up: `fleet init` in a temporary directory
 * (loopback, a free port, its own JetStream store), Debian's nats-server with exactly that file,
 * and each identity's bundle and client at hand. Runtimes join with `fleetDir: fleet.bundle(NAME)`.
 */
import type { ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { inboxPrefixOf } from "../../src/fleet/broker-config.js";
import { FleetClient } from "../../src/fleet/client.js";
import { initFleet, loadBundle } from "../../src/fleet/roster.js";
import { type NatsServer, startNats } from "./nats.js";

export interface ClosedFleet {
  readonly nats: NatsServer;
  readonly url: string;
  /** The fleet directory (`fleet init DIR`). */
  readonly dir: string;
  /** An identity's bundle directory. */
  bundle(name: string): string;
  /** A fleet client as this identity: its NKey and inbox, its signing key, the fleet's robot keys. */
  client(name: string): Promise<FleetClient>;
  close(): Promise<void>;
}

export async function startClosedFleet(o: { robots: string[]; operators?: string[]; viewers?: string[] }): Promise<ClosedFleet> {
  const root = mkdtempSync(join(tmpdir(), "bodylink-closed-fleet-"));
  const dir = join(root, "fleet");
  initFleet(dir, { url: "nats://127.0.0.1:4222", listen: "127.0.0.1:-1", storeDir: join(root, "js"), robots: o.robots, operators: o.operators ?? [], viewers: o.viewers ?? [] });
  const nats = await startNats({ configFile: join(dir, "nats.conf") });
  const bundle = (name: string) => join(dir, name);
  return {
    nats,
    url: nats.url,
    dir,
    bundle,
    client(name) {
      const b = loadBundle(bundle(name));
      return FleetClient.connect({ url: nats.url, nkeyFile: b.seedFile, inboxPrefix: inboxPrefixOf(name) }, `test ${name}`, { signer: b.signingKey, robots: b.robots });
    },
    async close() {
      await nats.close();
      rmSync(root, { recursive: true, force: true });
    },
  };
}

/** Ends each `serve` child with SIGINT (the operator's Ctrl-C: the runtime leaves the fleet cleanly) and waits for its exit. */
export async function stopServes(children: readonly ChildProcess[]): Promise<void> {
  await Promise.all(
    children.map(async (child) => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((res) => child.once("exit", res));
      child.kill("SIGINT");
      await exited;
    }),
  );
}
