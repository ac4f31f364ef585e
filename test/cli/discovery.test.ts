import { type ChildProcess, spawn } from "node:child_process";
import { chmodSync, chownSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  apiUrlFor,
  checkRuntimeDir,
  chooseRuntime,
  defaultName,
  listRuntimes,
  ownProcStart,
  type RuntimeRecord,
  recordStatus,
  removeRuntimeRecord,
  runtimeDir,
  updateRuntime,
  writeRuntime,
} from "../../src/cli/discovery.js";
import { BodylinkError } from "../../src/errors.js";

const root = mkdtempSync(join(tmpdir(), "bodylink-discovery-"));
const saved = { rt: process.env.BODYLINK_RUNTIME_DIR, xdg: process.env.XDG_RUNTIME_DIR };
let dir = "";
let n = 0;
const children: ChildProcess[] = [];

beforeEach(() => {
  dir = join(root, `rt${n++}`);
  process.env.BODYLINK_RUNTIME_DIR = dir;
  delete process.env.XDG_RUNTIME_DIR;
});
afterEach(() => {
  removeRuntimeRecord();
  process.env.BODYLINK_RUNTIME_DIR = saved.rt;
  if (saved.rt === undefined) delete process.env.BODYLINK_RUNTIME_DIR;
  if (saved.xdg === undefined) delete process.env.XDG_RUNTIME_DIR;
  else process.env.XDG_RUNTIME_DIR = saved.xdg;
});
afterAll(() => {
  for (const c of children) c.kill("SIGKILL");
  rmSync(root, { recursive: true, force: true });
});

const record = (name: string, over: Partial<RuntimeRecord> = {}): RuntimeRecord => ({
  name,
  pid: process.pid,
  procStart: ownProcStart(),
  body: "nao",
  transport: "sim",
  apiUrl: `http://127.0.0.1:1/${name}`,
  lolaPath: null,
  tnyUrl: null,
  startedAt: new Date().toISOString(),
  ...over,
});

/** Write a record as another (or no) process would have: straight into the file. */
function plant(name: string, over: Partial<RuntimeRecord>): string {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const p = join(dir, `${name}.json`);
  writeFileSync(p, JSON.stringify(record(name, over)), { mode: 0o600 });
  return p;
}

function procStartOf(pid: number): string {
  const t = readFileSync(`/proc/${pid}/stat`, "utf8");
  return t.slice(t.lastIndexOf(")") + 2).split(" ")[19]!;
}

async function sleeper(): Promise<number> {
  const c = spawn("sleep", ["60"], { stdio: "ignore" });
  children.push(c);
  await new Promise((r) => c.once("spawn", r));
  return c.pid!;
}

/** A zombie: `sleep 0` forked by a shell that then execs `sleep 60`, which never reaps it. */
async function zombie(): Promise<number> {
  const c = spawn("sh", ["-c", "sleep 0 & echo $!; exec sleep 60"], { stdio: ["ignore", "pipe", "ignore"] });
  children.push(c);
  const pid = Number(await new Promise<string>((r) => c.stdout!.once("data", (d) => r(String(d).trim()))));
  for (let i = 0; i < 100; i++) {
    if (readFileSync(`/proc/${pid}/stat`, "utf8").includes(") Z ")) return pid;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`pid ${pid} did not become a zombie`);
}

const hasProc = existsSync("/proc/self/stat");

describe("the runtime directory", () => {
  it("is BODYLINK_RUNTIME_DIR, else $XDG_RUNTIME_DIR/bodylink, else /tmp/bodylink-<uid>", () => {
    expect(runtimeDir()).toBe(dir);
    delete process.env.BODYLINK_RUNTIME_DIR;
    process.env.XDG_RUNTIME_DIR = join(root, "xdg");
    expect(runtimeDir()).toBe(join(root, "xdg", "bodylink"));
    delete process.env.XDG_RUNTIME_DIR;
    expect(runtimeDir()).toBe(join(tmpdir(), `bodylink-${process.getuid!()}`));
  });
  it("is created 0700 under $XDG_RUNTIME_DIR, and tightened to 0700 when it exists looser", () => {
    delete process.env.BODYLINK_RUNTIME_DIR;
    const xdg = join(root, "xdg2");
    mkdirSync(xdg, { mode: 0o700 });
    process.env.XDG_RUNTIME_DIR = xdg;
    expect(checkRuntimeDir(true)).toBe(join(xdg, "bodylink"));
    expect(statSync(join(xdg, "bodylink")).mode & 0o777).toBe(0o700);
    chmodSync(join(xdg, "bodylink"), 0o755);
    checkRuntimeDir(false);
    expect(statSync(join(xdg, "bodylink")).mode & 0o777).toBe(0o700);
  });
  it("is refused when it is a symlink, with a clear message, and nothing is written through it", () => {
    const target = join(root, "elsewhere");
    mkdirSync(target);
    symlinkSync(target, dir);
    expect(() => writeRuntime(record("nao-a"))).toThrow(/runtime directory .* is a symlink; fix it, or point BODYLINK_RUNTIME_DIR/);
    expect(() => listRuntimes()).toThrow(BodylinkError);
    expect(readdirSync(target)).toEqual([]);
  });
  it.skipIf(process.getuid?.() !== 0)("is refused when another user owns it (run as root to chown it to nobody)", () => {
    mkdirSync(dir, { mode: 0o700 });
    chownSync(dir, 65534, 65534);
    expect(() => writeRuntime(record("nao-a"))).toThrow(/is owned by uid 65534, not by you \(uid 0\)/);
    expect(() => chooseRuntime()).toThrow(/owned by uid 65534/);
  });
});

describe("records: one per runtime name", () => {
  it("two names side by side; ls lists both; chooseRuntime needs --robot when several run", () => {
    writeRuntime(record("nao-a"));
    expect(chooseRuntime().name).toBe("nao-a");
    expect(apiUrlFor({})).toBe("http://127.0.0.1:1/nao-a");
    writeRuntime(record("p7-b", { body: "p7" }));
    expect(listRuntimes().map((r) => r.name)).toEqual(["nao-a", "p7-b"]);
    expect(() => chooseRuntime()).toThrow(/2 runtimes are running \(nao-a, p7-b\); choose one with --robot NAME/);
    expect(chooseRuntime("p7-b").body).toBe("p7");
    expect(() => chooseRuntime("tny")).toThrow(/no runtime named tny is running on this machine \(running: nao-a, p7-b\)/);
    expect(apiUrlFor({ url: "http://10.0.0.5:8780/" })).toBe("http://10.0.0.5:8780");
    expect(statSync(join(dir, "nao-a.json")).mode & 0o777).toBe(0o600);
    expect(readdirSync(dir).filter((f) => f.endsWith(".tmp"))).toEqual([]);
  });
  it("a live runtime's name is refused; its record is untouched", () => {
    writeRuntime(record("nao-a", { apiUrl: "http://first" }));
    expect(() => writeRuntime(record("nao-a", { apiUrl: "http://second" }))).toThrow(
      /a runtime named nao-a is already running \(pid \d+, nao on sim, API http:\/\/first\); stop it first, or choose another --name/,
    );
    expect(chooseRuntime("nao-a").apiUrl).toBe("http://first");
  });
  it("bad names are refused (they are NATS subject tokens and file names)", () => {
    for (const bad of ["", "a.b", "a b", "../x", "*", ">", "estop", "-x", "x".repeat(65)]) expect(() => writeRuntime(record(bad)), bad).toThrow(BodylinkError);
  });
  it("the default name is BODY-HOST, then -2, -3 … while taken", () => {
    const base = defaultName("nao", new Set());
    expect(base).toMatch(/^nao-[a-z0-9_-]+$/);
    expect(defaultName("nao", new Set([base, `${base}-2`]))).toBe(`${base}-3`);
  });
  it("a symlinked record is refused and its target is not written", () => {
    mkdirSync(dir, { mode: 0o700 });
    const victim = join(root, "victim.txt");
    writeFileSync(victim, "precious");
    symlinkSync(victim, join(dir, "nao-a.json"));
    expect(() => writeRuntime(record("nao-a"))).toThrow(/nao-a\.json is a symlink; remove it/);
    expect(readFileSync(victim, "utf8")).toBe("precious");
    expect(listRuntimes()).toEqual([]); // never read through the link either
  });
  it("updateRuntime replaces our record in one rename; removeRuntimeRecord removes only ours", () => {
    writeRuntime(record("nao-a", { apiUrl: null }));
    const before = lstatSync(join(dir, "nao-a.json")).ino;
    updateRuntime(record("nao-a", { apiUrl: "http://now" }));
    expect(chooseRuntime().apiUrl).toBe("http://now");
    expect(lstatSync(join(dir, "nao-a.json")).ino).not.toBe(before);
    removeRuntimeRecord("nao-a");
    expect(existsSync(join(dir, "nao-a.json"))).toBe(false);
    // A record another process wrote under a name we once had stays.
    plant("nao-b", { pid: 1, procStart: null });
    removeRuntimeRecord("nao-b");
    expect(existsSync(join(dir, "nao-b.json"))).toBe(true);
  });
});

describe.skipIf(!hasProc)("stale records (pid gone, a zombie, a live process that is not the runtime) are recognised and replaced", () => {
  it("a pid that is gone", async () => {
    const c = spawn("true");
    const pid = c.pid!;
    await new Promise((r) => c.once("exit", r));
    plant("nao-a", { pid, procStart: "1" });
    expect(recordStatus({ pid, procStart: "1" })).toBe("gone");
    expect(listRuntimes()).toEqual([]);
    writeRuntime(record("nao-a"));
    expect(chooseRuntime().pid).toBe(process.pid);
  });
  it("a live `sleep` whose pid the record names (pid reused): start time differs, or no start time and not bodylink", async () => {
    const pid = await sleeper();
    expect(recordStatus({ pid, procStart: procStartOf(pid) })).toBe("live"); // the check itself is not fooled
    expect(recordStatus({ pid, procStart: String(Number(procStartOf(pid)) + 1) })).toBe("other-process");
    expect(recordStatus({ pid, procStart: null })).toBe("other-process");
    plant("nao-a", { pid, procStart: "12345" });
    expect(() => chooseRuntime()).toThrow(/no runtime is running on this machine/);
    writeRuntime(record("nao-a"));
    expect(chooseRuntime("nao-a").pid).toBe(process.pid);
  });
  it("a zombie, even with its own start time recorded", async () => {
    const pid = await zombie();
    const procStart = procStartOf(pid);
    expect(recordStatus({ pid, procStart })).toBe("zombie");
    plant("nao-a", { pid, procStart });
    expect(listRuntimes()).toEqual([]);
    writeRuntime(record("nao-a"));
    expect(chooseRuntime().pid).toBe(process.pid);
  });
});
