// npx bodylink serve --body p7   (then)   npx tsx examples/p7.ts
import WebSocket from "ws";
import { ApiError, connect } from "bodylink/client";

/** One line with the error's code (docs/errors.md) instead of a stack trace, and exit status 1. */
function fail(e: unknown): void {
  console.error(`p7-example: ${e instanceof ApiError ? `${e.message} [${e.code}]` : String(e)}`);
  process.exitCode = 1;
}

// Where the runtime is: --url URL, else $BODYLINK_URL, else the default port on this machine.
const urlAt = process.argv.indexOf("--url");
const url = (urlAt > 0 ? process.argv[urlAt + 1] : undefined) ?? process.env.BODYLINK_URL ?? "http://127.0.0.1:8780";
// No runtime there, or one of another body: one line.
const arm = await connect(url, { WebSocket, expectBody: "p7", owner: "p7-example" }).catch((e: unknown) => {
  fail(e);
  process.exit();
});
try {
  await arm.waitForState(); // the first complete state
  const imu = arm.getImuState();
  console.log(`P7: gravity seen by the IMU ${Math.hypot(...(imu?.linearAcceleration ?? [0, 0, 0])).toFixed(2)} m/s²`);

  await using control = await arm.acquireControl({ leaseMs: 2000 }); // released at the end of the block
  const { etaS } = await arm.p7.moveJoints([0.3, -0.3, 0, -0.6, 0, 0.2, 0], { speedRadS: 1.5 });
  console.log(`moving, about ${etaS.toFixed(2)} s (lease ${control.id.slice(0, 8)}…)`);
  await new Promise((resolve) => setTimeout(resolve, etaS * 1000 + 300));

  const joints = arm.getJointState();
  const motors = arm.getMotorState();
  console.log(`joint 4 at ${joints?.angles[3]?.toFixed(3)} rad, effort ${joints?.efforts[3]?.toFixed(2)} N·m`);
  if (motors?.errorIds.some((id) => id !== 0)) console.log(`motor errors: ${motors.errorIds.join(", ")}`);
} catch (e) {
  fail(e);
} finally {
  await arm.close();
}
