/**
 * Layout tables → typed views over one SharedArrayBuffer. A body's table (e.g.
 * src/bodies/nao/layout.ts) names each field, its element type and count; `layoutBytes` sizes the
 * region and `buildViews` makes one typed array per field, each aligned to its element size. The
 * views are made once (prepare side); reading and writing them allocates nothing.
 */
export type ShmType = "f64" | "f32" | "u32" | "i32" | "u8";

export interface ShmField {
  readonly name: string;
  readonly type: ShmType;
  readonly count: number;
}

const CTOR = { f64: Float64Array, f32: Float32Array, u32: Uint32Array, i32: Int32Array, u8: Uint8Array } as const;
type ViewOf<T extends ShmType> = InstanceType<(typeof CTOR)[T]>;

export type ShmViews<L extends readonly ShmField[]> = { readonly [F in L[number] as F["name"]]: ViewOf<F["type"]> };

/** Byte offset of every field, in table order, and the total size (a multiple of 8). */
export function layoutOffsets(layout: readonly ShmField[], start = 0): { offsets: number[]; end: number } {
  let at = start;
  const offsets: number[] = [];
  for (const f of layout) {
    const size = CTOR[f.type].BYTES_PER_ELEMENT;
    at = Math.ceil(at / size) * size;
    offsets.push(at);
    at += size * f.count;
  }
  return { offsets, end: Math.ceil(at / 8) * 8 };
}

export function layoutBytes(layout: readonly ShmField[]): number {
  return layoutOffsets(layout).end;
}

/** One typed view per field over `buffer` from byte `start`. */
export function buildViews<L extends readonly ShmField[]>(layout: L, buffer: SharedArrayBuffer, start = 0): ShmViews<L> {
  const { offsets, end } = layoutOffsets(layout, start);
  if (end > buffer.byteLength) throw new RangeError(`layout needs ${end} bytes from ${start}, the buffer has ${buffer.byteLength}`);
  // Object.fromEntries, not keyed stores into `{}`: past some number of properties added by computed
  // name (18 stayed fast here, 23 did not) V8 switches an object to dictionary mode, and every
  // `views.position` on the cycle (the NAO state has 23 fields) became a hash lookup in an IC stub.
  return Object.fromEntries(layout.map((f, i) => [f.name, new (CTOR[f.type] as Float64ArrayConstructor)(buffer as unknown as ArrayBuffer, offsets[i]!, f.count)])) as ShmViews<L>;
}
