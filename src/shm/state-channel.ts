/**
 * A body's state crossing threads, built from its layout table: the core publishes its state after
 * every cycle into the shared region under a seqlock; a host copies the newest consistent state
 * into its own state object. The body gives the copy both ways (`write`: state → views, `read`:
 * views → state) over the typed views its table builds; the channel does the locking. Allocation-
 * free on both sides as long as the body's copies are.
 */
import { buildViews, type ShmField, type ShmViews } from "./layout.js";
import { SeqLock } from "./seqlock.js";

export interface StateBinding<S, L extends readonly ShmField[]> {
  readonly layout: L;
  /** Core side: the state into the views (inside the seqlock's write). */
  write(views: ShmViews<L>, state: S): void;
  /** Host side: the views into `into` (may run more than once per read: the seqlock retries a torn copy). */
  read(views: ShmViews<L>, into: S): void;
}

export class StateChannel<S, L extends readonly ShmField[]> {
  readonly views: ShmViews<L>;
  readonly lock: SeqLock;
  readonly #binding: StateBinding<S, L>;
  readonly #copyIn: () => void;
  #into: S | null = null;

  /** `words[index]` is the seqlock's sequence; the state lives in `buffer` from `start`. */
  constructor(binding: StateBinding<S, L>, buffer: SharedArrayBuffer, start: number, words: Int32Array, index: number) {
    this.#binding = binding;
    this.views = buildViews(binding.layout, buffer, start);
    this.lock = new SeqLock(words, index);
    this.#copyIn = () => binding.read(this.views, this.#into!); // bound once: a read allocates no closure
  }

  /** Core side, after a cycle. Never waits. */
  publish(state: S): void {
    this.lock.begin();
    this.#binding.write(this.views, state);
    this.lock.end();
  }

  /** Host side: copy the newest consistent state into `into`. False when the core was mid-write on every try. */
  readInto(into: S): boolean {
    this.#into = into;
    return this.lock.read(this.#copyIn);
  }
}
