// npx bodylink serve --body tny360   (then)   npx tsx examples/tny360.ts
import WebSocket from "ws";
import { ApiError, connect } from "bodylink/client";

/** One line with the error's code (docs/errors.md) instead of a stack trace, and exit status 1. */
function fail(e: unknown): void {
  console.error(`tny-example: ${e instanceof ApiError ? `${e.message} [${e.code}]` : String(e)}`);
  process.exitCode = 1;
}

// Where the runtime is: --url URL, else $BODYLINK_URL, else the default port on this machine.
const urlAt = process.argv.indexOf("--url");
const url = (urlAt > 0 ? process.argv[urlAt + 1] : undefined) ?? process.env.BODYLINK_URL ?? "http://127.0.0.1:8780";
// No runtime there, or one of another body: one line.
const dog = await connect(url, { WebSocket, expectBody: "tny360", owner: "tny-example" }).catch((e: unknown) => {
  fail(e);
  process.exit();
});
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
try {
  await dog.waitForMessage(); // the first state (a real TNY-360's is never complete: no efforts)
  await using control = await dog.acquireControl({ leaseMs: 1000 });
  const { estimatedS } = await dog.tny360.smoothEnable();
  console.log(`TNY-360: standing up, about ${estimatedS.toFixed(1)} s (lease ${control.id.slice(0, 8)}…)`);
  await dog.tny360.setGait("Walk");
  // Walk forward for one second; a velocity must be renewed within 500 ms or it decays to zero.
  for (let i = 0; i < 5; i++) {
    await dog.tny360.setVelocity({ xMS: 0.05, yMS: 0, yawRadS: 0 });
    await sleep(200);
  }
  await dog.tny360.setVelocity({ xMS: 0, yMS: 0, yawRadS: 0 });
  const s = dog.tny360.getBodyState(); // typed as the TNY-360's message
  if (s) console.log(`odometry x ${s.odometry.x.toFixed(3)} m, paws grounded: ${s.paws.grounded.join(", ")}`);
} catch (e) {
  fail(e);
} finally {
  await dog.close();
}
