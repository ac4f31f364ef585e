/**
 * A short LoLA client: connects to a LoLA socket (bodylink's, or LoLA's own on a robot), prints
 * the battery and the accelerometer twice a second, and nods the head with a stiffness ramp up
 * and down. It talks plain LoLA (lola.md): read exactly 896 bytes per cycle, answer each with one
 * command map, so it is also a template for clients in other languages.
 *
 *   npx tsx examples/lola-client.ts [socketPath] [--seconds N]
 *
 * socketPath defaults to /tmp/robocup. Start a runtime first (`bodylink serve`, simulator by default).
 */
import { type Socket, connect } from "node:net";
import { unpack } from "msgpackr";
import { LolaCommandWriter } from "../src/wire/lola/command-message.js";
import { LOLA_CYCLE_MS, LOLA_SENSOR_MESSAGE_BYTES, LOLA_SOCKET_PATH } from "../src/wire/lola/constants.js";

/** One line on stderr and exit 1: what went wrong and what to do, no stack trace. */
function fail(message: string): never {
  console.error(`lola-client: ${message}`);
  process.exit(1);
}

const args = process.argv.slice(2);
const secondsAt = args.indexOf("--seconds");
const seconds = secondsAt >= 0 ? Number(args[secondsAt + 1]) : 6;
// The socket path is the one argument that is neither a flag nor the value after --seconds.
const path = args.find((a, i) => !a.startsWith("--") && (secondsAt < 0 || i !== secondsAt + 1)) ?? LOLA_SOCKET_PATH;
if (!(seconds >= 2)) fail("--seconds must be at least 2 (1 s ramp up, 1 s ramp down)");
const unknown = args.find((a) => a.startsWith("--") && a !== "--seconds");
if (unknown) fail(`unknown option ${unknown}; usage: npx tsx examples/lola-client.ts [socketPath] [--seconds N]`);

const HEAD_YAW = 0; // LoLA joint order (lola.md §6.1)
const HEAD_PITCH = 1;
const HEAD_STIFFNESS = 0.6;
const RAMP_S = 1;

interface SensorMessage {
  Position: number[];
  Battery: number[]; // charge 0..1, status, current A, temperature
  Accelerometer: number[]; // m/s², x y z
  RobotConfig: string[];
}

/** Connect, retrying like nidhogg's connect_with_retry(10, 500 ms). */
async function connectWithRetry(p: string, tries = 10, delayMs = 500): Promise<Socket> {
  for (let i = 1; ; i++) {
    try {
      return await new Promise<Socket>((resolve, reject) => {
        const s = connect(p);
        s.once("connect", () => resolve(s));
        s.once("error", reject);
      });
    } catch (e) {
      if (i >= tries) fail(`could not connect to the LoLA socket ${p}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}; is a runtime serving it (bodylink serve)?`);
      await new Promise((r) => setTimeout(r, delayMs));
    }
  }
}

const socket = await connectWithRetry(path);
const command = new LolaCommandWriter(["Position", "Stiffness"]);
const stiffness = new Float32Array(25);
let pending: Buffer = Buffer.alloc(0);
let cycle = 0;
let start: [number, number] | null = null;
const totalCycles = Math.round((seconds * 1000) / LOLA_CYCLE_MS);

socket.on("data", (chunk: Buffer) => {
  pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
  // read_exact(896): take whole messages only; answer each with one command.
  while (pending.length >= LOLA_SENSOR_MESSAGE_BYTES) {
    const m = unpack(pending.subarray(0, LOLA_SENSOR_MESSAGE_BYTES)) as SensorMessage;
    pending = pending.subarray(LOLA_SENSOR_MESSAGE_BYTES);
    onMessage(m);
  }
});
socket.on("close", () => {
  if (cycle === 0 && pending.length > 0) {
    // Shorter than a sensor message: bodylink explains a refusal in an {"Error": …} map.
    const why = (() => {
      try {
        return (unpack(pending) as { Error?: string }).Error;
      } catch {
        return undefined;
      }
    })();
    console.error(`the server closed the connection: ${why ?? `${pending.length} bytes, not a sensor message`}`);
    process.exitCode = 1;
  } else if (cycle < totalCycles) {
    console.error(`the server closed the connection after ${cycle} cycles`);
    process.exitCode = 1;
  }
});

function onMessage(m: SensorMessage): void {
  // Messages already on their way after the last command (the socket is ending): not another cycle.
  if (cycle >= totalCycles) return;
  if (cycle === 0) {
    console.log(`connected to ${path}: body ${m.RobotConfig[0]} (version ${m.RobotConfig[1]}), head ${m.RobotConfig[2]}`);
    start = [m.Position[HEAD_YAW]!, m.Position[HEAD_PITCH]!];
  }
  const t = cycle * (LOLA_CYCLE_MS / 1000);
  if (cycle % 42 === 0) {
    const [ax, ay, az] = m.Accelerometer.map((v) => v.toFixed(2));
    console.log(
      `t=${t.toFixed(1)} s  battery ${(m.Battery[0]! * 100).toFixed(0)} % (${m.Battery[2]!.toFixed(2)} A)  accelerometer ${ax} ${ay} ${az} m/s²  head yaw ${m.Position[HEAD_YAW]!.toFixed(3)} rad`,
    );
  }
  // Stiffness: up over the first second, down over the last; every other joint stays off, its
  // target the measured angle (as B-Human does for joints it does not drive).
  // The last command (one cycle before the end) has stiffness 0.
  const ramp = Math.max(0, Math.min(1, t / RAMP_S, (seconds - LOLA_CYCLE_MS / 1000 - t) / RAMP_S));
  stiffness.fill(0);
  stiffness[HEAD_YAW] = HEAD_STIFFNESS * ramp;
  stiffness[HEAD_PITCH] = HEAD_STIFFNESS * ramp;
  command.setFloats("Position", m.Position);
  command.setFloats("Stiffness", stiffness);
  // Nod: ±0.4 rad yaw, ±0.15 rad pitch around where the head was, faded in with the stiffness.
  command.setFloat("Position", HEAD_YAW, start![0] + 0.4 * ramp * Math.sin((2 * Math.PI * t) / 3));
  command.setFloat("Position", HEAD_PITCH, start![1] + 0.15 * ramp * Math.sin((2 * Math.PI * t) / 1.5));
  // The writer reuses its buffer; hand the socket a copy in case this write is still queued when
  // the next message arrives.
  socket.write(Buffer.from(command.bytes));
  cycle++;
  if (cycle >= totalCycles) {
    console.log(`done after ${cycle} cycles; head stiffness back to 0`);
    socket.end();
  }
}
