/**
 * The NAO's serve entry: its core (chest board over USB or the simulated one, or an upstream LoLA
 * with --lola-upstream) and our LoLA server, both in the core's worker (src/rt/nao-worker.ts).
 * `--lockstep` (simulated time moved by the LoLA client's answers and the robot API's step requests)
 * runs the robot on this thread instead: nothing real-time is left to protect, and its tests read
 * the simulated body's model in place, which the worker does not share.
 */
import { join, resolve } from "node:path";
import { NaoHost } from "../../host/nao-host.js";
import { TappedChestboard } from "../../record/tap.js";
import { WORKER_WAKE_DEFAULT } from "../../runtime/clock.js";
import { LockstepClock } from "../../runtime/lockstep.js";
import { NAO_PERIOD_MS, NaoRobot } from "../../runtime/nao-robot.js";
import { startLolaServer } from "../../serve/lola/server.js";
import { MujocoNaoModel, PHYSICS_START_POSE } from "../../sim/nao/physics/mujoco-nao.js";
import { BodylinkError } from "../../errors.js";
import { checkRuntimeDir } from "../discovery.js";
import { CliError } from "../errors.js";
import { DEFAULT_LOLA_PATH, DEFAULT_UPSTREAM_LOLA_PATH, type ServeOptions } from "../serve-options.js";
import { type BodyEntry, coreOptions, type EntryContext, realRobotWarnings, type StartedBody } from "./entry.js";

export const NAO_ENTRY: BodyEntry = {
  flagWarnings(o, given) {
    const out: string[] = [];
    if (!o.lola) {
      for (const [key, flag] of [
        ["lolaPath", "--lola-path"],
        ["lolaReaders", "--lola-readers"],
        ["lolaGraceMs", "--lola-grace-ms"],
        ["lolaGroup", "--lola-group"],
      ] as const) {
        if (given(key)) out.push(`${flag} has no effect with --no-lola; ignored`);
      }
    }
    return o.usb ? [...out, ...realRobotWarnings("--usb", given)] : out;
  },
  async start(ctx) {
    const { o, name, others, recordRing, estopSocket } = ctx;
    const upstreamPath = o.lolaUpstream === true ? DEFAULT_LOLA_PATH : o.lolaUpstream || null;
    if (upstreamPath && o.usb) throw new CliError("--usb and --lola-upstream are two body links (the chest board, or LoLA on top of it); choose one", 2);
    if (upstreamPath && o.lolaPath && resolve(o.lolaPath) === resolve(upstreamPath)) {
      throw new CliError(`--lola-path ${o.lolaPath} is the upstream LoLA's own socket; serve ours elsewhere (default with --lola-upstream: ${DEFAULT_UPSTREAM_LOLA_PATH})`, 2);
    }
    if (o.lockstep && (o.usb || upstreamPath)) {
      throw new CliError("--lockstep runs a simulated NAO one cycle per answer of its LoLA client (or per POST /v1/sim/step): not with --usb or --lola-upstream (a real body keeps its own time)", 2);
    }
    // Without --lola-path, a busy default (another runtime, or LoLA itself) is no error: the core takes the derived path.
    const derived = join(checkRuntimeDir(true)!, `${name}.lola`);
    const preferred = upstreamPath ? DEFAULT_UPSTREAM_LOLA_PATH : DEFAULT_LOLA_PATH;
    const path = o.lolaPath ?? (others.some((r) => r.lolaPath === preferred) ? derived : preferred);
    const fallbackPath = o.lolaPath === undefined && path !== derived ? derived : null;
    if (o.lockstep) return startLockstep(ctx, path, fallbackPath);
    const h = await NaoHost.start({
      ...coreOptions(o),
      usb: o.usb === true,
      ...(o.sim ? { sim: o.sim } : {}),
      acceptBoardVersions: o.acceptBoardVersion,
      lola: o.lola ? { path, fallbackPath, readers: o.lolaReaders, graceMs: o.lolaGraceMs, ...(o.lolaGroup !== undefined ? { group: o.lolaGroup } : {}) } : null,
      ...(upstreamPath ? { upstream: { path: upstreamPath, ...(o.lolaUpstreamStallMs ? { stallMs: o.lolaUpstreamStallMs } : {}) } } : {}),
      ...(recordRing ? { recordRing } : {}),
      estopSocket,
    });
    const lines: string[] = [];
    const thread = `real-time core in its own thread (${h.scheduling}; wakes by ${o.coreWake ?? WORKER_WAKE_DEFAULT})`;
    let transport: string;
    if (upstreamPath) {
      transport = `lola:${upstreamPath}`;
      lines.push(`nao: on top of LoLA at ${upstreamPath} (${h.upstreamConnected ? "connected" : "waiting for it: it may start later"}); ${thread}`);
    } else {
      transport = h.transportName === "sim" ? "sim" : "usb";
      const rejected = h.boards.filter((b) => !b.accepted);
      lines.push(
        `nao: ${transport === "sim" ? "simulated chest board" : "chest board on USB"}, body ${h.prefs?.bodyId}, ${h.boards.length - rejected.length}/${h.boards.length} boards started; ${thread}`,
      );
      for (const b of rejected) lines.push(`  board ${b.name} left uninitialized: ${b.reason}`);
      if (transport === "sim") lines.push(simulatorLine(o, null));
    }
    if (h.lolaPath) lines.push(`LoLA socket: ${h.lolaPath}${o.lolaReaders ? ` (+${o.lolaReaders} read-only clients)` : ""}`);
    return { robot: h, host: h, inThreadRobot: null, transport, lolaPath: h.lolaPath, tnyUrl: null, lines, closers: [() => h.shutdown()] };
  },
};

/** `--lockstep`: the simulated NAO on this thread, its clock moved by the controlling LoLA client's answers. */
async function startLockstep({ o, tap: tapOn }: EntryContext, path: string, fallbackPath: string | null): Promise<StartedBody> {
  const clock = new LockstepClock(NAO_PERIOD_MS);
  const tap = tapOn(clock);
  const nao = await NaoRobot.create({
    clock,
    seed: o.seed,
    acceptBoardVersions: o.acceptBoardVersion,
    youngGcEveryMs: o.gcEveryMs ?? 100,
    ...(o.sim === "physics" ? { simModel: await MujocoNaoModel.create(PHYSICS_START_POSE) } : {}),
    ...(tap ? { wrapTransport: (t) => new TappedChestboard(t, tap) } : {}),
  });
  await nao.start();
  const closers: Array<() => Promise<void>> = [() => nao.stop()];
  const rejected = nao.boards.filter((b) => !b.accepted);
  const lines = [`nao: simulated chest board, body ${nao.prefs?.bodyId}, ${nao.boards.length - rejected.length}/${nao.boards.length} boards started`, simulatorLine(o, clock)];
  if (!o.lola) return { robot: nao, host: null, inThreadRobot: nao, lockstep: clock, transport: "sim", lolaPath: null, tnyUrl: null, lines, closers };
  const lolaOpts = {
    readers: o.lolaReaders,
    graceMs: o.lolaGraceMs,
    ...(tap ? { tap: tap.lola } : {}),
    onControllerCommand: () => clock.grant(),
    ...(o.lolaGroup !== undefined ? { group: o.lolaGroup } : {}),
  };
  const lola = await startLolaServer(nao, { path, ...lolaOpts })
    .catch((e: unknown) => {
      if (fallbackPath && e instanceof BodylinkError && e.code === "BL_ERR_LOLA_SOCKET") return startLolaServer(nao, { path: fallbackPath, ...lolaOpts });
      throw e;
    })
    .catch(async (e: unknown) => {
      await nao.stop();
      throw e;
    });
  closers.unshift(() => lola.close());
  lines.push(`LoLA socket: ${lola.path}${o.lolaReaders ? ` (+${o.lolaReaders} read-only clients)` : ""}`);
  return { robot: nao, host: null, inThreadRobot: nao, lockstep: clock, transport: "sim", lolaPath: lola.path, tnyUrl: null, lines, closers };
}

/** What the simulated NAO's body is, and how its time runs (docs/simulation.md). */
function simulatorLine(o: ServeOptions, lockstep: LockstepClock | null): string {
  const body = o.sim === "physics" ? "MuJoCo physics (models/nao.xml; it starts crouched and limp)" : "kinematic (joints follow their targets; it cannot fall)";
  const time = lockstep
    ? `lockstep: one ${lockstep.periodMs} ms cycle per answer of the controlling LoLA client${o.lola ? "" : " (no LoLA socket: --no-lola)"}, or per POST /v1/sim/step`
    : "real time";
  return `simulator: ${body}; ${time}`;
}
