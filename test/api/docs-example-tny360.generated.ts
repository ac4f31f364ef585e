// npx bodylink serve --body tny360   (then)   npx tsx tny-example.ts
import WebSocket from "ws";
import { connect } from "../../src/client/index.js";

const url = process.env.BODYLINK_URL ?? "http://127.0.0.1:8780";
const dog = await connect(url, { WebSocket, expectBody: "tny360", owner: "tny-example" });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
try {
  await new Promise((resolve) => dog.once("message", resolve));
  await using control = await dog.acquireControl({ leaseMs: 1000 });
  const { estimatedS } = await dog.smoothEnable();
  console.log(`TNY-360: standing up, about ${estimatedS.toFixed(1)} s (lease ${control.id.slice(0, 8)}…)`);
  await dog.setGait("Walk");
  // Walk forward for one second; a velocity must be renewed within 500 ms or it decays to zero.
  for (let i = 0; i < 5; i++) {
    await dog.setVelocity({ xMS: 0.05, yMS: 0, yawRadS: 0 });
    await sleep(200);
  }
  await dog.setVelocity({ xMS: 0, yMS: 0, yawRadS: 0 });
  const s = dog.getBodyState();
  if (s?.body === "tny360") console.log(`odometry x ${s.odometry.x.toFixed(3)} m, paws grounded: ${s.paws.grounded.join(", ")}`);
} finally {
  await dog.close();
}
