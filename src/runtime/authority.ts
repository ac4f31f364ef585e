/**
 * Control authority as a loan (ros2_control's exclusive command-interface loan, with expiry).
 *
 * One {@link Authority} per runtime arbitrates every commanding client: the LoLA socket's
 * controlling client, robot-API clients and TNY-360 API clients all acquire the same lease, so the
 * rule is one: **first holder wins until it releases or its lease expires**. A lease not renewed
 * within its duration expires by itself, so a crashed client never blocks others. Reads never need
 * a lease; emergency stop never needs one.
 *
 * Runs on the prepare side of the cycle (may allocate); `isHeld(id)` is cheap for the perform side.
 */
import { randomUUID } from "node:crypto";
import { EventEmitter } from "node:events";
import type { Clock } from "./clock.js";

export type LeaseSource = "api" | "lola" | "tny" | "cli";

export interface LeaseInfo {
  /** Opaque id; present it (x-bodylink-lease header, SDK) with every command. */
  readonly id: string;
  /** Who holds control, as the client named itself (e.g. "lola:pid 1234", "api:alice"). */
  readonly owner: string;
  readonly source: LeaseSource;
  readonly acquiredAtMs: number;
  /** Monotonic deadline; see `expiresAtEpochMs` for users. */
  readonly expiresAtMs: number;
  readonly expiresAtEpochMs: number;
}

export type AcquireResult =
  | { readonly ok: true; readonly lease: Lease }
  | { readonly ok: false; readonly holder: LeaseInfo; readonly reason: string };

export const DEFAULT_LEASE_MS = 2000;
export const MAX_LEASE_MS = 60_000;
export const MIN_LEASE_MS = 50;

/** A held lease. `release()` or `using` frees it; `renew()` extends it. */
export class Lease implements Disposable {
  readonly #authority: Authority;
  constructor(
    authority: Authority,
    readonly id: string,
  ) {
    this.#authority = authority;
  }
  get info(): LeaseInfo | null {
    const h = this.#authority.holder();
    return h && h.id === this.id ? h : null;
  }
  renew(leaseMs?: number): boolean {
    return this.#authority.renew(this.id, leaseMs);
  }
  release(): void {
    this.#authority.release(this.id);
  }
  [Symbol.dispose](): void {
    this.release();
  }
}

export interface AuthorityEvents {
  acquired: [LeaseInfo];
  released: [LeaseInfo, "released" | "expired" | "revoked"];
}

export class Authority extends EventEmitter<AuthorityEvents> {
  readonly #clock: Clock;
  #holder: LeaseInfo | null = null;

  constructor(clock: Clock) {
    super();
    this.#clock = clock;
  }

  /** The current holder, or null. Expires an overdue lease as a side effect. */
  holder(): LeaseInfo | null {
    const h = this.#holder;
    if (h && this.#clock.nowMs() >= h.expiresAtMs) {
      this.#holder = null;
      this.emit("released", h, "expired");
      return null;
    }
    return h;
  }

  acquire(owner: string, source: LeaseSource, leaseMs = DEFAULT_LEASE_MS): AcquireResult {
    const ms = clampLease(leaseMs);
    const current = this.holder();
    if (current) {
      return {
        ok: false,
        holder: current,
        reason: `control is held by ${current.owner} (${current.source}) until ${new Date(current.expiresAtEpochMs).toISOString()}`,
      };
    }
    const now = this.#clock.nowMs();
    const info: LeaseInfo = {
      id: randomUUID(),
      owner,
      source,
      acquiredAtMs: now,
      expiresAtMs: now + ms,
      expiresAtEpochMs: this.#clock.epochMs() + ms,
    };
    this.#holder = info;
    this.emit("acquired", info);
    return { ok: true, lease: new Lease(this, info.id) };
  }

  /** True while `id` holds control (cheap; safe on the perform side). */
  isHeld(id: string | undefined | null): boolean {
    if (!id) return false;
    const h = this.holder();
    return h !== null && h.id === id;
  }

  renew(id: string, leaseMs = DEFAULT_LEASE_MS): boolean {
    const h = this.holder();
    if (!h || h.id !== id) return false;
    const ms = clampLease(leaseMs);
    this.#holder = { ...h, expiresAtMs: this.#clock.nowMs() + ms, expiresAtEpochMs: this.#clock.epochMs() + ms };
    return true;
  }

  release(id: string): boolean {
    const h = this.#holder;
    if (!h || h.id !== id) return false;
    this.#holder = null;
    this.emit("released", h, "released");
    return true;
  }

  /** Take control away from whoever holds it (emergency stop, shutdown). */
  revoke(): void {
    const h = this.#holder;
    if (!h) return;
    this.#holder = null;
    this.emit("released", h, "revoked");
  }
}

function clampLease(ms: number): number {
  if (!Number.isFinite(ms)) return DEFAULT_LEASE_MS;
  return Math.min(MAX_LEASE_MS, Math.max(MIN_LEASE_MS, ms));
}
