/**
 * `waitForState()` and `waitForMessage()`: the first value that satisfies a condition, now or from
 * the stream, bounded by a timeout, the caller's AbortSignal and the client's close. Browser-safe.
 */
import type { WaitForStateOptions } from "./options.js";
import { localError } from "./rest.js";

/** Where the values come from: the current one (or null), and a listener for the next ones. */
export interface WaitSource<T> {
  readonly url: string;
  /** What is waited for, in the timeout's message ("complete state"). */
  readonly what: string;
  current(): T | null;
  on(listener: (value: T) => void): () => void;
}

export const DEFAULT_WAIT_MS = 5000;

/** See `BodylinkClient.waitForState`. `closing` aborts with the client's own close error. */
export function waitFor<T>(from: WaitSource<T>, until: ((value: T) => boolean) | undefined, opts: WaitForStateOptions, closing: AbortSignal): Promise<T> {
  const signals = opts.signal ? [closing, opts.signal] : [closing];
  const aborted = signals.find((s) => s.aborted);
  if (aborted) return Promise.reject(aborted.reason);
  try {
    const first = from.current();
    if (first !== null && (!until || until(first))) return Promise.resolve(first);
  } catch (e) {
    return Promise.reject(e);
  }
  const timeoutMs = opts.timeoutMs ?? DEFAULT_WAIT_MS;
  return new Promise<T>((resolve, reject) => {
    const end = (): void => {
      off();
      clearTimeout(timer);
      for (const s of signals) s.removeEventListener("abort", onAbort);
    };
    const fail = (e: unknown): void => {
      end();
      reject(e);
    };
    function onAbort(this: AbortSignal): void {
      fail(this.reason);
    }
    const off = from.on((value) => {
      let ok: boolean;
      try {
        ok = !until || until(value);
      } catch (e) {
        fail(e);
        return;
      }
      if (ok) {
        end();
        resolve(value);
      }
    });
    const timer = setTimeout(() => fail(localError("BL_ERR_CLIENT_NO_STATE", until ? `${from.what} matching the condition` : from.what, from.url, timeoutMs)), timeoutMs);
    for (const s of signals) s.addEventListener("abort", onAbort, { once: true });
  });
}
