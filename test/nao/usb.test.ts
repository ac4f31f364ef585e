import { execFileSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { NaoRobot } from "../../src/runtime/nao-robot.js";
import { SimChestboard } from "../../src/sim/nao/chestboard.js";
import { TRANSFER_TIMEOUT } from "../../src/transport/chestboard.js";
import { openUsbChestboard, UsbChestboard, type UsbDeviceLike, type UsbEndpointLike } from "../../src/transport/usb.js";
import { USB } from "../../src/wire/chestboard/constants.js";

/**
 * A device with node-usb's legacy shape whose far end is the simulated chest board, completing
 * every transfer asynchronously as libusb does. (This kernel has no USB, so no real device exists.)
 */
function simulatedUsbDevice(sim: SimChestboard) {
  const calls: string[] = [];
  const later = (f: () => void) => setImmediate(f);
  const out: UsbEndpointLike = {
    address: USB.EP_OUT,
    direction: "out",
    timeout: 0,
    transfer(data, cb) {
      const b = data as Buffer;
      calls.push(`out ${b.length} t=${out.timeout}`);
      sim.bulkOut(new Uint8Array(b), b.length, out.timeout, (r) => later(() => cb(r < 0 ? { errno: -1 } : undefined)));
    },
  };
  const inp: UsbEndpointLike = {
    address: USB.EP_IN,
    direction: "in",
    timeout: 0,
    transfer(length, cb) {
      calls.push(`in ${length as number} t=${inp.timeout}`);
      const into = new Uint8Array(length as number);
      sim.bulkIn(into, inp.timeout, (r) => later(() => (r === TRANSFER_TIMEOUT ? cb({ errno: -7 }) : r < 0 ? cb({ errno: -1 }) : cb(undefined, Buffer.from(into.subarray(0, r))))));
    },
  };
  let opened = false;
  let claimed = false;
  const device: UsbDeviceLike = {
    deviceDescriptor: { idVendor: 0xffff, idProduct: 0x0001 },
    open: () => {
      opened = true;
    },
    close: () => {
      opened = false;
    },
    interface: () => ({
      endpoints: [out, inp],
      claim: () => {
        claimed = true;
      },
      release: (_c, cb) => {
        claimed = false;
        cb();
      },
    }),
    controlTransfer(type, req, _v, _i, length, cb) {
      calls.push(`control 0x${type.toString(16)} 0x${req.toString(16)} ${length}`);
      const into = new Uint8Array(length);
      sim.vendorIn(req, into, length, (r) => later(() => (r < 0 ? cb({ errno: -1 }) : cb(undefined, Buffer.from(into.subarray(0, r))))));
    },
  };
  return { device, calls, state: () => ({ opened, claimed }) };
}

describe("USB transport", () => {
  it("runs the NAO runtime over asynchronous node-usb-shaped transfers", async () => {
    const sim = new SimChestboard();
    const usb = simulatedUsbDevice(sim);
    const transport = new UsbChestboard(usb.device);
    expect(usb.state()).toEqual({ opened: true, claimed: true });
    const robot = await NaoRobot.create({ transport });
    await robot.start();
    // cycles over the simulated USB link (a loaded machine runs them later, not fewer)
    await expect.poll(() => robot.state.seq, { timeout: 10_000 }).toBeGreaterThan(5);
    expect(robot.state.link).toBe("ok");
    expect(Math.hypot(...robot.state.accelerometer)).toBeGreaterThan(9);
    expect(usb.calls).toContain("control 0xc0 0x14 5");
    expect(usb.calls.some((c) => c.startsWith("in 512 t=20"))).toBe(true);
    expect(usb.calls.some((c) => /^out \d+ t=20$/.test(c))).toBe(true);
    await robot.stop();
    expect(usb.state()).toEqual({ opened: false, claimed: false });
    expect(robot.state.link).toBe("stopped");
  });
  it("maps a libusb timeout to a status request, as the exchange requires", async () => {
    const sim = new SimChestboard();
    const usb = simulatedUsbDevice(sim);
    const transport = new UsbChestboard(usb.device);
    // Nothing was sent, so the simulated board has no answer ready: libusb reports a timeout.
    const r = await new Promise<number>((resolve) => transport.bulkIn(new Uint8Array(512), 20, resolve));
    expect(r).toBe(TRANSFER_TIMEOUT);
  });
  it("fails with one clear line when no chest board is present (this machine)", async () => {
    await expect(openUsbChestboard()).rejects.toThrow(/no chest board found \(USB vendor id 0xffff\)/);
    await expect(openUsbChestboard({ load: async () => ({ findByIds: () => undefined, getDeviceList: () => [] }) })).rejects.toMatchObject({ code: "BL_ERR_LINK_NO_DEVICE" });
  });
  it("the simulator path never loads the native usb addon", () => {
    const out = execFileSync(
      process.execPath,
      [
        "--import",
        "tsx",
        "-e",
        "const { NaoRobot } = await import('./src/runtime/nao-robot.ts'); const r = await NaoRobot.create(); await r.configure(); const { createRequire } = await import('node:module'); const c = createRequire(import.meta.url).cache; console.log(Object.keys(c).some((k) => k.includes('/node_modules/usb/')) ? 'loaded' : 'not loaded');",
      ],
      { cwd: process.cwd(), encoding: "utf8" },
    );
    expect(out.trim()).toBe("not loaded");
  });
});
