// npx bodylink serve   (then, in another terminal)   npx tsx examples/nao.ts
import WebSocket from "ws"; // Node 20; browsers and Node ≥ 22 have a global WebSocket
import { ApiError, connect } from "bodylink/client";

/** One line with the error's code (docs/errors.md) instead of a stack trace, and exit status 1. */
function fail(e: unknown): void {
  console.error(`nao-example: ${e instanceof ApiError ? `${e.message} [${e.code}]` : String(e)}`);
  process.exitCode = 1;
}

// Where the runtime is: --url URL, else $BODYLINK_URL, else the default port on this machine.
const urlAt = process.argv.indexOf("--url");
const url = (urlAt > 0 ? process.argv[urlAt + 1] : undefined) ?? process.env.BODYLINK_URL ?? "http://127.0.0.1:8780";
// No runtime there, or one of another body: one line.
const robot = await connect(url, { WebSocket, expectBody: "nao", owner: "nao-example" }).catch((e: unknown) => {
  fail(e);
  process.exit();
});
try {
  // The first complete state (getters return null until one has arrived).
  await robot.waitForState();
  const battery = robot.nao.getBatteryState();
  console.log(`NAO: battery ${Math.round((battery?.charge ?? 0) * 100)} %, ${battery?.charging ? "charging" : "discharging"}`);
  console.log(`head yaw ${robot.nao.getJoints()?.HeadYaw.positionRad.toFixed(3)} rad, head supply ${robot.nao.getHeadState()?.voltageV.toFixed(1)} V`);

  const control = await robot.acquireControl({ leaseMs: 1000 }); // refused while another client holds it
  try {
    const { estimatedS } = await robot.nao.smoothEnable();
    console.log(`standing up, about ${estimatedS.toFixed(1)} s`);
    // Joints by name (look left); the joints not named hold where they are (docs/api.md).
    const r = await robot.nao.setJointTargets({ positions: { HeadYaw: 0.5 }, stiffness: new Array(26).fill(0.6) });
    console.log(`applied ${r.applied.join(" and ")}, ${r.clamped.length} values clamped to their limits`);
  } finally {
    await control.release(); // nobody holds control: the NAO ramps stiffness to 0
  }
} catch (e) {
  fail(e);
} finally {
  await robot.close();
}
