// The core-gc bench's child (bench/core-gc.bench.ts forks it with no node flags, as `bodylink
// serve` runs): hosts one body's worker cores from dist/, one per gcEveryMs it is given, and
// answers the bench's requests over IPC. Plain JS so that no loader runs in it or in its workers.
import { NaoHost } from "../dist/host/nao-host.js";
import { P7Host } from "../dist/host/p7-host.js";
import { Tny360Host } from "../dist/host/tny360-host.js";

const hosts = new Map();
const tnyServer = { host: "127.0.0.1", port: 0, fallbackToFreePort: false, token: null, allowHosts: [], allowOrigins: [] };

async function start(body, gcEveryMs, lolaPath) {
  if (body === "nao") return NaoHost.start({ seed: 1, usb: false, acceptBoardVersions: [11], gcEveryMs, lola: lolaPath ? { path: lolaPath, fallbackPath: null, readers: 0, graceMs: 100 } : null });
  if (body === "p7") return P7Host.start({ seed: 1, gcEveryMs });
  return Tny360Host.start({ seed: 1, remote: null, gcEveryMs, server: tnyServer });
}

process.on("message", async (m) => {
  try {
    let value = null;
    if (m.type === "start") {
      const h = await start(m.body, m.gcEveryMs, m.lolaPath ?? null);
      hosts.set(m.key, h);
      value = { periodMs: h.periodMs, tnyPort: h.tnyPort ?? null, lolaPath: h.lolaPath ?? null };
    } else if (m.type === "measure") value = await hosts.get(m.key).measureAllocation(m.cycles);
    else if (m.type === "sites") value = await hosts.get(m.key).allocationSites(m.cycles, 128, 8);
    else if (m.type === "health") {
      const h = await hosts.get(m.key).health();
      value = { v8: h.cycle.core.gcCollections, scheduled: h.cycle.gc.collections, byKind: h.cycle.core.gcByKind ?? {} };
    } else if (m.type === "stop") {
      for (const h of hosts.values()) await h.shutdown();
      hosts.clear();
    }
    process.send({ id: m.id, ok: true, value });
  } catch (e) {
    process.send({ id: m.id, ok: false, error: String(e?.stack ?? e) });
  }
});
process.send({ ready: true });
