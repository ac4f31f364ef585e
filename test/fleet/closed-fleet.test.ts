/**
 * A closed fleet against Debian's nats-server started with exactly the file `bodylink fleet init`
 * wrote (issue 25, docs/security.md "The fleet"). Every forgery measured on the open fleet is tried
 * as an anonymous client, the viewer, another robot (arm-2's login) and an operator whose key the
 * robot does not trust (rogue, added after arm-1's bundle was handed out): reset, acquire,
 * commands, stream and bucket deletion, forged presence, forged acknowledgements. All are refused,
 * arm-1 does not move and its latch holds (read through its real runtime), and `fleet estop --all`
 * names the robot that did not really answer. The same checks as the admin identity (which the
 * broker lets do anything: a misconfigured broker) show the signatures hold on their own.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { jetstreamManager } from "@nats-io/jetstream";
import { Kvm } from "@nats-io/kv";
import { connect, createInbox, type Msg, type NatsConnection, nkeyAuthenticator } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningRuntime, startRuntime } from "../../src/cli/serve.js";
import { inboxPrefixOf } from "../../src/fleet/broker-config.js";
import { FleetClient } from "../../src/fleet/client.js";
import { headersOf } from "../../src/fleet/nats.js";
import { loadBundle } from "../../src/fleet/roster.js";
import { generateSigningKey, signPresence, signRequest } from "../../src/fleet/sign.js";
import { EVENTS_STREAM, LEASES_BUCKET, ROBOTS_BUCKET, subject } from "../../src/fleet/subjects.js";
import { cli as runCli } from "../support/cli.js";
import { until } from "../support/until.js";
import { hasNats, NATS_SKIP, type NatsServer, startNats } from "../support/nats.js";
import { SIM_RUNTIME_OPTIONS } from "../support/sim-runtime.js";

const bin = join(import.meta.dirname, "../../bin/bodylink.js");
const dir = mkdtempSync(join(tmpdir(), "bodylink-closed-fleet-"));
const fleetDir = join(dir, "fleet");
const deployed = join(dir, "deployed"); // the bundles as handed out to the robots
const rtDir = join(dir, "rt");
const env = { ...process.env, BODYLINK_RUNTIME_DIR: rtDir };
let savedRtDir: string | undefined;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const enc = (s: string) => new TextEncoder().encode(s);

const cli = (...args: string[]) => runCli(env, ...args);

type Who = "viewer" | "arm-2" | "rogue" | "coach" | "admin";

/** What came of one attempt: did the broker refuse it, and every answer that came back within the wait. */
interface Outcome {
  readonly denied: boolean;
  readonly answers: Array<Record<string, unknown>>;
}

describe.skipIf(!hasNats)("a closed fleet: the generated broker config and signatures against every forgery", () => {
  let nats: NatsServer;
  const rts = new Map<string, RunningRuntime>();
  let arm3: ChildProcess | null = null;
  const ncs = new Map<Who, NatsConnection>();
  const perm: string[] = []; // permission violations each connection was told of

  async function as(who: Who): Promise<NatsConnection> {
    const have = ncs.get(who);
    if (have) return have;
    const b = loadBundle(join(who === "arm-2" ? deployed : fleetDir, who));
    const nc = await connect({
      servers: nats.url.replace("nats://", ""),
      authenticator: nkeyAuthenticator(enc(readFileSync(b.seedFile, "utf8").trim())),
      inboxPrefix: inboxPrefixOf(who),
      name: `attacker as ${who}`,
    });
    void (async () => {
      for await (const s of nc.status()) if (s.type === "error") perm.push(`${who}: ${s.error.message}`);
    })();
    ncs.set(who, nc);
    return nc;
  }

  /**
   * A request as `who` (optionally with headers): whether the broker refused it, and every answer
   * within 1 s. It ends sooner once the broker has refused it (nothing was delivered: no answer can
   * come), or once `enough` of the answers are in (by default, on a robot's own subject, the first).
   */
  async function attempt(who: Who, subj: string, body: unknown, headers?: Record<string, string>, waitMs = 1000, enough?: (answers: Array<Record<string, unknown>>) => boolean): Promise<Outcome> {
    const nc = await as(who);
    const violations = perm.length;
    const answers: Array<Record<string, unknown>> = [];
    const inbox = nc.subscribe(createInbox(inboxPrefixOf(who)), {
      callback: (_e, m) => {
        answers.push(m.json());
      },
    });
    nc.publish(subj, JSON.stringify(body), { reply: inbox.getSubject(), ...(headers ? { headers: headersOf(headers) } : {}) });
    await nc.flush();
    const t0 = Date.now();
    const denied = () => perm.slice(violations).some((p) => p.includes(`Publish to "${subj}"`));
    const done = enough ?? ((a) => subj.split(".").length > 2 && a.length > 0);
    while (Date.now() - t0 < waitMs && !done(answers) && !denied()) await sleep(20);
    inbox.unsubscribe();
    return { denied: denied(), answers };
  }
  /** attempt(), until arm-1 has answered (a fleet-wide subject: the others' answers are not looked at). */
  const attemptArm1 = (who: Who, subj: string, body: unknown, headers?: Record<string, string>) => attempt(who, subj, body, headers, 1000, (a) => a.some((x) => x.name === "arm-1"));
  const only = (o: Outcome) => ({ denied: o.denied, answer: o.answers[0] ?? null });
  const fromArm1 = (o: Outcome) => ({ denied: o.denied, answer: o.answers.find((a) => a.name === "arm-1") ?? null });

  const arm1 = () => rts.get("arm-1")!;
  async function arm1Positions(): Promise<number[]> {
    const r = await fetch(`${arm1().record.apiUrl}/v1/state`);
    return ((await r.json()) as { joint_positions: number[] }).joint_positions;
  }
  const latchArm1 = async () => {
    const r = await fetch(`${arm1().record.apiUrl}/v1/estop`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ reason: "latched locally (test)", category: 0 }),
    });
    expect(r.status).toBeLessThan(300);
    expect(arm1().robot.estopState().latched).toBe(true);
  };

  async function coachClient(): Promise<FleetClient> {
    const b = loadBundle(join(fleetDir, "coach"));
    return FleetClient.connect({ url: nats.url, nkeyFile: b.seedFile, inboxPrefix: inboxPrefixOf("coach") }, "test coach", { signer: b.signingKey, robots: b.robots });
  }

  beforeAll(async () => {
    mkdirSync(rtDir, { mode: 0o700 });
    savedRtDir = process.env.BODYLINK_RUNTIME_DIR;
    process.env.BODYLINK_RUNTIME_DIR = rtDir;
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
      "arm-1",
      "--robot",
      "arm-2",
      "--robot",
      "arm-3",
      "--operator",
      "coach",
      "--viewer",
      "viewer",
    );
    expect(init.code, init.stderr).toBe(0);
    // The robots' bundles are handed out now; the rogue operator is added afterwards, so no robot trusts its key.
    cpSync(fleetDir, deployed, { recursive: true });
    // arm-2's bundle trusts no operator: it can be seen and stopped, never commanded or reset.
    const t2 = join(deployed, "arm-2", "trust.json");
    writeFileSync(t2, JSON.stringify({ ...JSON.parse(readFileSync(t2, "utf8")), operators: [] }), { mode: 0o600 });
    const add = await cli("fleet", "keys", "add", fleetDir, "operator", "rogue");
    expect(add.code, add.stderr).toBe(0);
    nats = await startNats({ configFile: join(fleetDir, "nats.conf") });
    for (const name of ["arm-1", "arm-2"]) {
      const rt = await startRuntime({
        body: "p7",
        name,
        ...SIM_RUNTIME_OPTIONS,
        seed: 1,
        tny: false,
        fleet: nats.url,
        fleetDir: join(deployed, name),
      });
      rts.set(name, rt);
      await rt.fleet!.joined();
    }
    // arm-3 is a process of its own, so it can be frozen (SIGSTOP) while its presence still stands.
    arm3 = spawn(process.execPath, [bin, "serve", "--body", "p7", "--api-port", "0", "--fleet", nats.url, "--fleet-dir", join(deployed, "arm-3")], { env, stdio: ["ignore", "ignore", "pipe"] });
    let err = "";
    arm3.stderr!.on("data", (d) => {
      err += String(d);
    });
    await until(`arm-3 to join (${err})`, () => err.includes("fleet: joined"), 90_000);
  }, 240_000);

  afterAll(async () => {
    for (const nc of ncs.values()) await nc.close().catch(() => undefined);
    if (arm3 && arm3.exitCode === null) {
      arm3.kill("SIGCONT");
      const exited = new Promise((r) => arm3!.once("exit", r));
      arm3.kill("SIGINT");
      await exited;
    }
    for (const rt of rts.values()) await rt.close();
    await nats?.close();
    // the next file in this process (vitest.config.ts: the node project shares it) sees its own
    if (savedRtDir === undefined) delete process.env.BODYLINK_RUNTIME_DIR;
    else process.env.BODYLINK_RUNTIME_DIR = savedRtDir;
    rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  it("`fleet init` wrote one identity per robot, operator and viewer plus an admin; secrets 0600, the broker config holds no secret", { timeout: 90_000 }, async () => {
    const ls = await cli("fleet", "keys", "ls", fleetDir);
    expect(ls.code, ls.stderr).toBe(0);
    expect(
      ls.stdout
        .split("\n")
        .slice(1, -1)
        .map((l) => l.split(/\s+/).slice(0, 2).join(" ")),
    ).toEqual(["arm-1 robot", "arm-2 robot", "arm-3 robot", "coach operator", "viewer viewer", "admin admin", "rogue operator"]);
    for (const f of ["arm-1/nats.seed", "arm-1/sign.key", "coach/sign.key", "viewer/nats.seed", "admin/nats.seed", "nats.conf", "fleet.json"])
      expect((statSync(join(fleetDir, f)).mode & 0o777).toString(8), f).toBe("600");
    expect((statSync(join(fleetDir, "arm-1")).mode & 0o777).toString(8)).toBe("700");
    const conf = readFileSync(join(fleetDir, "nats.conf"), "utf8");
    expect(conf).not.toMatch(/\bSU[A-Z2-7]{50,}/); // no NKey seed
    expect(conf).not.toMatch(/PRIVATE KEY/);
    expect(conf.match(/\{ nkey: "U[A-Z2-7]+"/g)).toHaveLength(7);
  });

  it("an anonymous client is not let in at all", { timeout: 90_000 }, async () => {
    await expect(FleetClient.connect({ url: nats.url })).rejects.toThrow(/cannot reach the fleet's NATS server .*auth/i);
    const r = await cli("fleet", "ls", "--fleet", nats.url, "--fleet-insecure");
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/BL_ERR_FLEET_UNREACHABLE/);
  });

  it("the operator sees every robot, signed; the viewer too", { timeout: 90_000 }, async () => {
    const ls = await cli("fleet", "ls", "--fleet", nats.url, "--fleet-dir", join(fleetDir, "coach"));
    expect(ls.code, ls.stderr).toBe(0);
    expect(
      ls.stdout
        .split("\n")
        .slice(1, -1)
        .map((l) => l.split(/\s+/)[0]),
    ).toEqual(["arm-1", "arm-2", "arm-3"]);
    const v = await cli("fleet", "ls", "--fleet", nats.url, "--fleet-dir", join(fleetDir, "viewer"));
    expect(v.code, v.stderr).toBe(0);
    expect(v.stdout).toMatch(/^arm-1\s+p7\s+\S+\s+ok\s/m);
  });

  it("reset: refused for the viewer, another robot, an untrusted operator, an unsigned request and a replay; the latch holds", async () => {
    await latchArm1();
    const reset = { reason: "let me in" };
    for (const s of [subject.reset("arm-1"), subject.resetAll]) {
      expect(await attempt("viewer", s, reset), `viewer ${s}`).toEqual({ denied: true, answers: [] });
      // Robots may send fleet resets (their /fleet page does); arm-1 refuses one no trusted operator signed.
      expect(fromArm1(await attemptArm1("arm-2", s, reset)), `arm-2 ${s}`).toMatchObject({ denied: false, answer: { name: "arm-1", ok: false, error: { code: "BL_ERR_FLEET_UNSIGNED" } } });
      const arm2Key = loadBundle(join(deployed, "arm-2")).signingKey!;
      expect(fromArm1(await attemptArm1("arm-2", s, reset, signRequest(arm2Key, s, enc(JSON.stringify(reset))))), `arm-2 signed ${s}`).toMatchObject({
        answer: { ok: false, error: { code: "BL_ERR_FLEET_SIGNATURE" } },
      });
      const rogueKey = loadBundle(join(fleetDir, "rogue")).signingKey!;
      expect(fromArm1(await attemptArm1("rogue", s, reset, signRequest(rogueKey, s, enc(JSON.stringify(reset))))), `rogue ${s}`).toMatchObject({
        answer: { ok: false, error: { code: "BL_ERR_FLEET_SIGNATURE", message: expect.stringMatching(/not among this robot's trusted operators/) } },
      });
      expect(fromArm1(await attemptArm1("coach", s, reset)), `coach unsigned ${s}`).toMatchObject({ answer: { ok: false, error: { code: "BL_ERR_FLEET_UNSIGNED" } } });
      expect(arm1().robot.estopState()).toMatchObject({ latched: true, reason: "latched locally (test)" });
    }

    // A replay: arm-2 hears the coach's signed fleet-wide reset (robots subscribe to it) and sends it again later.
    const heard = new Promise<Msg>((resolve) => {
      const sub = ncs.get("arm-2")!.subscribe(subject.resetAll, { max: 1, callback: (_e, m) => resolve(m) });
      void sub;
    });
    await ncs.get("arm-2")!.flush();
    const coach = await coachClient();
    try {
      const ok = await coach.reset(null, { reason: "area clear" });
      expect(ok.missing).toEqual([]);
      expect(ok.replies.map((r) => [r.name, r.ok, r.verified]).sort()).toEqual([
        ["arm-1", true, true],
        ["arm-2", false, true], // trusts no operator
        ["arm-3", true, true],
      ]);
      expect(ok.replies.find((r) => r.name === "arm-2")!.error).toMatchObject({ code: "BL_ERR_FLEET_NO_OPERATORS" });
      expect(arm1().robot.estopState().latched).toBe(false);
      const captured = await heard;
      await latchArm1();
      const h: Record<string, string> = {};
      for (const [k, v] of captured.headers!) h[k] = v[0]!;
      expect(fromArm1(await attemptArm1("arm-2", subject.resetAll, JSON.parse(captured.string()), h))).toMatchObject({
        answer: { name: "arm-1", ok: false, error: { code: "BL_ERR_FLEET_SIGNATURE", message: expect.stringMatching(/already used \(a replay\)/) } },
      });
      expect(arm1().robot.estopState()).toMatchObject({ latched: true, reason: "latched locally (test)" });
      // The reset that worked was recorded as the operator's, not a name from the request.
      const r2 = await coach.reset(["arm-1"], { reason: "area clear again", by: "made-up" });
      expect(r2.replies[0]).toMatchObject({ name: "arm-1", ok: true, verified: true });
      expect(arm1().robot.estopState().latched).toBe(false);
    } finally {
      await coach.close();
    }
  }, 60_000);

  it("acquire and commands: refused for everyone but the trusted operator's signature; the arm does not move", async () => {
    const before = await arm1Positions();
    const acquire = { owner: "intruder", lease_ms: 5000 };
    const s = subject.cmd("arm-1", "acquire");
    expect(await attempt("viewer", s, acquire)).toEqual({ denied: true, answers: [] });
    expect(await attempt("arm-2", s, acquire)).toEqual({ denied: true, answers: [] });
    expect(only(await attempt("rogue", s, acquire, signRequest(loadBundle(join(fleetDir, "rogue")).signingKey!, s, enc(JSON.stringify(acquire)))))).toMatchObject({
      denied: false,
      answer: { code: "BL_ERR_FLEET_SIGNATURE", status: 403 },
    });
    expect(only(await attempt("coach", s, acquire))).toMatchObject({ answer: { code: "BL_ERR_FLEET_UNSIGNED", status: 403 } });
    // A key of the rogue's own making, under the coach's broker login: still not trusted.
    const mine = generateSigningKey("coach");
    expect(only(await attempt("coach", s, acquire, signRequest(mine, s, enc(JSON.stringify(acquire)))))).toMatchObject({ answer: { code: "BL_ERR_FLEET_SIGNATURE" } });
    expect(arm1().robot.authority.holder()).toBeNull();

    // The coach takes a lease (signed); its id leaks. Commands with it, but not the coach's signature, are refused.
    const coach = await coachClient();
    try {
      const lease = (await coach.request<{ lease_id: string }>("arm-1", "acquire", { owner: "coach", lease_ms: 5000 })) as { lease_id: string };
      expect(lease.lease_id).toEqual(expect.any(String));
      const move = { positions_rad: [0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5] };
      const ms = subject.cmd("arm-1", "move-joints");
      const leaseOnly = { "x-bodylink-lease": lease.lease_id };
      expect(await attempt("viewer", ms, move, leaseOnly)).toEqual({ denied: true, answers: [] });
      expect(await attempt("arm-2", ms, move, leaseOnly)).toEqual({ denied: true, answers: [] });
      expect(only(await attempt("coach", ms, move, leaseOnly))).toMatchObject({ answer: { code: "BL_ERR_FLEET_UNSIGNED" } });
      expect(only(await attempt("rogue", ms, move, signRequest(loadBundle(join(fleetDir, "rogue")).signingKey!, ms, enc(JSON.stringify(move)), { leaseId: lease.lease_id })))).toMatchObject({
        answer: { code: "BL_ERR_FLEET_SIGNATURE" },
      });
      // Signed by the coach, but for another lease or body than sent: refused too.
      const coachKey = loadBundle(join(fleetDir, "coach")).signingKey!;
      const signedOther = signRequest(coachKey, ms, enc(JSON.stringify({ positions_rad: [0, 0, 0, 0, 0, 0, 0] })), { leaseId: lease.lease_id });
      expect(only(await attempt("coach", ms, move, signedOther))).toMatchObject({ answer: { code: "BL_ERR_FLEET_SIGNATURE", message: expect.stringMatching(/does not match/) } });
      for (const c of ["renew", "release"]) {
        const cs = subject.cmd("arm-1", c);
        expect(only(await attempt("coach", cs, {}, leaseOnly)), c).toMatchObject({ answer: { code: "BL_ERR_FLEET_UNSIGNED" } });
      }
      await sleep(300);
      expect(await arm1Positions()).toEqual(before);
      expect(arm1().robot.authority.holder()).toMatchObject({ owner: "coach", source: "fleet" });
      expect(await coach.request("arm-1", "release", {}, { leaseId: lease.lease_id })).toEqual({ released: true });
    } finally {
      await coach.close();
    }
  }, 60_000);

  it("stream and bucket deletion, purges and key deletes: refused for every identity but the admin; the fleet stays listed", async () => {
    for (const who of ["viewer", "arm-2", "rogue", "coach"] as const) {
      const nc = await as(who);
      const jsm = await jetstreamManager(nc, { timeout: 1500 });
      await expect(jsm.streams.delete(EVENTS_STREAM), `${who} deletes the event stream`).rejects.toThrow(/permission|timeout/i);
      await expect(jsm.streams.delete(`KV_${ROBOTS_BUCKET}`), `${who} deletes the presence bucket`).rejects.toThrow(/permission|timeout/i);
      await expect(jsm.streams.purge(`KV_${LEASES_BUCKET}`), `${who} purges the leases`).rejects.toThrow(/permission|timeout/i);
      const kv = await new Kvm(nc).open(ROBOTS_BUCKET);
      await expect(kv.delete("arm-1"), `${who} deletes arm-1's presence`).rejects.toThrow(/permission|timeout/i);
    }
    const admin = await jetstreamManager(await as("admin"));
    expect((await admin.streams.info(EVENTS_STREAM)).config.name).toBe(EVENTS_STREAM);
    expect((await admin.streams.info(`KV_${ROBOTS_BUCKET}`)).state.messages).toBeGreaterThan(0);
    const coach = await coachClient();
    try {
      expect((await coach.robots()).map((r) => r.name)).toEqual(["arm-1", "arm-2", "arm-3"]);
    } finally {
      await coach.close();
    }
  }, 60_000);

  it("forged presence: the broker refuses it to all but the admin; written anyway, it is not counted and the robot keeps its name", async () => {
    const forged = (host: string) =>
      JSON.stringify({
        name: "arm-1",
        body: "p7",
        version: "x",
        host,
        pid: 1,
        instance: "evil",
        urls: { api: "http://evil:1", lola: null, tny: null },
        started_at: new Date().toISOString(),
        refreshed_at_epoch_ms: Date.now(),
        ttl_ms: 60_000,
      });
    for (const who of ["viewer", "arm-2", "rogue", "coach"] as const) {
      const kv = await new Kvm(await as(who)).open(ROBOTS_BUCKET);
      await expect(kv.put("arm-1", JSON.stringify(signPresence(generateSigningKey("arm-1"), forged(who)))), who).rejects.toThrow(/permission|timeout/i);
    }
    // The admin (as a broker with too-wide permissions would let anyone): signed with a key of its own making.
    const kv = await new Kvm(await as("admin")).open(ROBOTS_BUCKET);
    await kv.put("arm-1", JSON.stringify(signPresence(generateSigningKey("arm-1"), forged("attacker-host"))));
    const coach = await coachClient();
    try {
      const seen = await coach.robots();
      expect(seen.find((r) => r.host === "attacker-host")).toBeUndefined();
      // The real arm-1 does not go `name-taken`: a record it did not sign is no claim on its name; it writes its own back.
      await until("arm-1 to take its name back", async () => (await coach.robots()).some((r) => r.name === "arm-1" && r.instance === arm1().fleet!.instance), 10_000);
      expect(arm1().fleet!.status().presence).toBe("ok");
    } finally {
      await coach.close();
    }
  }, 60_000);

  it("forged acknowledgements: `fleet estop --all` names the frozen robot that did not really answer, and exits non-zero", async () => {
    // arm-2's login answers every fleet e-stop in arm-3's name (robots hear `bodylink.estop` and may answer it);
    // the admin does the same (a broker that lets anyone answer).
    const forge = (who: Who) =>
      ncs.get(who)!.subscribe(subject.estopAll, {
        callback: (_e, m) => {
          m.respond(JSON.stringify({ name: "arm-3", ok: true, estop: { latched: true, reason: "forged", source: "fleet:coach", since_ms: 0, category: 0, phase: "cut" } }));
        },
      });
    await as("arm-2");
    await as("admin");
    const subs = [forge("arm-2"), forge("admin")];
    await Promise.all([ncs.get("arm-2")!.flush(), ncs.get("admin")!.flush()]);
    arm3!.kill("SIGSTOP");
    try {
      const r = await cli("fleet", "estop", "--all", "--fleet", nats.url, "--fleet-dir", join(fleetDir, "coach"), "--wait-ms", "1500", "--reason", "forgery test");
      expect(r.code, r.stdout + r.stderr).toBe(1);
      expect(r.stderr).toMatch(/estop: no answer from arm-3 \(answers that did not verify were ignored: arm-3\) \[BL_ERR_FLEET_NO_ANSWER\]/);
      expect(r.stdout).toMatch(/^arm-1\s+ok\s+LATCHED \(fleet:coach: forgery test\)$/m);
      expect(r.stdout).toMatch(/^arm-2\s+ok\s+LATCHED/m);
      expect(r.stdout).toMatch(/^arm-3\s+NO ANSWER \(forged or unverifiable answer ignored/m);
      expect(arm1().robot.estopState()).toMatchObject({ latched: true, source: "fleet:coach" });
    } finally {
      arm3!.kill("SIGCONT");
      for (const s of subs) s.unsubscribe();
    }
  }, 90_000);

  it("a robot that trusts no operator key is seen and stopped, never commanded or reset", async () => {
    const coach = await coachClient();
    try {
      expect((await coach.robots()).map((r) => r.name)).toContain("arm-2");
      const stop = await coach.estop(["arm-2"], { reason: "stop arm-2" });
      expect(stop.replies[0]).toMatchObject({ name: "arm-2", ok: true, verified: true, estop: { latched: true } });
      expect(rts.get("arm-2")!.robot.estopState().latched).toBe(true);
      const reset = await coach.reset(["arm-2"], { reason: "area clear" });
      expect(reset.replies[0]).toMatchObject({ name: "arm-2", ok: false, error: { code: "BL_ERR_FLEET_NO_OPERATORS" } });
      expect(rts.get("arm-2")!.robot.estopState().latched).toBe(true);
      expect(await coach.request("arm-2", "acquire", { owner: "coach" })).toMatchObject({ code: "BL_ERR_FLEET_NO_OPERATORS", status: 403 });
      expect(await coach.request("arm-2", "health")).toMatchObject({ type: "health", name: "arm-2" });
    } finally {
      await coach.close();
    }
  }, 60_000);
});

// Without the package: one skipped test that names it.
if (!hasNats) describe("a closed fleet", () => it.skip(NATS_SKIP, () => undefined));
