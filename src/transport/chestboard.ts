/**
 * The one interface a chest-board link goes through: three USB primitives (bulk OUT on EP1,
 * vendor IN control requests, bulk IN on EP1), completion by callback.
 *
 * Callbacks, not promises: the simulator completes synchronously inside the call (so a simulated
 * cycle allocates nothing), the USB transport completes later from libusb's thread. The exchange
 * state machine in chestboard-link.ts handles both.
 *
 * A result ≥ 0 is the number of bytes transferred; negative results are the codes below.
 */

export const TRANSFER_TIMEOUT = -1;
export const TRANSFER_ERROR = -2;
/** The device is gone (unplugged, powered off). */
export const TRANSFER_NO_DEVICE = -3;

export type TransferDone = (result: number) => void;

export interface ChestboardTransport {
  /** "sim", "usb", … for logs and `health`. */
  readonly name: string;
  /** Bulk OUT on EP1: send `data[0, length)`. */
  bulkOut(data: Uint8Array, length: number, timeoutMs: number, done: TransferDone): void;
  /** Vendor IN control request `request`, reading up to `length` bytes into `into`. */
  vendorIn(request: number, into: Uint8Array, length: number, done: TransferDone): void;
  /** Bulk IN on EP1 into `into` (up to its length). */
  bulkIn(into: Uint8Array, timeoutMs: number, done: TransferDone): void;
  /** Release the device. */
  close(): Promise<void>;
}

export function transferResultText(r: number): string {
  if (r >= 0) return `${r} bytes`;
  if (r === TRANSFER_TIMEOUT) return "timed out";
  if (r === TRANSFER_NO_DEVICE) return "device gone";
  return "transfer error";
}
