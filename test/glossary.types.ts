/**
 * docs/glossary.md, checked by the compiler (`npm run lint` runs tsc over test/): every robot's
 * `driver` is its body seam (a BodyDriver), the TNY-360's protocol client is its `remote`, a robot
 * plugs into the lifecycle as a CycleRobot, and `link` on a state or health is the link's word.
 * Each @ts-expect-error line fails the lint if the old, contradicting name comes back.
 */
import type { LinkStatus } from "../src/bodies/link.js";
import type { BodyDriver } from "../src/drivers/driver.js";
import type { RemoteTny360 } from "../src/runtime/tny360-remote.js";
import type { CycleRobot } from "../src/rt/lifecycle.js";
import type { NaoRobot } from "../src/runtime/nao-robot.js";
import type { P7Robot } from "../src/runtime/p7-robot.js";
import type { RobotHealth } from "../src/runtime/robot.js";
import type { Tny360Robot } from "../src/runtime/tny360-robot.js";

type Is<T, U extends T> = U;
type Driver = BodyDriver<never, never>;

export type DriversAreTheSeam = [Is<Driver, NaoRobot["driver"]>, Is<Driver, P7Robot["driver"]>, Is<Driver, Tny360Robot["driver"]>];
export type RemoteIsTheTnyClient = Is<RemoteTny360 | null, Tny360Robot["remote"]>;
export type RobotsPlugIntoTheLifecycle = [
  Is<CycleRobot<NaoRobot["state"], NaoRobot["output"]>, NaoRobot>,
  Is<CycleRobot<P7Robot["state"], P7Robot["output"]>, P7Robot>,
  Is<CycleRobot<Tny360Robot["state"], Tny360Robot["output"]>, Tny360Robot>,
];
export type LinkIsTheWord = [Is<LinkStatus, RobotHealth["link"]>, Is<LinkStatus, P7Robot["link"]>];

declare const tny: Tny360Robot;
// @ts-expect-error the TNY-360's driver is `driver`, not `link` (the old, contradicting name)
void tny.link;

declare const p7: P7Robot;
// @ts-expect-error the P7's command goes through the driver's `write` (P7Commands), not a side method
void p7.driver.moveTo;
// @ts-expect-error the P7's command goes through the driver's `write` (P7Commands), not a side method
void p7.driver.servo;
