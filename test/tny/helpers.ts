/** Test helpers: a simulated TNY-360 on a SimClock, and a raw WebSocket with a message queue. */
import WebSocket from "ws";
import { SimClock } from "../../src/runtime/clock.js";
import { Tny360Robot, type Tny360RobotOptions } from "../../src/runtime/tny360-robot.js";
import { actionSpec } from "../../src/wire/tny/constants.js";

export interface SimRig {
  readonly clock: SimClock;
  readonly robot: Tny360Robot;
  /** Run the 200 Hz loop for `ms` of simulated time (synchronously, one step per 5 ms). */
  run(ms: number, each?: (tMs: number) => void): void;
  /** A lease for commands. */
  lease(): string;
  /** Call an action through the wire path (decoded args), synchronously or after a tick. */
  call(module: string, action: string, args?: unknown[], leaseId?: string | null): ReturnType<Tny360Robot["request"]>;
}

export async function simRig(opts: Tny360RobotOptions = {}): Promise<SimRig> {
  const clock = new SimClock();
  const robot = await Tny360Robot.create({ clock, ...opts });
  robot.loop.step();
  let leaseId: string | null = null;
  return {
    clock,
    robot,
    run(ms, each) {
      const n = Math.round(ms / 5);
      for (let i = 0; i < n; i++) {
        clock.set(clock.nowMs() + 5);
        robot.loop.step();
        each?.(clock.nowMs());
      }
    },
    lease() {
      if (leaseId && robot.authority.isHeld(leaseId)) return leaseId;
      const r = robot.authority.acquire("test", "cli", 60_000);
      if (!r.ok) throw new Error(r.reason);
      leaseId = r.lease.id;
      return leaseId;
    },
    call(module, action, args = [], lid = leaseId) {
      const s = actionSpec(module, action);
      return robot.request(lid, s.module, s.action, args);
    },
  };
}

/** A raw binary WebSocket that queues what it receives. */
export class RawSocket {
  readonly ws: WebSocket;
  readonly #queue: Uint8Array[] = [];
  readonly #waiters: ((b: Uint8Array) => void)[] = [];
  closeCode: number | null = null;
  readonly closed: Promise<number>;

  private constructor(ws: WebSocket) {
    this.ws = ws;
    ws.on("message", (data: Buffer) => {
      const b = new Uint8Array(data);
      const w = this.#waiters.shift();
      if (w) w(b);
      else this.#queue.push(b);
    });
    this.closed = new Promise((resolve) =>
      ws.on("close", (code) => {
        this.closeCode = code;
        resolve(code);
      }),
    );
  }

  static open(url: string): Promise<RawSocket> {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(url);
      const raw = new RawSocket(ws);
      ws.once("open", () => resolve(raw));
      ws.once("error", reject);
      ws.once("unexpected-response", (_req, res) => reject(new Error(`HTTP ${res.statusCode}`)));
    });
  }

  send(bytes: Uint8Array | number[]): void {
    this.ws.send(Uint8Array.from(bytes), { binary: true });
  }

  /** The next message, or a rejection after `timeoutMs`. */
  next(timeoutMs = 2000): Promise<Uint8Array> {
    const q = this.#queue.shift();
    if (q) return Promise.resolve(q);
    return new Promise((resolve, reject) => {
      const t = setTimeout(() => {
        const i = this.#waiters.indexOf(w);
        if (i >= 0) this.#waiters.splice(i, 1);
        reject(new Error(`no message within ${timeoutMs} ms`));
      }, timeoutMs);
      const w = (b: Uint8Array): void => {
        clearTimeout(t);
        resolve(b);
      };
      this.#waiters.push(w);
    });
  }

  /** Send and wait for the next message. */
  async roundTrip(bytes: Uint8Array | number[]): Promise<Uint8Array> {
    this.send(bytes);
    return this.next();
  }

  close(): Promise<number> {
    this.ws.close();
    return this.closed;
  }
}
