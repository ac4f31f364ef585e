/** The AIRBOT P7's serve entry: the simulated arm's core in its worker (src/rt/p7-worker.ts). */
import { P7Host } from "../../host/p7-host.js";
import { type BodyEntry, coreOptions } from "./entry.js";

export const P7_ENTRY: BodyEntry = {
  async start({ o, recordRing, estopSocket }) {
    const h = await P7Host.start({ ...coreOptions(o), estopSocket, ...(recordRing ? { recordRing } : {}) });
    return {
      robot: h,
      host: h,
      inThreadRobot: null,
      transport: "sim",
      lolaPath: null,
      tnyUrl: null,
      lines: ["p7: simulated AIRBOT P7 arm (7 joints, 250 Hz); real-time core in its own thread"],
      closers: [() => h.shutdown()],
    };
  },
};
