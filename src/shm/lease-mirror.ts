/**
 * The control lease as the real-time core's Authority holds it, mirrored for the host thread
 * (layout: LEASE_MIRROR_LAYOUT in src/bodies/nao/layout.ts) under a seqlock: the core publishes
 * after every change (acquire, renew, release, expiry, revoke), the host reads it without asking
 * the core, so "who holds control" and the lease check before a body is read never wait for the
 * core. The id and owner texts are rewritten only when the generation changes (a LoLA client's
 * renewal on every frame rewrites four numbers).
 */
import { LEASE_MIRROR_LAYOUT } from "./control-layout.js";
import { buildViews, layoutBytes, type ShmViews } from "./layout.js";
import { SeqLock } from "./seqlock.js";

export const LEASE_MIRROR_BYTES = layoutBytes(LEASE_MIRROR_LAYOUT);

/** Lease sources as codes (index + 1; 0: none); the same words as the Authority's LeaseSource. */
export const LEASE_SOURCES = ["api", "lola", "tny", "cli", "fleet"] as const;

/** A lease as it crosses (structurally the Authority's LeaseInfo: shm/ imports no runtime code). */
export interface MirroredLease {
  readonly id: string;
  readonly owner: string;
  readonly source: (typeof LEASE_SOURCES)[number];
  readonly acquiredAtMs: number;
  readonly expiresAtMs: number;
  readonly expiresAtCycle: number;
  readonly expiresAtEpochMs: number;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export class LeaseMirror {
  readonly views: ShmViews<typeof LEASE_MIRROR_LAYOUT>;
  readonly lock: SeqLock;
  #textGen = -1;
  // host side: the last MirroredLease built, reused while nothing changed
  #seenSeq = -1;
  #info: MirroredLease | null = null;
  #gen = 0;

  constructor(buffer: SharedArrayBuffer, start: number, words: Int32Array, index: number) {
    this.views = buildViews(LEASE_MIRROR_LAYOUT, buffer, start);
    // Nobody waits on the mirror (the host reads it when asked): no notify per renewal.
    this.lock = new SeqLock(words, index, "never");
  }

  /** Core side: publish the holder (or none) under `generation`. */
  publish(h: MirroredLease | null, generation: number): void {
    const v = this.views;
    this.lock.begin();
    v.header[0] = generation;
    if (h === null) v.header[1] = 0;
    else {
      v.header[1] = 1;
      v.times[0] = h.acquiredAtMs;
      v.times[1] = h.expiresAtMs;
      v.times[2] = h.expiresAtCycle;
      v.times[3] = h.expiresAtEpochMs;
      if (this.#textGen !== generation) {
        this.#textGen = generation;
        v.header[2] = LEASE_SOURCES.indexOf(h.source) + 1;
        v.header[3] = encoder.encodeInto(h.id, v.id).written;
        v.header[4] = encoder.encodeInto(h.owner, v.owner).written;
      }
    }
    this.lock.end();
  }

  /** Host side: the holder the core published last, and its generation in `gen[0]`. */
  read(gen?: Int32Array): MirroredLease | null {
    const seq = this.lock.sequence;
    if (seq === this.#seenSeq) {
      if (gen) gen[0] = this.#gen;
      return this.#info;
    }
    const v = this.views;
    let info: MirroredLease | null = null;
    let g = 0;
    const ok = this.lock.read(() => {
      g = v.header[0]!;
      if (v.header[1] === 0) {
        info = null;
        return;
      }
      info = {
        id: decoder.decode(v.id.slice(0, v.header[3]!)),
        owner: decoder.decode(v.owner.slice(0, v.header[4]!)),
        source: LEASE_SOURCES[v.header[2]! - 1] ?? "api",
        acquiredAtMs: v.times[0]!,
        expiresAtMs: v.times[1]!,
        expiresAtCycle: v.times[2]!,
        expiresAtEpochMs: v.times[3]!,
      };
    }, 64);
    if (!ok) return this.#info; // the core was mid-write every time: the previous copy
    this.#seenSeq = seq;
    this.#info = info;
    this.#gen = g;
    if (gen) gen[0] = g;
    return info;
  }
}
