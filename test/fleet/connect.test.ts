/**
 * Reaching the broker: URL and credential options (unit), a token-protected nats-server (real),
 * and the CLI's one-line errors when the URL is bad or nobody answers.
 */
import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FleetClient } from "../../src/fleet/client.js";
import { hasCredentials, natsOptions, redactUrl, requireFleetCredentials } from "../../src/fleet/connect.js";
import { hasNats, NATS_SKIP, type NatsServer, startNats } from "../support/nats.js";

const run = promisify(execFile);
const bin = join(import.meta.dirname, "../../bin/bodylink.js");

async function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const r = await run(process.execPath, [bin, ...args], { timeout: 60_000 });
    return { code: 0, stdout: r.stdout, stderr: r.stderr };
  } catch (e) {
    const x = e as { code: number; stdout: string; stderr: string };
    return { code: x.code, stdout: x.stdout, stderr: x.stderr };
  }
}

describe("fleet connection options", () => {
  it("nats:// and tls:// URLs, credentials from the URL, one way to authenticate", () => {
    expect(natsOptions({ url: "nats://10.0.0.1:4222" })).toEqual({ servers: "10.0.0.1:4222" });
    expect(natsOptions({ url: "nats://alice:s%40cret@broker" })).toEqual({ servers: "broker:4222", user: "alice", pass: "s@cret" });
    expect(natsOptions({ url: "tls://broker:4443", caFile: "/etc/ca.pem" })).toEqual({ servers: "broker:4443", tls: { caFile: "/etc/ca.pem" } });
    expect(natsOptions({ url: "nats://broker", token: "t" })).toEqual({ servers: "broker:4222", token: "t" });
    expect(() => natsOptions({ url: "http://broker" })).toThrow(/the scheme must be nats:\/\/ or tls:\/\//);
    expect(() => natsOptions({ url: "not a url" })).toThrow(/is not a URL; write nats:\/\/HOST:PORT/);
    expect(() => natsOptions({ url: "nats://u:p@broker", token: "t" })).toThrow(/choose one way to authenticate/);
    expect(() => natsOptions({ url: "nats://broker", credsFile: "/nonexistent.creds" })).toThrow(/cannot read the creds file \/nonexistent\.creds/);
    expect(redactUrl("nats://alice:secret@broker:4222")).toBe("nats://broker:4222");
  });

  it("a fleet is closed by default: serve --fleet and fleet commands without credentials are refused in one line; --fleet-insecure says so explicitly", async () => {
    expect(hasCredentials({ url: "nats://broker" })).toBe(false);
    expect(hasCredentials({ url: "nats://u:p@broker" })).toBe(true);
    expect(hasCredentials({ url: "nats://broker", nkeyFile: "/x" })).toBe(true);
    expect(() => requireFleetCredentials({ url: "nats://10.0.0.1:4222" }, false)).toThrow(/--fleet nats:\/\/10\.0\.0\.1:4222 has no credentials/);
    expect(() => requireFleetCredentials({ url: "nats://10.0.0.1:4222" }, true)).not.toThrow();
    const serve = await cli("serve", "--body", "p7", "--api-port", "0", "--fleet", "nats://127.0.0.1:1");
    expect(serve.code).toBe(1);
    expect(serve.stderr.trim()).toMatch(/^bodylink: --fleet nats:\/\/127\.0\.0\.1:1 has no credentials: anyone who reaches the broker could see and stop every robot; .* \[BL_ERR_FLEET_INSECURE\]$/);
    const ls = await cli("fleet", "ls", "--fleet", "nats://127.0.0.1:1");
    expect(ls.stderr.trim()).toMatch(/\[BL_ERR_FLEET_INSECURE\]$/);
    // With the explicit flag it gets as far as the broker (which is not there).
    const insecure = await cli("fleet", "ls", "--fleet", "nats://127.0.0.1:1", "--fleet-insecure");
    expect(insecure.stderr.trim()).toMatch(/\[BL_ERR_FLEET_UNREACHABLE\]$/);
  }, 60_000);

  it("the CLI: a bad --fleet URL and an unreachable broker are one line each, non-zero", async () => {
    const bad = await cli("serve", "--body", "p7", "--api-port", "0", "--fleet", "http://x");
    expect(bad.code).toBe(1);
    expect(bad.stderr.trim()).toBe("bodylink: fleet configuration: --fleet http://x: the scheme must be nats:// or tls:// [BL_ERR_FLEET_CONFIG]");
    const none = await cli("fleet", "ls", "--fleet", "nats://127.0.0.1:1", "--fleet-insecure");
    expect(none.code).toBe(1);
    expect(none.stderr.trim().split("\n")).toHaveLength(1);
    expect(none.stderr.trim()).toMatch(/^bodylink: cannot reach the fleet's NATS server at nats:\/\/127\.0\.0\.1:1: .*\[BL_ERR_FLEET_UNREACHABLE\]$/);
    const usage = await cli("fleet", "estop", "--fleet", "nats://127.0.0.1:1");
    expect(usage.code).toBe(2);
    expect(usage.stderr).toMatch(/name the robots, or pass --all/);
  }, 60_000);
});

describe.skipIf(!hasNats)("a token-protected nats-server", () => {
  let nats: NatsServer;
  beforeAll(async () => {
    nats = await startNats({ config: 'authorization { token: "s3cret" }\n' });
  });
  afterAll(async () => {
    await nats?.close();
  });
  it("lets in a client with the token and refuses one without, with a clear error", async () => {
    const ok = await FleetClient.connect({ url: nats.url, token: "s3cret" });
    expect(await ok.robots()).toEqual([]);
    await ok.close();
    await expect(FleetClient.connect({ url: nats.url })).rejects.toThrow(/cannot reach the fleet's NATS server at nats:\/\/127\.0\.0\.1:\d+: .*(auth|Authorization)/i);
  });
});

// Without the package: one skipped test that names it.
if (!hasNats) describe("a token-protected nats-server", () => it.skip(NATS_SKIP, () => undefined));
