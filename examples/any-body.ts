// npx bodylink serve [--body p7 | --body tny360]   (then)   npx tsx examples/any-body.ts
import WebSocket from "ws";
import { ApiError, connect } from "bodylink/client";

/** One line with the error's code (docs/errors.md) instead of a stack trace, and exit status 1. */
function fail(e: unknown): void {
  console.error(`any-body: ${e instanceof ApiError ? `${e.message} [${e.code}]` : String(e)}`);
  process.exitCode = 1;
}

// Where the runtime is: --url URL, else $BODYLINK_URL, else the default port on this machine.
const urlAt = process.argv.indexOf("--url");
const url = (urlAt > 0 ? process.argv[urlAt + 1] : undefined) ?? process.env.BODYLINK_URL ?? "http://127.0.0.1:8780";
const robot = await connect(url, { WebSocket, owner: "any-body" }).catch((e: unknown) => {
  fail(e);
  process.exit();
});
try {
  await robot.waitForMessage(); // the first state, complete or not
  await using control = await robot.acquireControl({ leaseMs: 1000 });
  const lease = `lease ${control.id.slice(0, 8)}…`;
  // The server's hello chose the body; narrowing on it gives that body's facet, and only that one.
  if (robot.body === "nao") {
    const r = await robot.nao.setLeds({ chest: [0, 0, 1] });
    console.log(`NAO: ${r.applied.join(", ")} LEDs set, battery ${Math.round((robot.nao.getBatteryState()?.charge ?? 0) * 100)} % (${lease})`);
  } else if (robot.body === "p7") {
    const { etaS } = await robot.p7.moveJoints([0, 0.2, 0, -0.4, 0, 0, 0]);
    console.log(`P7: moving, about ${etaS.toFixed(2)} s (${lease})`);
  } else {
    await robot.tny360.setGait("Creep");
    console.log(`TNY-360: gait Creep (${lease})`);
  }
} catch (e) {
  fail(e);
} finally {
  await robot.close();
}
