/**
 * A held control lease on the SDK's side: it renews itself in the background until released, and
 * ends itself when a renewal is refused or cannot reach the runtime before it would expire.
 * Prepare side; browser-safe.
 */
import { ApiError } from "./errors.js";
import type { LeaseAnswer } from "./messages.js";

/** What a lease needs from its client (`BodylinkClient` is one). */
export interface LeaseOwner {
  /** REST call with the lease's id; resolves the parsed answer or rejects with ApiError. */
  request<T>(method: string, path: string, body?: unknown, leaseId?: string): Promise<T>;
  /** The lease stopped being renewable (the client emits `control-lost`). */
  leaseLost(lease: ControlLease, reason: string): void;
  /** The lease was released or lost. */
  leaseEnded(lease: ControlLease): void;
  /** A renewal failed for a reason that may pass (reported as `error`, retried). */
  reportError(e: Error): void;
}

/**
 * A held control lease. Renews itself in the background until `release()`; if a renewal is
 * refused (expired, revoked by an emergency stop) it stops and the client emits `control-lost`.
 * Network errors during renewal are reported as `error` and retried until the lease would expire.
 */
export class ControlLease implements AsyncDisposable {
  readonly id: string;
  readonly owner: string;
  readonly leaseMs: number;
  #expiresAtEpochMs: number;
  #expiresAtLocalMs: number;
  /** @internal When it was granted, the client's clock. */
  readonly acquiredAtLocalMs: number;
  #active = true;
  #held = false;
  #timer: ReturnType<typeof setTimeout> | null = null;
  readonly #client: LeaseOwner;
  readonly #renewEveryMs: number;
  readonly #now: () => number;

  constructor(client: LeaseOwner, a: LeaseAnswer, renewEveryMs: number, now: () => number) {
    this.#client = client;
    this.id = a.lease_id;
    this.owner = a.owner;
    this.leaseMs = a.lease_ms;
    this.#expiresAtEpochMs = a.expires_at_epoch_ms;
    this.#now = now;
    this.acquiredAtLocalMs = now();
    this.#expiresAtLocalMs = this.acquiredAtLocalMs + a.lease_ms;
    this.#renewEveryMs = renewEveryMs;
    this.#schedule();
  }

  /** True until released or lost. */
  get active(): boolean {
    return this.#active;
  }
  /** When the lease runs out unless renewed (server's wall clock), ms since the Unix epoch. */
  get expiresAtEpochMs(): number {
    return this.#expiresAtEpochMs;
  }

  /** Release control now (idempotent). */
  async release(): Promise<void> {
    if (!this.#active) return;
    this.#stop();
    try {
      await this.#client.request("DELETE", "/v1/control", undefined, this.id);
    } catch (e) {
      // Already gone (expired or revoked) is what release wanted; anything else is reported.
      if (!(e instanceof ApiError && e.status === 403)) throw e;
    }
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.release();
  }

  /** @internal Send no renewal until resume() (an emergency stop is on its way). */
  hold(): void {
    this.#held = true;
  }
  /** @internal Renew again (the emergency stop did not go through). */
  resume(): void {
    if (!this.#held) return;
    this.#held = false;
    if (this.#active && !this.#timer) this.#schedule();
  }
  /** @internal The server revoked it (an emergency stop): end it here, with no request. */
  revoked(reason: string): void {
    if (!this.#active) return;
    this.#stop();
    this.#client.leaseLost(this, reason);
  }

  #stop(): void {
    this.#client.leaseEnded(this);
    this.#active = false;
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
  }

  #schedule(): void {
    const t = setTimeout(() => void this.#renew(), this.#renewEveryMs);
    // Renewal alone must not keep a Node process alive: a script that ends lets the lease expire.
    (t as { unref?: () => void }).unref?.();
    this.#timer = t;
  }

  async #renew(): Promise<void> {
    this.#timer = null;
    if (!this.#active || this.#held) return;
    try {
      const a = await this.#client.request<LeaseAnswer>("PUT", "/v1/control", { lease_ms: this.leaseMs }, this.id);
      this.#expiresAtEpochMs = a.expires_at_epoch_ms;
      this.#expiresAtLocalMs = this.#now() + a.lease_ms;
    } catch (e) {
      if (!this.#active) return;
      if (e instanceof ApiError && (e.status === 403 || e.status === 409)) {
        this.#stop();
        this.#client.leaseLost(this, e.message);
        return;
      }
      this.#client.reportError(e instanceof Error ? e : new Error(String(e)));
      if (this.#now() >= this.#expiresAtLocalMs) {
        this.#stop();
        this.#client.leaseLost(this, "could not renew before the lease expired (server unreachable)");
        return;
      }
    }
    if (this.#active && !this.#held) this.#schedule();
  }
}
