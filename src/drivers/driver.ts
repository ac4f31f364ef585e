/**
 * The one body seam (ros2_control's hardware component, HULKs' hardware-interface traits): every
 * body reaches its hardware or simulator through a {@link BodyDriver}, and one lifecycle wrapper
 * (src/rt/lifecycle.ts) owns the transitions, the cycle and its timing, so every body starts,
 * stops, restarts and fails the same way.
 *
 * The driver does the link and nothing else: no leases, no safety ramps, no servers. Those are the
 * body core's (the runtime object's) job; the wrapper calls the core between `read` and `write`.
 *
 * One cycle, run by the wrapper (perform side: nothing here may allocate in steady state):
 *
 *   read(now, state)    newest complete data since the last read into `state` (the chest board's
 *                       answer that completed between cycles, LoLA's latest sensor message …)
 *   core.update(now)    arbitrate: lease, safety ramps, commands → the command object
 *   write(now, command) send it (may complete later: USB)
 *   read(now, state)    whatever completed synchronously (a simulator answers inside `write`)
 *
 * A read or write that fails for link reasons returns a code (counted, the core ramps to safe); a
 * driver that THROWS is broken: the wrapper takes the body to its safe state, stops the cycle and
 * reports the error (state "unconfigured", `lastError`); `start()` may configure it again.
 */

import type { CyclePacer } from "../runtime/loop.js";

/** What a read found (codes shared by every body; a body may add its own codes from 16 up). */
export const IO = {
  /** Nothing new since the last read (an exchange still in flight, no message yet). */
  None: 0,
  /** New data was written into the state. */
  Fresh: 1,
  /** The link failed this time (details in the body's own code, see `lastErrorText`). */
  Failed: 2,
  /** write: the previous transfer is still in flight; nothing was sent. */
  Busy: 3,
  /** write: sent (or started). */
  Sent: 4,
} as const;
export type IoCode = number;

export interface BodyDriver<S, C> {
  /** "sim", "usb", "ws://192.168.4.1:5621" …, for logs and health. */
  readonly name: string;
  /**
   * A link with its own clock (an upstream LoLA sends one message per 12 ms) paces the loop: each
   * cycle starts when the device has something, and the loop's clock takes over when it has
   * nothing (runtime/loop.ts). Absent: the loop's clock alone.
   */
  readonly pacer?: CyclePacer;
  /** Open the link and read what the body is (preferences, handshake). Allocates; throws a BodylinkError saying what to change. */
  configure(): Promise<void>;
  /** From now on the cycle runs (start streaming, first poll). */
  activate(): Promise<void>;
  /** Perform side: newest complete data into `into`. Returns an {@link IO} code (or a body's own). */
  read(nowMs: number, into: S): IoCode;
  /** Perform side: send `command`. Returns IO.Sent, IO.Busy or a failure code. */
  write(nowMs: number, command: C): IoCode;
  /** Put the body in its safe state (NAO: a last frame at stiffness 0; arm: hold; quadruped: velocity 0). Best effort, never throws. */
  deactivate(): Promise<void>;
  /** Release the link (configure may open it again). Idempotent. */
  close(): Promise<void>;
}
