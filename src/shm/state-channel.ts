/**
 * A body's state crossing threads, built from its layout table: the core publishes its state after
 * every cycle into the shared region under a seqlock; a host copies the newest consistent state
 * into its own state object. The body names which of its typed arrays go to which table field
 * (`arrays`: copied both ways by the channel) and copies the rest itself (`write`: state → views,
 * `read`: views → state: scalars, flags, codes); the channel does the locking. Allocation-free on
 * both sides as long as the body's copies are (the array pairs are resolved once per state object).
 */
import { buildViews, type ShmField, type ShmViews } from "./layout.js";
import { SeqLock } from "./seqlock.js";

type Typed = Float64Array | Float32Array | Uint32Array | Int32Array | Uint8Array;

export interface StateBinding<S, L extends readonly ShmField[]> {
  readonly layout: L;
  /** The state's typed arrays, by the name of the table field each is copied to (same element type and length). */
  arrays(state: S): { readonly [K in L[number]["name"]]?: Typed };
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
  // the array pairs of the last state object seen (a state's arrays never change identity)
  #pairsOf: S | null = null;
  #mine: Typed[] = [];
  #theirs: Typed[] = [];

  /** `words[index]` is the seqlock's sequence; the state lives in `buffer` from `start`. */
  constructor(binding: StateBinding<S, L>, buffer: SharedArrayBuffer, start: number, words: Int32Array, index: number) {
    this.#binding = binding;
    this.views = buildViews(binding.layout, buffer, start);
    this.lock = new SeqLock(words, index);
    // bound once: a read allocates no closure
    this.#copyIn = () => {
      const into = this.#into!;
      const mine = this.#mine;
      const theirs = this.#theirs;
      for (let i = 0; i < mine.length; i++) mine[i]!.set(theirs[i]!);
      binding.read(this.views, into);
    };
  }

  /** The state's arrays and their views, in the same order (prepare side: once per state object). */
  #pair(state: S): void {
    if (this.#pairsOf === state) return;
    const arrays = this.#binding.arrays(state) as Record<string, Typed | undefined>;
    const views = this.views as unknown as Record<string, Typed>;
    this.#mine = [];
    this.#theirs = [];
    for (const [name, a] of Object.entries(arrays)) {
      const v = views[name];
      if (!a || !v || v.length !== a.length || v.BYTES_PER_ELEMENT !== a.BYTES_PER_ELEMENT) throw new RangeError(`state array ${name} does not match its layout field`);
      this.#mine.push(a);
      this.#theirs.push(v);
    }
    this.#pairsOf = state;
  }

  /** Core side, after a cycle. Never waits. */
  publish(state: S): void {
    this.#pair(state);
    const mine = this.#mine;
    const theirs = this.#theirs;
    this.lock.begin();
    for (let i = 0; i < mine.length; i++) theirs[i]!.set(mine[i]!);
    this.#binding.write(this.views, state);
    this.lock.end();
  }

  /** Host side: copy the newest consistent state into `into`. False when the core was mid-write on every try. */
  readInto(into: S): boolean {
    this.#pair(into);
    this.#into = into;
    return this.lock.read(this.#copyIn);
  }
}
