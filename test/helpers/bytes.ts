/** Tiny builders for golden vectors, one field per line (mcap testUtils style). */
export const u8 = (v: number): number[] => [v & 0xff];
export const u16le = (v: number): number[] => [v & 0xff, (v >> 8) & 0xff];
export const u32le = (v: number): number[] => [v & 0xff, (v >>> 8) & 0xff, (v >>> 16) & 0xff, (v >>> 24) & 0xff];
export const bytes = (...parts: number[][]): Uint8Array => Uint8Array.from(parts.flat());
