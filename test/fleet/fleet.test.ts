/**
 * The fleet over a real nats-server: three runtimes of three bodies (separate `bodylink serve
 * --fleet` processes, as a user runs them) join; an independent NATS client sees each one's state;
 * `bodylink fleet ls` lists them; fleet and local leases exclude each other through the one
 * Authority; `fleet estop --all` latches every robot; the broker stopping for 5 s leaves every
 * cycle running and they rejoin; a SIGKILLed runtime leaves the fleet within its TTL. The fleet is
 * the one docs/fleet.md sets up: `bodylink fleet init`, nats-server with exactly its file, each
 * runtime with its bundle (--fleet-dir), the client as the operator.
 */
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { inboxPrefixOf } from "../../src/fleet/broker-config.js";
import { FleetClient, isErrorAnswer } from "../../src/fleet/client.js";
import { loadBundle } from "../../src/fleet/roster.js";
import { subject } from "../../src/fleet/subjects.js";
import { until } from "../support/until.js";
import { hasNats, NATS_SKIP, type NatsServer, startNats } from "../support/nats.js";
import { stopServes } from "../support/fleet.js";

const run = promisify(execFile);
const bin = join(import.meta.dirname, "../../bin/bodylink.js");
const dir = mkdtempSync(join(tmpdir(), "bodylink-fleet-"));
const env = { ...process.env, BODYLINK_RUNTIME_DIR: dir };
const fleetDir = join(dir, "fleet");
const coachDir = join(fleetDir, "coach");
const TTL_MS = 3000;

interface Runtime {
  name: string;
  body: string;
  child: ChildProcess;
  api: string;
  err: string;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const r = await run(process.execPath, [bin, ...args], { env, timeout: 60_000 });
    return { code: 0, stdout: r.stdout, stderr: r.stderr };
  } catch (e) {
    const x = e as { code: number; stdout: string; stderr: string };
    return { code: x.code, stdout: x.stdout, stderr: x.stderr };
  }
}

async function json<T = Record<string, unknown>>(url: string, init?: RequestInit): Promise<{ status: number; body: T }> {
  const r = await fetch(url, init);
  return { status: r.status, body: (await r.json()) as T };
}

const post = (body: unknown, headers: Record<string, string> = {}): RequestInit => ({ method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) });

describe.skipIf(!hasNats)("a fleet of three bodies on a real nats-server", () => {
  let nats: NatsServer;
  let client: FleetClient;
  const rts: Runtime[] = [];

  async function serve(body: string, name: string): Promise<Runtime> {
    const child = spawn(
      process.execPath,
      [
        bin,
        "serve",
        "--body",
        body,
        "--name",
        name,
        "--api-port",
        "0",
        "--tny-port",
        "0",
        "--lola-path",
        join(dir, `${name}.sock`),
        "--fleet",
        nats.url,
        "--fleet-dir",
        join(fleetDir, name),
        "--fleet-ttl-ms",
        String(TTL_MS),
      ],
      { env, stdio: ["ignore", "pipe", "pipe"] },
    );
    const rt: Runtime = { name, body, child, api: "", err: "" };
    let out = "";
    child.stdout!.on("data", (d) => {
      out += String(d);
    });
    child.stderr!.on("data", (d) => {
      rt.err += String(d);
    });
    rt.api = await until(`${name} to start (${out}${rt.err})`, () => /robot API: (http:\/\/127\.0\.0\.1:\d+)/.exec(out)?.[1], 60_000);
    await until(`${name} to join (${rt.err})`, () => rt.err.includes(`fleet: joined ${nats.url} as ${name}`), 30_000);
    return rt;
  }

  const coach = () => {
    const b = loadBundle(coachDir);
    return FleetClient.connect({ url: nats.url, nkeyFile: b.seedFile, inboxPrefix: inboxPrefixOf("coach") }, "test coach", { signer: b.signingKey, robots: b.robots });
  };

  beforeAll(async () => {
    const init = await cli(
      "fleet",
      "init",
      fleetDir,
      "--url",
      "nats://127.0.0.1:4222",
      "--listen",
      "127.0.0.1:-1",
      "--store-dir",
      join(dir, "js"),
      "--robot",
      "nao-1",
      "--robot",
      "arm-1",
      "--robot",
      "quad-1",
      "--operator",
      "coach",
    );
    expect(init.code, init.stderr).toBe(0);
    nats = await startNats({ configFile: join(fleetDir, "nats.conf") });
    for (const [body, name] of [
      ["nao", "nao-1"],
      ["p7", "arm-1"],
      ["tny360", "quad-1"],
    ] as const)
      rts.push(await serve(body, name));
    client = await coach();
  }, 180_000);

  afterAll(async () => {
    await client?.close().catch(() => undefined);
    await stopServes(rts.map((r) => r.child));
    await nats?.close();
    rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  it("an independent NATS client receives each one's state (the robot API's message, with its name)", async () => {
    const seen = new Map<string, Record<string, unknown>>();
    const sub = client.subscribe(subject.allState, (name, body) => seen.set(name, body as Record<string, unknown>));
    try {
      await until("a state from every robot", () => seen.size === 3);
    } finally {
      sub.unsubscribe();
    }
    for (const r of rts) {
      const s = seen.get(r.name)!;
      expect(s).toMatchObject({ type: "state", name: r.name, body: r.body, link: "ok" });
      expect(s.seq).toEqual(expect.any(Number));
      expect(Array.isArray(s.joint_positions)).toBe(true);
    }
    expect((seen.get("nao-1")!.joint_positions as number[]).length).toBe(26);
  });

  it("`bodylink fleet ls` lists them with body, link, cycle, control and e-stop; --json too", async () => {
    const r = await cli("fleet", "ls", "--fleet", nats.url, "--fleet-dir", coachDir);
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout.trim().split("\n");
    expect(lines[0]).toMatch(/^NAME\s+BODY\s+HOST\s+LINK\s+BATTERY\s+CYCLE\s+CONTROL\s+E-STOP\s+UPTIME$/);
    expect(lines.slice(1).map((l) => l.split(/\s+/).slice(0, 2).join(" "))).toEqual(["arm-1 p7", "nao-1 nao", "quad-1 tny360"]);
    expect(r.stdout).toMatch(/^nao-1\s+nao\s+\S+\s+ok\s+\d+%\s+\d+\/\d+ late\s+-\s+-\s+\S+/m);
    const j = JSON.parse((await cli("fleet", "ls", "--fleet", nats.url, "--fleet-dir", coachDir, "--json")).stdout) as {
      presence: { name: string; urls: { api: string } };
      health: { link: string };
    }[];
    expect(j.map((x) => x.presence.urls.api).sort(), JSON.stringify(j.map((x) => x.presence))).toEqual(rts.map((x) => x.api).sort());
  }, 90_000);

  it("one authority: a fleet lease makes the local API answer 409 naming the fleet holder, and the other way round", async () => {
    const arm = rts.find((r) => r.name === "arm-1")!;
    const lease = await client.request<{ lease_id: string; source: string }>("arm-1", "acquire", { owner: "fleet-alice", lease_ms: 5000 });
    if (isErrorAnswer(lease)) throw new Error(lease.message);
    expect(lease.source).toBe("fleet");
    const refused = await json<{ code: string; message: string; holder: { owner: string; source: string } }>(`${arm.api}/v1/control`, post({ owner: "bob" }));
    expect(refused.status).toBe(409);
    expect(refused.body.code).toBe("BL_ERR_AUTH_HELD");
    expect(refused.body.message).toMatch(/^control is held by fleet-alice \(fleet\) until /);
    expect(refused.body.holder).toMatchObject({ owner: "fleet-alice", source: "fleet" });
    // The fleet sees who holds it, in the leases bucket.
    expect((await client.leases()).get("arm-1")).toMatchObject({ owner: "fleet-alice" });
    // Commands over NATS follow the API's rules: the lease, then the body's validation.
    expect(await client.request("arm-1", "clear-error", {})).toMatchObject({ code: "BL_ERR_AUTH_REQUIRED", status: 403 });
    expect(await client.request("arm-1", "move-joints", { positions_rad: "no" }, { leaseId: lease.lease_id })).toMatchObject({ code: "BL_ERR_API_BAD_REQUEST", status: 400 });
    expect(await client.request("arm-1", "clear-error", {}, { leaseId: "not-a-lease" })).toMatchObject({ code: "BL_ERR_AUTH_UNKNOWN_LEASE", holder: { owner: "fleet-alice" } });
    expect(await client.request("arm-1", "renew", { lease_ms: 4000 }, { leaseId: lease.lease_id })).toMatchObject({ source: "fleet", lease_ms: 4000 });
    expect(await client.request("arm-1", "release", {}, { leaseId: lease.lease_id })).toEqual({ released: true });
    await until("the lease record to go", async () => !(await client.leases()).has("arm-1"));

    const local = await json<{ lease_id: string }>(`${arm.api}/v1/control`, post({ owner: "bob", lease_ms: 5000 }));
    expect(local.status).toBe(201);
    const fleetRefused = await client.request("arm-1", "acquire", { owner: "fleet-alice" });
    expect(fleetRefused).toMatchObject({ code: "BL_ERR_AUTH_HELD", status: 409, holder: { owner: "bob", source: "api" } });
    expect(isErrorAnswer(fleetRefused) && fleetRefused.message).toMatch(/^control is held by bob \(api\) until /);
    await fetch(`${arm.api}/v1/control`, { method: "DELETE", headers: { "x-bodylink-lease": local.body.lease_id } });
  });

  it("`bodylink fleet estop --all` latches every robot through its own latch; `fleet reset --all` resets them", async () => {
    const r = await cli("fleet", "estop", "--all", "--fleet", nats.url, "--fleet-dir", coachDir, "--reason", "test stop-all");
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^3 answered in [\d.]+ ms$/m);
    for (const rt of rts) {
      const e = await json<{ latched: boolean; source: string; reason: string }>(`${rt.api}/v1/estop`);
      expect(e.body, rt.name).toMatchObject({ latched: true, reason: "test stop-all" });
      expect(e.body.source).toBe("fleet:coach"); // the operator whose signature came with it, not a name from the request
      // Latched: no client gets control, through the fleet or locally.
      expect(await client.request(rt.name, "acquire", { owner: "x" })).toMatchObject({ status: 409 });
      expect((await json(`${rt.api}/v1/control`, post({ owner: "y" }))).status).toBeGreaterThanOrEqual(400);
    }
    const reset = await cli("fleet", "reset", "--all", "--fleet", nats.url, "--fleet-dir", coachDir, "--reason", "area clear");
    expect(reset.code, reset.stderr).toBe(0);
    for (const rt of rts) expect((await json<{ latched: boolean }>(`${rt.api}/v1/estop`)).body.latched, rt.name).toBe(false);
    // Naming a robot that is not there: an answer is missing, and the exit code says so.
    const missing = await cli("fleet", "estop", "ghost", "--fleet", nats.url, "--fleet-dir", coachDir, "--wait-ms", "300");
    expect(missing.code).toBe(1);
    expect(missing.stderr.trim()).toBe("bodylink: estop: no answer from ghost [BL_ERR_FLEET_NO_ANSWER]");
  }, 90_000);

  it("stopping the broker for 5 s leaves every cycle running (link ok, cycles counting); they say so and rejoin", async () => {
    const health = (rt: Runtime) => json<{ link: string; cycle: { cycles: number }; fleet: { connection: string; presence: string; disconnects: number } }>(`${rt.api}/v1/health`).then((x) => x.body);
    const before = await Promise.all(rts.map(health));
    await client.close();
    await nats.stop();
    await until("every runtime to see the broker gone", async () => (await Promise.all(rts.map(health))).every((h) => h.fleet.connection === "disconnected"));
    await sleep(5000);
    const during = await Promise.all(rts.map(health));
    for (let i = 0; i < rts.length; i++) {
      expect(during[i]!.link, rts[i]!.name).toBe("ok");
      expect(during[i]!.cycle.cycles, rts[i]!.name).toBeGreaterThan(before[i]!.cycle.cycles);
    }
    for (const rt of rts) expect(rt.err).toMatch(new RegExp(`"level":40,.*"component":"fleet","msg":"fleet: lost the broker at ${nats.url}; the body keeps running, reconnecting with backoff`));
    await nats.restart();
    await until("every runtime to rejoin", async () => (await Promise.all(rts.map(health))).every((h) => h.fleet.connection === "connected" && h.fleet.presence === "ok"), 30_000);
    client = await coach();
    const seen = new Set<string>();
    const sub = client.subscribe(subject.allState, (name) => seen.add(name));
    await until("states from every robot again", () => seen.size === 3);
    sub.unsubscribe();
    expect((await client.robots()).map((r) => r.name)).toEqual(["arm-1", "nao-1", "quad-1"]);
  }, 90_000);

  it("a SIGKILLed runtime leaves `fleet ls` within the TTL; the others stay", async () => {
    const quad = rts.find((r) => r.name === "quad-1")!;
    expect((await client.robots()).map((r) => r.name)).toContain("quad-1");
    const exited = new Promise((r) => quad.child.once("exit", r));
    quad.child.kill("SIGKILL");
    await exited;
    // Readers drop a record not refreshed within its TTL (refreshed every third of it: gone 2-3 s
    // after the kill); the bucket's max age removes it as well. Polled, failing past the TTL.
    await until("quad-1 to leave fleet ls within the TTL", async () => !(await client.robots()).some((r) => r.name === "quad-1"), TTL_MS);
    expect((await client.robots()).map((r) => r.name)).toEqual(["arm-1", "nao-1"]);
    const ls = await cli("fleet", "ls", "--fleet", nats.url, "--fleet-dir", coachDir);
    expect(ls.stdout).not.toMatch(/quad-1/);
  }, 60_000);
});

// Without the package: one skipped test that names it.
if (!hasNats) describe("fleet over NATS", () => it.skip(NATS_SKIP, () => undefined));
