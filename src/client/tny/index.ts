/**
 * Typed TNY-360 client (tny360.md §2–§7): `robot.body.setVelocity(0.2, 0, 0)` and every other
 * action of the table, over one WebSocket, with timeouts and msg_id matching (replies may arrive
 * out of order). Works with a real robot and with bodylink's TNY server.
 *
 * ```ts
 * import WebSocket from "ws"; // Node 20 only; browsers (and Node ≥ 22) have a global WebSocket
 * const robot = await TnyClient.connect("ws://192.168.4.1:5621", { WebSocket });
 * await robot.body.enableSmooth();
 * await robot.body.setVelocity(0.2, 0, 0);
 * const angles = await robot.joint.getJointAngles(); // Float32Array(14), JointId order
 * robot.close();
 * ```
 *
 * Browser-safe: no `node:` imports; the WebSocket class is injectable and defaults to
 * `globalThis.WebSocket`. With the `ws` package the client listens through its own emitter and
 * takes replies as Buffers (no event object and no ArrayBuffer copy per reply). Every request is
 * sent with RequireAck (the firmware answers regardless).
 * A request over 256 bytes is refused locally (the robot would drop it without a reply).
 * Method names and types come from the table in `src/wire/tny/constants.ts`.
 */
import { Writer } from "../../wire/bytes.js";
import {
  type ActionName,
  type ActionSpec,
  MODULES,
  type ModuleName,
  type ModuleSpec,
  MODULE_BY_NAME,
  MessageFlags,
  MessageType,
  statusName,
  TNY_DEFAULT_TIMEOUT_MS,
  TNY_HEADER_BYTES,
  TNY_MAX_REQUEST_BYTES,
} from "../../wire/tny/constants.js";
import { decodeReturns, resultOf } from "../../wire/tny/decode.js";
import { encodeRequestInto } from "../../wire/tny/encode.js";
import { type ActionArgs, type ActionResult, TnyEncodeError } from "../../wire/tny/types.js";

/** The part of a WebSocket the client uses (the browser's WebSocket and the `ws` package both fit). */
export interface TnyWebSocketLike {
  readonly readyState: number;
  binaryType: string;
  send(data: Uint8Array): void;
  close(code?: number, reason?: string): void;
  addEventListener(type: "open" | "close" | "error" | "message", listener: (event: object) => void): void;
}

/** The `ws` package's emitter side: its "message" listener gets the data itself, with no event object. */
interface WsEmitter {
  on(type: "message", listener: (data: unknown, isBinary: boolean) => void): unknown;
}
const isWsEmitter = (ws: object): ws is WsEmitter => typeof (ws as { on?: unknown }).on === "function" && "binaryType" in ws;
export type TnyWebSocketConstructor = new (url: string) => TnyWebSocketLike;

export interface TnyClientOptions {
  /** WebSocket class. Defaults to globalThis.WebSocket; in Node 20 pass the `ws` package's. */
  WebSocket?: TnyWebSocketConstructor;
  /** Per-request timeout. Defaults to 2000 ms (as both upstream SDKs). */
  timeoutMs?: number;
  /** Give up connecting after this long. Defaults to 5000 ms. */
  connectTimeoutMs?: number;
}

/** The robot answered a non-Ok status. */
export class TnyStatusError extends Error {
  constructor(
    readonly status: number,
    readonly moduleName: string,
    readonly actionName: string,
  ) {
    super(`TNY-360 answered ${statusName(status)} to ${moduleName}.${actionName}`);
    this.name = "TnyStatusError";
  }
}

/** No reply within the timeout (the firmware drops oversized frames and full RPC queues silently). */
export class TnyTimeoutError extends Error {
  constructor(
    readonly moduleName: string,
    readonly actionName: string,
    readonly timeoutMs: number,
  ) {
    super(`no reply to ${moduleName}.${actionName} within ${timeoutMs} ms`);
    this.name = "TnyTimeoutError";
  }
}

/** The connection closed (or never opened) before the reply came. */
export class TnyClosedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "TnyClosedError";
  }
}

/** A reply: the status, and for Ok the decoded return values in table order. */
export interface TnyRawReply {
  readonly status: number;
  readonly values: readonly unknown[];
}

/** Typed methods of one module, derived from the table. */
export type TnyModuleApi<M extends ModuleName> = {
  readonly [A in ActionName<M>]: (...args: ActionArgs<M, A>) => Promise<ActionResult<M, A>>;
};
export type TnyModules = { readonly [M in ModuleName]: TnyModuleApi<M> };

interface Pending {
  readonly module: ModuleSpec;
  readonly action: ActionSpec;
  /** Resolve with the shaped result (rejecting a non-Ok status), or with the raw reply (`request`). */
  readonly shaped: boolean;
  readonly resolve: (r: unknown) => void;
  readonly reject: (e: Error) => void;
  readonly sentAtMs: number;
}

const OPEN = 1;

/**
 * Node's Buffer, when there is one (the client is browser-safe: no import). A request goes to `ws`
 * as a slice of its pool: a small Uint8Array of its own lives in the JS heap, and `ws` taking its
 * `.buffer` moved it out (a malloc) on every send.
 */
const NodeBuffer = (globalThis as { Buffer?: { allocUnsafe(n: number): Uint8Array } }).Buffer ?? null;

/** The most arguments an action takes (body.setPosture: 7): the typed methods take them as parameters, not a rest array. */
const MAX_ARGS = 8;

/** A typed method's arguments, as many as the caller passed (`length`): one per client, read while the request is encoded. */
interface ArgList {
  length: number;
  [index: number]: unknown;
}

/** Turn a WebSocket message's data into bytes (ArrayBuffer in browsers, Buffer/ArrayBuffer with ws). */
function bytesOf(data: unknown): Uint8Array | null {
  if (data instanceof Uint8Array) return data; // ws's Buffer: no view per reply
  if (data instanceof ArrayBuffer) return new Uint8Array(data);
  if (ArrayBuffer.isView(data)) return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  return null;
}

export interface TnyClient extends TnyModules {}

/** One connection to a TNY-360 (or bodylink's TNY server). */
// biome-ignore lint/suspicious/noUnsafeDeclarationMerging: the module methods are installed from the table in the constructor
export class TnyClient {
  readonly url: string;
  readonly timeoutMs: number;
  /** Replies whose msg_id matched no pending request (late replies after a timeout). */
  unmatchedReplies = 0;
  /** Exponential moving average of round trips, ms (0.8 old / 0.2 new, like the SDK's ping). */
  latencyMs = Number.NaN;

  readonly #ws: TnyWebSocketLike;
  /** In the order sent, so in the order their timeouts fall due (one timeout for all). */
  readonly #pending = new Map<number, Pending>();
  readonly #closeListeners = new Set<(reason: string) => void>();
  readonly #scratch = new Uint8Array(TNY_MAX_REQUEST_BYTES);
  readonly #writer = new Writer(this.#scratch);
  /**
   * One timer for every pending request, armed for the oldest one's deadline; a reply does not
   * touch it (a timer per request, set and cleared, was a third of the client's own time per call).
   */
  #timer: ReturnType<typeof setTimeout> | null = null;
  #nextId = 1;
  #closed: string | null = null;
  readonly #argv: ArgList = { length: 0, 0: undefined, 1: undefined, 2: undefined, 3: undefined, 4: undefined, 5: undefined, 6: undefined, 7: undefined };
  /** The resolving functions of the promise being made (see #capture): no closure per request. */
  #resolveNext: ((r: unknown) => void) | null = null;
  #rejectNext: ((e: Error) => void) | null = null;
  readonly #capture = (resolve: (r: unknown) => void, reject: (e: Error) => void): void => {
    this.#resolveNext = resolve;
    this.#rejectNext = reject;
  };

  private constructor(url: string, ws: TnyWebSocketLike, opts: TnyClientOptions) {
    this.url = url;
    this.#ws = ws;
    this.timeoutMs = opts.timeoutMs ?? TNY_DEFAULT_TIMEOUT_MS;
    for (const mod of MODULES as readonly ModuleSpec[]) {
      const api: Record<string, (...args: unknown[]) => Promise<unknown>> = {};
      for (const act of mod.actions) {
        if (act.args.length > MAX_ARGS) throw new Error(`${mod.name}.${act.name} takes ${act.args.length} arguments; TnyClient passes at most ${MAX_ARGS}`);
        const self = this;
        // NOTE: hot path (every call): parameters and `arguments.length` (which V8 reads without
        // making the arguments object), not a rest array; `function`, since arrows have no `arguments`
        api[act.name] = function (a0?: unknown, a1?: unknown, a2?: unknown, a3?: unknown, a4?: unknown, a5?: unknown, a6?: unknown, a7?: unknown): Promise<unknown> {
          // biome-ignore lint/complexity/noArguments: its length only (how many the caller passed), so no rest array per call
          const n = arguments.length;
          const v = self.#argv;
          v.length = n;
          v[0] = a0;
          v[1] = a1;
          v[2] = a2;
          v[3] = a3;
          v[4] = a4;
          v[5] = a5;
          v[6] = a6;
          v[7] = a7;
          return self.#send(mod, act, v, true);
        };
      }
      Object.defineProperty(this, mod.name, { value: Object.freeze(api), enumerable: true });
    }
    if (isWsEmitter(ws)) {
      ws.binaryType = "nodebuffer"; // a Buffer is a Uint8Array: bytesOf views it in place
      ws.on("message", (data) => this.#onMessage(data));
    } else ws.addEventListener("message", (ev) => this.#onMessage((ev as { data?: unknown }).data));
    ws.addEventListener("close", (ev) => {
      const e = ev as { code?: number; reason?: string };
      this.#shutdown(`connection closed (${e.code ?? "?"}${e.reason ? ` ${e.reason}` : ""})`);
    });
    ws.addEventListener("error", () => {
      // a close event follows; pending requests are rejected there
    });
  }

  /** Open a connection; resolves when the socket is open. */
  static connect(url: string, opts: TnyClientOptions = {}): Promise<TnyClient> {
    const g = globalThis as { WebSocket?: TnyWebSocketConstructor };
    const WS = opts.WebSocket ?? g.WebSocket;
    if (!WS) return Promise.reject(new TnyClosedError("no WebSocket class: pass { WebSocket } (in Node 20: import WebSocket from 'ws')"));
    return new Promise((resolve, reject) => {
      let ws: TnyWebSocketLike;
      try {
        ws = new WS(url);
      } catch (e) {
        reject(new TnyClosedError(`cannot open ${url}: ${(e as Error).message}`));
        return;
      }
      ws.binaryType = "arraybuffer";
      let settled = false;
      const timer = setTimeout(() => {
        if (settled) return;
        settled = true;
        ws.close();
        reject(new TnyClosedError(`no connection to ${url} within ${opts.connectTimeoutMs ?? 5000} ms; is the robot on and reachable (its AP is 192.168.4.1)?`));
      }, opts.connectTimeoutMs ?? 5000);
      ws.addEventListener("open", () => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve(new TnyClient(url, ws, opts));
      });
      ws.addEventListener("close", (ev) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        const e = ev as { code?: number; reason?: string };
        reject(new TnyClosedError(`cannot connect to ${url} (${e.code ?? "?"}${e.reason ? ` ${e.reason}` : ""}); at most 3 clients may be connected to a TNY-360`));
      });
      ws.addEventListener("error", () => {
        // the close event carries the outcome
      });
    });
  }

  /** Requests waiting for a reply. */
  get pending(): number {
    return this.#pending.size;
  }

  get closed(): boolean {
    return this.#closed !== null;
  }

  /** Listen for the connection closing (with the reason); returns an unsubscribe. */
  onClose(listener: (reason: string) => void): () => void {
    this.#closeListeners.add(listener);
    return () => this.#closeListeners.delete(listener);
  }

  /** Call an action by names; resolves with the shaped result, rejects with TnyStatusError on a non-Ok status. */
  call<M extends ModuleName, A extends ActionName<M>>(moduleName: M, actionName: A, ...args: ActionArgs<M, A>): Promise<ActionResult<M, A>> {
    const mod = MODULE_BY_NAME.get(moduleName);
    const act = mod?.actions.find((x) => x.name === actionName);
    if (!mod || !act) return Promise.reject(new TypeError(`no TNY-360 action ${moduleName}.${actionName}`));
    return this.#send(mod, act, args, true) as Promise<ActionResult<M, A>>;
  }

  /**
   * Send a request and resolve with the raw reply (status and decoded values), without throwing
   * on a non-Ok status. For proxies and drivers that forward statuses.
   */
  request(mod: ModuleSpec, act: ActionSpec, args: ArrayLike<unknown>): Promise<TnyRawReply> {
    return this.#send(mod, act, args, false) as Promise<TnyRawReply>;
  }

  /** Close the connection; pending requests reject with TnyClosedError. */
  close(): void {
    this.#shutdown("closed by the client");
    try {
      this.#ws.close(1000, "bye");
    } catch {
      // already closing
    }
  }

  /** Encode, send, and wait for the reply with this msg_id: shaped (a typed method's) or raw (`request`). */
  #send(mod: ModuleSpec, act: ActionSpec, args: ArrayLike<unknown>, shaped: boolean): Promise<unknown> {
    if (this.#closed !== null) return Promise.reject(new TnyClosedError(this.#closed));
    if (this.#ws.readyState !== OPEN) return Promise.reject(new TnyClosedError("the connection is not open"));
    const msgId = this.#allocId();
    let bytes: Uint8Array;
    try {
      const w = this.#writer.reset(this.#scratch);
      encodeRequestInto(w, msgId, mod, act, args, MessageFlags.RequireAck);
      bytes = this.#copyOut(w.offset); // the socket may queue it: send a copy
    } catch (e) {
      if (e instanceof RangeError && !(e instanceof TnyEncodeError)) {
        return Promise.reject(new TnyEncodeError(`${mod.name}.${act.name}: the request exceeds the robot's ${TNY_MAX_REQUEST_BYTES}-byte limit (it would be dropped without a reply)`));
      }
      return Promise.reject(e);
    }
    const promise = new Promise<unknown>(this.#capture);
    const resolve = this.#resolveNext!;
    const reject = this.#rejectNext!;
    this.#resolveNext = this.#rejectNext = null;
    this.#pending.set(msgId, { module: mod, action: act, shaped, resolve, reject, sentAtMs: now() });
    try {
      this.#ws.send(bytes);
    } catch (e) {
      this.#pending.delete(msgId);
      reject(new TnyClosedError(`send failed: ${(e as Error).message}`));
      return promise;
    }
    if (this.#timer === null) this.#timer = setTimeout(this.#onTimer, this.timeoutMs);
    return promise;
  }

  /** The scratch's first `n` bytes in a buffer of their own: a slice of Node's pool where there is one, else a copy. */
  #copyOut(n: number): Uint8Array {
    const s = this.#scratch;
    if (NodeBuffer === null) return s.slice(0, n);
    const out = NodeBuffer.allocUnsafe(n);
    for (let i = 0; i < n; i++) out[i] = s[i]!;
    return out;
  }

  /** The oldest requests' deadlines: reject those past it, then wait for the next oldest. */
  readonly #onTimer = (): void => {
    this.#timer = null;
    const t = now();
    for (const [id, p] of this.#pending) {
      const leftMs = p.sentAtMs + this.timeoutMs - t;
      if (leftMs > 0) {
        this.#timer = setTimeout(this.#onTimer, leftMs);
        return;
      }
      this.#pending.delete(id);
      p.reject(new TnyTimeoutError(p.module.name, p.action.name, this.timeoutMs));
    }
  };

  #allocId(): number {
    // u16 counter like the SDKs, skipping ids still waiting for a reply
    for (let i = 0; i < 0x10000; i++) {
      const id = this.#nextId;
      this.#nextId = (this.#nextId + 1) & 0xffff;
      if (!this.#pending.has(id)) return id;
    }
    throw new TnyEncodeError("65536 requests pending: no msg_id left");
  }

  #onMessage(data: unknown): void {
    const bytes = bytesOf(data);
    if (!bytes) return; // text frames are not part of the protocol
    // The header's fields read in place (decodeHeader's layout, all LE): no cursor or object per reply.
    if (bytes.length < TNY_HEADER_BYTES || bytes[0] !== MessageType.Response) return; // only responses are answered to (events are never sent, §3.3)
    const msgId = bytes[2]! | (bytes[3]! << 8);
    const code = bytes[4]! | (bytes[5]! << 8);
    const length = bytes[6]! | (bytes[7]! << 8);
    const p = this.#pending.get(msgId);
    if (!p) {
      this.unmatchedReplies++;
      return;
    }
    this.#pending.delete(msgId);
    const rtt = now() - p.sentAtMs;
    this.latencyMs = Number.isNaN(this.latencyMs) ? rtt : 0.8 * this.latencyMs + 0.2 * rtt;
    if (code !== 0) {
      if (p.shaped) p.reject(new TnyStatusError(code, p.module.name, p.action.name));
      else p.resolve({ status: code, values: [] });
      return;
    }
    if (p.shaped && p.action.returns.length === 0) {
      p.resolve(undefined); // nothing to decode (every command): no payload view, no values array
      return;
    }
    const payload = bytes.subarray(TNY_HEADER_BYTES, TNY_HEADER_BYTES + Math.min(length, bytes.length - TNY_HEADER_BYTES));
    try {
      const values = decodeReturns(p.action.returns, payload);
      p.resolve(p.shaped ? resultOf(p.action.returns, values) : { status: 0, values });
    } catch (e) {
      p.reject(e as Error); // e.g. the firmware's empty Ok for imu getAcceleration (§12 #7)
    }
  }

  #shutdown(reason: string): void {
    if (this.#closed !== null) return;
    this.#closed = reason;
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
    for (const [id, p] of this.#pending) {
      p.reject(new TnyClosedError(`${p.module.name}.${p.action.name}: ${reason}`));
      this.#pending.delete(id);
    }
    for (const l of this.#closeListeners) l(reason);
  }
}

/** Monotonic ms (browsers and Node both have `performance`). */
function now(): number {
  return performance.now();
}
