/**
 * The link to a real TNY-360: one WebSocket client connection to `ws://HOST:5621/` (tny360.md
 * §2.1), kept up with reconnects (backoff on the runtime's clock). Requests go through the typed
 * client (`src/client/tny`), so msg_id matching, timeouts and the 256-byte limit are shared with
 * the SDK. Node side (defaults to the `ws` package); prepare side, allocates per request.
 *
 * The robot serves at most 3 sockets: this link uses one.
 */
import WebSocket from "ws";
import { type TnyClient as TnyClientType, TnyClient, TnyClosedError, type TnyRawReply, type TnyWebSocketConstructor } from "../client/tny/index.js";
import type { Clock } from "../runtime/clock.js";
import { type ActionSpec, type ModuleSpec, TNY_DEFAULT_PORT, TNY_DEFAULT_TIMEOUT_MS } from "../wire/tny/constants.js";

export interface TnyWebSocketTransportOptions {
  host: string;
  /** Defaults to 5621. */
  port?: number;
  clock: Clock;
  /** WebSocket class; defaults to the `ws` package. */
  WebSocket?: TnyWebSocketConstructor;
  /** Per-request timeout. Defaults to 2000 ms. */
  timeoutMs?: number;
  /** First reconnect delay; doubles up to `reconnectMaxMs`. Defaults to 250 ms. */
  reconnectMinMs?: number;
  /** Defaults to 5000 ms. */
  reconnectMaxMs?: number;
}

export type TnyLinkEvent = { readonly type: "up" } | { readonly type: "down"; readonly reason: string };

export class TnyWebSocketTransport {
  readonly url: string;
  readonly #opts: Required<Omit<TnyWebSocketTransportOptions, "host" | "port">>;
  readonly #listeners = new Set<(e: TnyLinkEvent) => void>();
  #client: TnyClientType | null = null;
  #running = false;
  #loop: Promise<void> | null = null;
  #wake: (() => void) | null = null;
  /** Successful connections so far. */
  connects = 0;
  /** Connection losses so far. */
  disconnects = 0;
  /** Why the last connection attempt or connection failed. */
  lastError: string | null = null;

  constructor(opts: TnyWebSocketTransportOptions) {
    const host = opts.host.includes(":") && !opts.host.startsWith("[") ? `[${opts.host}]` : opts.host; // IPv6 literal
    this.url = `ws://${host}:${opts.port ?? TNY_DEFAULT_PORT}/`;
    this.#opts = {
      clock: opts.clock,
      WebSocket: opts.WebSocket ?? (WebSocket as unknown as TnyWebSocketConstructor),
      timeoutMs: opts.timeoutMs ?? TNY_DEFAULT_TIMEOUT_MS,
      reconnectMinMs: opts.reconnectMinMs ?? 250,
      reconnectMaxMs: opts.reconnectMaxMs ?? 5000,
    };
  }

  get connected(): boolean {
    return this.#client !== null && !this.#client.closed;
  }

  /** The open client, or null. */
  get client(): TnyClientType | null {
    return this.connected ? this.#client : null;
  }

  /** Listen for link up/down; returns an unsubscribe. */
  onLink(listener: (e: TnyLinkEvent) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Start connecting (and reconnecting) in the background. */
  start(): void {
    if (this.#running) return;
    this.#running = true;
    this.#loop = this.#run();
  }

  /** Resolve when connected, or after `timeoutMs` (false). */
  async waitConnected(timeoutMs: number): Promise<boolean> {
    if (this.connected) return true;
    return new Promise((resolve) => {
      const off = this.onLink((e) => {
        if (e.type === "up") {
          off();
          clearTimeout(t);
          resolve(true);
        }
      });
      const t = setTimeout(() => {
        off();
        resolve(this.connected);
      }, timeoutMs);
    });
  }

  async stop(): Promise<void> {
    this.#running = false;
    this.#client?.close();
    this.#wake?.();
    await this.#loop;
    this.#loop = null;
  }

  /** Send a request; rejects with TnyClosedError when the link is down. */
  request(mod: ModuleSpec, act: ActionSpec, args: ArrayLike<unknown>): Promise<TnyRawReply> {
    const c = this.client;
    if (!c) return Promise.reject(new TnyClosedError(`no link to the TNY-360 at ${this.url}${this.lastError ? `: ${this.lastError}` : ""}`));
    return c.request(mod, act, args);
  }

  #emit(e: TnyLinkEvent): void {
    for (const l of this.#listeners) l(e);
  }

  async #run(): Promise<void> {
    let delay = this.#opts.reconnectMinMs;
    while (this.#running) {
      try {
        const client = await TnyClient.connect(this.url, { WebSocket: this.#opts.WebSocket, timeoutMs: this.#opts.timeoutMs });
        if (!this.#running) {
          client.close();
          break;
        }
        this.#client = client;
        this.connects++;
        this.lastError = null;
        delay = this.#opts.reconnectMinMs;
        const closed = new Promise<string>((resolve) => client.onClose(resolve));
        this.#emit({ type: "up" });
        const reason = await closed;
        this.#client = null;
        this.disconnects++;
        this.lastError = reason;
        this.#emit({ type: "down", reason });
      } catch (e) {
        this.lastError = (e as Error).message;
      }
      if (!this.#running) break;
      // back off on the runtime's clock (a sim clock only reconnects when advanced)
      const woken = new Promise<void>((r) => {
        this.#wake = r;
      });
      await Promise.race([this.#opts.clock.sleepUntil(this.#opts.clock.nowMs() + delay), woken]);
      this.#wake = null;
      delay = Math.min(this.#opts.reconnectMaxMs, delay * 2);
    }
  }
}
