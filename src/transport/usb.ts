/**
 * The real chest board over USB, with the `usb` package (v2, libusb bundled, legacy API).
 * The native addon is imported lazily inside {@link openUsbChestboard}, so the simulator, the tests
 * and the browser SDK never load it. This machine's kernel has no USB: the adapter below is tested
 * through the ChestboardTransport interface with a device object of the same shape.
 *
 * Transfers: bulk OUT/IN on EP1 with per-call timeouts; vendor IN control requests
 * (bmRequestType 0xc0: device-to-host, vendor, device).
 */
import { BodylinkError } from "../errors.js";
import { USB } from "../wire/chestboard/constants.js";
import { type ChestboardTransport, TRANSFER_ERROR, TRANSFER_NO_DEVICE, TRANSFER_TIMEOUT, type TransferDone } from "./chestboard.js";

/** libusb error numbers the transport maps (libusb.h). */
const LIBUSB_ERROR_TIMEOUT = -7;
const LIBUSB_ERROR_NO_DEVICE = -4;
/** bmRequestType for a vendor request, device to host. */
const VENDOR_IN = 0xc0;

type UsbCallback = (error: { errno?: number } | undefined | null, data?: Buffer) => void;

/** The parts of `usb`'s legacy InEndpoint/OutEndpoint/Device the transport uses. */
export interface UsbEndpointLike {
  readonly address: number;
  readonly direction: "in" | "out";
  timeout: number;
  transfer(dataOrLength: Buffer | number, callback: UsbCallback): unknown;
}
export interface UsbInterfaceLike {
  readonly endpoints: readonly UsbEndpointLike[];
  claim(): void;
  release(closeEndpoints: boolean, callback: (error?: unknown) => void): void;
  isKernelDriverActive?(): boolean;
  detachKernelDriver?(): void;
}
export interface UsbDeviceLike {
  readonly deviceDescriptor: { readonly idVendor: number; readonly idProduct: number };
  open(): void;
  close(): void;
  interface(n: number): UsbInterfaceLike;
  controlTransfer(bmRequestType: number, bRequest: number, wValue: number, wIndex: number, length: number, callback: UsbCallback): unknown;
}

function resultOf(error: { errno?: number } | undefined | null): number {
  if (!error) return 0;
  if (error.errno === LIBUSB_ERROR_TIMEOUT) return TRANSFER_TIMEOUT;
  if (error.errno === LIBUSB_ERROR_NO_DEVICE) return TRANSFER_NO_DEVICE;
  return TRANSFER_ERROR;
}

export class UsbChestboard implements ChestboardTransport {
  readonly name = "usb";
  readonly #device: UsbDeviceLike;
  readonly #iface: UsbInterfaceLike;
  readonly #out: UsbEndpointLike;
  readonly #in: UsbEndpointLike;
  #closed = false;

  /** Wrap an opened-or-not device: opens it, claims interface 0 and finds EP1 OUT and IN. */
  constructor(device: UsbDeviceLike) {
    this.#device = device;
    device.open();
    this.#iface = device.interface(0);
    if (this.#iface.isKernelDriverActive?.()) this.#iface.detachKernelDriver?.();
    this.#iface.claim();
    const out = this.#iface.endpoints.find((e) => e.address === USB.EP_OUT && e.direction === "out");
    const inp = this.#iface.endpoints.find((e) => e.address === USB.EP_IN && e.direction === "in");
    if (!out || !inp) throw new BodylinkError("BL_ERR_LINK_NO_DEVICE");
    this.#out = out;
    this.#in = inp;
  }

  bulkOut(data: Uint8Array, length: number, timeoutMs: number, done: TransferDone): void {
    if (this.#closed) return done(TRANSFER_NO_DEVICE);
    this.#out.timeout = timeoutMs;
    // NOTE: a Buffer view over the caller's bytes, not a copy (node-usb keeps a reference until done).
    this.#out.transfer(Buffer.from(data.buffer, data.byteOffset, length), (err) => done(err ? resultOf(err) : length));
  }

  vendorIn(request: number, into: Uint8Array, length: number, done: TransferDone): void {
    if (this.#closed) return done(TRANSFER_NO_DEVICE);
    this.#device.controlTransfer(VENDOR_IN, request, 0, 0, length, (err, buf) => {
      if (err || !buf) return done(err ? resultOf(err) : TRANSFER_ERROR);
      const n = Math.min(buf.length, into.length);
      into.set(buf.subarray(0, n));
      done(n);
    });
  }

  bulkIn(into: Uint8Array, timeoutMs: number, done: TransferDone): void {
    if (this.#closed) return done(TRANSFER_NO_DEVICE);
    this.#in.timeout = timeoutMs;
    this.#in.transfer(Math.min(into.length, USB.BULK_IN_MAX_BYTES), (err, buf) => {
      if (err || !buf) return done(err ? resultOf(err) : TRANSFER_ERROR);
      const n = Math.min(buf.length, into.length);
      into.set(buf.subarray(0, n));
      done(n);
    });
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await new Promise<void>((resolve) => this.#iface.release(true, () => resolve()));
    try {
      this.#device.close();
    } catch {
      // Already gone (unplugged): nothing left to release.
    }
  }
}

/** What `openUsbChestboard` needs from the `usb` module (injectable for tests). */
export interface UsbModuleLike {
  findByIds(vid: number, pid: number): UsbDeviceLike | undefined;
  getDeviceList(): UsbDeviceLike[];
}

/**
 * Find the chest board (vendor id 0xffff) and open it. Loads the `usb` addon on first use.
 * Throws BL_ERR_LINK_NO_DEVICE with one clear line when there is none (as on this machine).
 */
export async function openUsbChestboard(opts: { vendorId?: number; load?: () => Promise<UsbModuleLike> } = {}): Promise<UsbChestboard> {
  const vendorId = opts.vendorId ?? USB.VENDOR_ID;
  let mod: UsbModuleLike;
  try {
    mod = opts.load ? await opts.load() : ((await import("usb")) as unknown as UsbModuleLike);
  } catch (e) {
    throw new BodylinkError("BL_ERR_LINK_USB_UNAVAILABLE", (e as Error).message);
  }
  const device = mod.getDeviceList().find((d) => d.deviceDescriptor.idVendor === vendorId);
  if (!device) throw new BodylinkError("BL_ERR_LINK_NO_DEVICE");
  return new UsbChestboard(device);
}
