/**
 * `bodylink serve` (NAO simulator) as a child process, the installed entry (bin/bodylink.js, dist/
 * built fresh by vitest's global setup), in a temp runtime dir; and a LoLA controller that answers
 * every sensor message with a command at stiffness 1.0 and records the stiffness it was sent.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { unpack } from "msgpackr";
import type { BodyKind } from "../../src/bodies/registry.js";
import { LolaCommandWriter } from "../../src/wire/lola/command-message.js";
import { TestLolaClient, until } from "../lola/client.js";

export interface ServeRig {
  child: ChildProcess;
  apiUrl: string;
  /** The TNY-360 API's URL (--body tny360), else null. */
  tnyUrl: string | null;
  lolaPath: string;
  stdout(): string;
  stderr(): string;
  /**
   * SIGUSR2: the test hook's stall (BODYLINK_TEST_STALL_MAIN_MS or _CORE_MS), which lasts until
   * `release()` (or that many ms): a test ends it on what it saw, never on a guess at how long a
   * loaded machine takes.
   */
  stall(): void;
  /** Ends the stall `stall()` began. */
  release(): void;
  close(): Promise<void>;
}

let rigs = 0;

/**
 * `runtimeDir`: share this BODYLINK_RUNTIME_DIR (several runtimes side by side; the caller removes
 * it). `fdLimit`: the child's descriptor limit (`ulimit -n`), to exhaust it at a scale a test can reach.
 */
export async function startServe(args: string[] = [], extraEnv: Record<string, string> = {}, opts: { body?: BodyKind; runtimeDir?: string; fdLimit?: number } = {}): Promise<ServeRig> {
  const dir = opts.runtimeDir ?? mkdtempSync(join(tmpdir(), "bodylink-rt-"));
  const lolaPath = join(dir, "robocup");
  const body = opts.body ?? "nao";
  // every body gets its own flags only (another body's flag is a warning line on stderr)
  const bodyArgs = body === "nao" ? ["--lola-path", lolaPath] : body === "tny360" ? ["--body", body, "--tny-port", "0"] : ["--body", body];
  // The kinematic body unless asked (serve's default is physics): the isolation figures are the core's under load, comparable across runs.
  const simArgs = args.includes("--sim") ? [] : ["--sim", "kinematic"];
  const argv = [process.execPath, "bin/bodylink.js", "serve", "--api-port", "0", ...bodyArgs, ...simArgs, ...args];
  const releasePath = join(dir, `stall-release-${rigs++}`);
  const env = { ...process.env, BODYLINK_RUNTIME_DIR: dir, BODYLINK_TEST_STALL_RELEASE: releasePath, ...extraEnv };
  const child = opts.fdLimit ? spawn("/bin/sh", ["-c", `ulimit -n ${opts.fdLimit} && exec "$@"`, "sh", ...argv], { env }) : spawn(argv[0]!, argv.slice(1), { env });
  let out = "";
  let err = "";
  child.stdout!.on("data", (d) => {
    out += String(d);
  });
  child.stderr!.on("data", (d) => {
    err += String(d);
  });
  const t0 = Date.now();
  while (!/Ctrl-C to stop/.test(out)) {
    if (Date.now() - t0 > 40_000 || child.exitCode !== null) {
      child.kill("SIGKILL");
      throw new Error(`serve did not start: ${out}\n${err}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  const apiUrl = /robot API: (http:\/\/\S+)/.exec(out)![1]!;
  const tnyUrl = /TNY-360 API: (ws:\/\/\S+)/.exec(out)?.[1] ?? null;
  return {
    child,
    apiUrl,
    tnyUrl,
    lolaPath,
    stdout: () => out,
    stderr: () => err,
    stall() {
      rmSync(releasePath, { force: true });
      child.kill("SIGUSR2");
    },
    release() {
      writeFileSync(releasePath, "");
    },
    async close() {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((r) => child.once("exit", r));
        child.kill("SIGCONT");
        child.kill("SIGKILL");
        await exited;
      }
      if (!opts.runtimeDir) rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A LoLA controller answering every frame at stiffness 1.0; counts frames and the stiffness each carried. */
export class StiffController {
  frames = 0;
  /** Frames whose Stiffness was 1.0 on every joint. */
  full = 0;
  /** Frames after `full` was first reached whose stiffness was below 1.0 anywhere. */
  dips = 0;
  /** The highest stiffness of each frame received, in order (null until `trace()` starts it). */
  stiffness: number[] | null = null;
  /** The highest stiffness of the last frame received (NaN before the first). */
  last = Number.NaN;
  #reached = false;
  #running = true;
  readonly done: Promise<void>;
  readonly #writer = new LolaCommandWriter(["Position", "Stiffness"]).setFloats("Stiffness", new Array(25).fill(1));

  private constructor(readonly client: TestLolaClient) {
    this.done = this.#run();
  }

  static async connect(path: string): Promise<StiffController> {
    return new StiffController(await TestLolaClient.connect(path));
  }

  /** Record the highest stiffness of every frame from now on (`stiffness`). */
  trace(): number[] {
    this.stiffness = [];
    return this.stiffness;
  }

  /** Start counting dips from now (call once stiffness has reached 1.0 after start-up). */
  resetCounts(): void {
    this.frames = 0;
    this.full = 0;
    this.dips = 0;
  }

  get reached(): boolean {
    return this.#reached;
  }

  async #run(): Promise<void> {
    while (this.#running) {
      let f: Buffer;
      try {
        f = await this.client.frame();
      } catch {
        return;
      }
      this.frames++;
      const s = (unpack(f) as { Stiffness: number[] }).Stiffness;
      this.last = Math.max(...s);
      this.stiffness?.push(this.last);
      const all = s.every((v) => v === 1);
      if (all) {
        this.full++;
        this.#reached = true;
      } else if (this.#reached) this.dips++;
      await this.client.send(this.#writer.bytes).catch(() => {});
    }
  }

  async close(): Promise<void> {
    this.#running = false;
    await this.client.close();
    await this.done;
  }
}

/**
 * `n` stream subscribers of `apiUrl` in another process (test/rt/subscribers.mjs), so that the
 * test's own process keeps its CPU for its controller; resolves once all are open.
 */
export async function startSubscribers(apiUrl: string, n: number): Promise<ChildProcess> {
  const subs = spawn(process.execPath, ["test/rt/subscribers.mjs", `${apiUrl.replace(/^http/, "ws")}/v1/stream`, String(n)], { stdio: ["ignore", "pipe", "inherit"] });
  let out = "";
  subs.stdout!.on("data", (d) => {
    out += String(d);
  });
  const t0 = Date.now();
  while (!/^open$/m.test(out)) {
    if (Date.now() - t0 > 30_000 || subs.exitCode !== null) {
      subs.kill("SIGKILL");
      throw new Error(`${n} subscribers did not open: ${out}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return subs;
}

export interface PlaceboReport {
  /** Every thread pinned and at SCHED_FIFO (else the counts say nothing). */
  fifo: boolean;
  cpus: number;
  /** Wake-ups more than 4 ms late over the run, all CPUs. */
  stalls: number;
  /** Of those, more than 22 ms late: a stall that would make a 12 ms core late past its 24 ms safety ramp bound. */
  longStalls: number;
  maxLateMs: number;
}

/** test/rt/placebo.mjs: what the machine itself does to a real-time thread, one per CPU (started, then "start" and "report" around what it should watch). */
export class Placebo {
  #out = "";
  private constructor(readonly child: ChildProcess) {
    child.stdout!.on("data", (d) => {
      this.#out += String(d);
    });
  }
  static async start(): Promise<Placebo> {
    const p = new Placebo(spawn(process.execPath, [fileURLToPath(new URL("./placebo.mjs", import.meta.url))], { stdio: ["pipe", "pipe", "inherit"] }));
    await p.#next(/^ready$/);
    return p;
  }
  /** Send a command, resolve with the line that answers it. */
  request(cmd: "start" | "report", answer: RegExp): Promise<string> {
    this.child.stdin!.write(`${cmd}\n`);
    return this.#next(answer);
  }
  async #next(answer: RegExp): Promise<string> {
    await until(() => this.#out.includes("\n"), "the placebo's answer", 10_000);
    const i = this.#out.indexOf("\n");
    const line = this.#out.slice(0, i);
    this.#out = this.#out.slice(i + 1);
    if (!answer.test(line)) throw new Error(`placebo: expected ${answer}, got ${line}`);
    return line;
  }
  close(): void {
    this.child.kill("SIGKILL");
  }
}
