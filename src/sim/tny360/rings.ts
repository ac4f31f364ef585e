/**
 * The robot's two rings as the firmware keeps them: 32 log lines (`Log.hpp`) and 32 error events
 * (`ERROR_MAX_EVENTS`, `Error.hpp`). Used by the simulator; allocates one record per entry (prepare
 * side: entries are rare, not per cycle).
 */
import { ERROR_RING_SIZE, LOG_RING_SIZE, type LogLevelCode } from "../../wire/tny/constants.js";
import type { ErrorEvent } from "../../wire/tny/types.js";

export interface LogLine {
  readonly timestampMs: number;
  readonly level: LogLevelCode;
  readonly indent: number;
  readonly tag: string;
  readonly message: string;
}

/** Longest message kept (bytes are ASCII here); replies stay small. */
const MAX_TEXT = 200;

export class LogRing {
  readonly #lines: LogLine[] = [];
  get count(): number {
    return this.#lines.length;
  }
  add(timestampMs: number, level: LogLevelCode, tag: string, message: string, indent = 0): void {
    if (this.#lines.length === LOG_RING_SIZE) this.#lines.shift();
    this.#lines.push({ timestampMs: Math.max(0, Math.floor(timestampMs)) >>> 0, level, indent, tag: tag.slice(0, 32), message: message.slice(0, MAX_TEXT) });
  }
  /** Index 0 = oldest line. */
  at(index: number): LogLine | undefined {
    return this.#lines[index];
  }
  clear(): void {
    this.#lines.length = 0;
  }
}

export class ErrorRing {
  readonly #events: ErrorEvent[] = [];
  #nextId = 1;
  get count(): number {
    return this.#events.length;
  }
  /** Record an event; returns it. `errorId` is 0xMMSSCCVV. */
  add(timestampMs: number, errorId: number, payload: ArrayLike<number> = []): ErrorEvent {
    const ev: ErrorEvent = {
      timestampMs: Math.max(0, Math.floor(timestampMs)) >>> 0,
      eventId: this.#nextId,
      module: (errorId >>> 24) & 0xff,
      subsystem: (errorId >>> 16) & 0xff,
      code: (errorId >>> 8) & 0xff,
      severity: errorId & 0xff,
      payload: Uint8Array.from(payload).subarray(0, 32),
    };
    this.#nextId = (this.#nextId + 1) & 0xffff || 1; // u16 ids, 0 never used
    if (this.#events.length === ERROR_RING_SIZE) this.#events.shift();
    this.#events.push(ev);
    return ev;
  }
  /** Index 0 = most recent event. */
  at(index: number): ErrorEvent | undefined {
    return this.#events[this.#events.length - 1 - index];
  }
  byId(eventId: number): ErrorEvent | undefined {
    return this.#events.find((e) => e.eventId === eventId);
  }
  latest(): ErrorEvent | undefined {
    return this.#events[this.#events.length - 1];
  }
  clear(): void {
    this.#events.length = 0;
  }
}
