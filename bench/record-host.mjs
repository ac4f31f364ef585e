// The record bench's child (bench/record.bench.ts forks it with no node flags, as `bodylink serve`
// runs: V8's default young generation, so the GC counts are serve's): one phase of one body's
// worker core from dist/, with or without a recording, measured in the core's own thread. Plain
// JS so that no loader runs in it or in its workers. Argument: the phase as JSON; answer over IPC.
import { P7Host } from "../dist/host/p7-host.js";
import { Tny360Host } from "../dist/host/tny360-host.js";
import { RECORD_RING_BYTES, Recorder } from "../dist/record/recorder.js";
import { RecordTap } from "../dist/record/tap.js";
import { ByteRing } from "../dist/shm/ring.js";

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const { body, recording, phaseS, allocCycles, file } = JSON.parse(process.argv[2]);

async function phase() {
  const ring = recording ? ByteRing.create(RECORD_RING_BYTES) : null;
  const rec = ring ? { recordRing: ring.sab } : {};
  const host = body === "p7" ? await P7Host.start({ seed: 1, gcEveryMs: 100, ...rec }) : await Tny360Host.start({ seed: 1, remote: null, server: null, gcEveryMs: 100, ...rec });
  let recorder = null;
  try {
    if (ring) recorder = await Recorder.start({ tap: new RecordTap(ByteRing.create(RECORD_RING_BYTES), host.clock), robot: host, transport: "sim", core: ring }, { path: file });
    await sleep(1500); // settle, and let the JIT optimize the taps (interpreted, a double field's load boxes its number)
    const h0 = await host.health();
    const c0 = host.cycles;
    await sleep(phaseS * 1000);
    const h1 = await host.health({ windowCycles: host.cycles - c0 });
    const p = recorder?.progress();
    const alloc = await host.measureAllocation(allocCycles);
    let recordingBytes = 0;
    let eventBytes = 0;
    const recordingSites = [];
    let sampledCycles = 0;
    if (recording) {
      const profile = await host.allocationSites(allocCycles, 128, 1000);
      sampledCycles = profile.cycles;
      for (const s of profile.sites) {
        if (!/\/(record|shm)\//.test(s.site)) continue;
        // tap.bytes → ring.write carries only the events here (no TNY-360 client: no API frames)
        if (/^(event|lateCycles|bytes) |^write \(.*ring\.js/.test(s.site)) eventBytes += s.bytes;
        else {
          recordingBytes += s.bytes;
          recordingSites.push(`${s.site}: ${s.bytes} B`);
        }
      }
    }
    return {
      recording,
      cycles: h1.cycle.windowCycles,
      jitter: h1.cycle.jitterP99Ms,
      exec: h1.cycle.execMs.p99,
      late: h1.cycle.lateCycles - h0.cycle.lateCycles,
      gc: h1.cycle.core.gcCollections - h0.cycle.core.gcCollections,
      dropped: p?.dropped ?? 0,
      mbPerMin: p?.mbPerMin ?? 0,
      heapPerCycle: alloc.heapBytes / Math.max(1, alloc.cycles),
      recordingBytes,
      recordingSites,
      eventBytes,
      sampledCycles,
    };
  } finally {
    await recorder?.stop();
    await host.shutdown();
  }
}

phase().then(
  (value) => process.send({ ok: true, value }, () => process.exit(0)),
  (e) => process.send({ ok: false, error: String(e?.stack ?? e) }, () => process.exit(1)),
);
