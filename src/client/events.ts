/**
 * A tiny typed event emitter (browser-safe: no node:events). A listener that throws does not stop
 * the others; its error is re-emitted as "error" (or rethrown asynchronously if nobody listens).
 */
export class Emitter<E extends { [K in keyof E]: unknown }> {
  readonly #listeners = new Map<keyof E, Set<(payload: never) => void>>();

  /** Listen to `type`; returns a function that removes the listener. */
  on<K extends keyof E>(type: K, listener: (payload: E[K]) => void): () => void {
    let set = this.#listeners.get(type);
    if (!set) {
      set = new Set();
      this.#listeners.set(type, set);
    }
    set.add(listener as (payload: never) => void);
    return () => {
      set.delete(listener as (payload: never) => void);
    };
  }

  /** Listen to the next `type` only. */
  once<K extends keyof E>(type: K, listener: (payload: E[K]) => void): () => void {
    const off = this.on(type, (p) => {
      off();
      listener(p);
    });
    return off;
  }

  listenerCount(type: keyof E): number {
    return this.#listeners.get(type)?.size ?? 0;
  }

  protected emit<K extends keyof E>(type: K, payload: E[K]): void {
    const set = this.#listeners.get(type);
    if (!set || set.size === 0) return;
    for (const l of [...set]) {
      try {
        (l as (p: E[K]) => void)(payload);
      } catch (err) {
        if (type !== "error" && this.listenerCount("error" as keyof E) > 0) this.emit("error" as K, err as E[K]);
        else
          setTimeout(() => {
            throw err;
          }, 0);
      }
    }
  }
}
