/**
 * Type test for the SDK's per-body facets (src/client/facets/): `npm run lint` type-checks this
 * file (tsconfig includes test/), and every `@ts-expect-error` below must be an error, or tsc
 * fails ("unused @ts-expect-error"). Never run; test/api/sdk-facets.test.ts checks that this file
 * keeps its expectations. Adding a body: add its lines here too.
 */
import { type BodyClient, type BodyFacets, type BodylinkClient, connect, type RobotClient } from "../../src/client/index.js";
import type { BodyKind, PerBody } from "../../src/bodies/registry.js";

declare const url: string;

export async function narrowedOnBody(): Promise<void> {
  const c = await connect(url);
  // Before narrowing, no body's facet is there.
  // @ts-expect-error nao facet before narrowing on client.body
  void c.nao;
  // @ts-expect-error p7 facet before narrowing on client.body
  void c.p7;
  if (c.body === "nao") {
    await c.nao.setLeds({ chest: [1, 0, 0] });
    await c.nao.setJointTargets({ stiffness: new Array(26).fill(0.5) });
    await c.nao.setJointTargets({ positions: { HeadYaw: 0.5, RHipYawPitch: -0.2 }, stiffness: { HeadYaw: 0.8 } });
    c.nao.getJoints()?.RHipYawPitch.positionRad.toFixed(3);
    // @ts-expect-error not a NAO joint (names are NAOqi's)
    await c.nao.setJointTargets({ positions: { HeadRoll: 0.1 } });
    // @ts-expect-error not a NAO joint
    void c.nao.getJoints()?.Tail;
    c.nao.getBatteryState()?.charge.toFixed(2);
    // @ts-expect-error a NAO client has no P7 facet
    void c.p7;
    // @ts-expect-error the NAO facet has no P7 command
    await c.nao.moveJoints([0, 0, 0, 0, 0, 0, 0]);
    // @ts-expect-error LED groups are the NAO's eight
    await c.nao.setLeds({ antenna: [1] });
  } else if (c.body === "p7") {
    await c.p7.moveJoints([0, 0, 0, 0, 0, 0, 0], { speedRadS: 1 });
    // @ts-expect-error setLeds on a P7 client (the client has no flat body methods)
    await c.setLeds({ chest: [1, 0, 0] });
    // @ts-expect-error the P7 facet has no setLeds
    await c.p7.setLeds({ chest: [1, 0, 0] });
    // @ts-expect-error a P7 client has no NAO facet
    await c.nao.setLeds({ chest: [1, 0, 0] });
    // @ts-expect-error no flat setJointTargets (it was NAO and TNY-360 only, and is gone)
    await c.setJointTargets({ positions: [0] });
  } else {
    // exhaustive: the only body left is the TNY-360
    const k: "tny360" = c.body;
    void k;
    await c.tny360.setGait("Walk");
    // @ts-expect-error the TNY-360's gaits are Creep, Walk, Run
    await c.tny360.setGait("Jog");
    // @ts-expect-error the TNY-360 facet's joint targets have no stiffness
    await c.tny360.setJointTargets({ positions: [0], stiffness: [1] });
    // @ts-expect-error a TNY-360 client has no NAO facet
    void c.nao;
  }
}

export async function chosenByExpectBody(): Promise<void> {
  const arm = await connect(url, { expectBody: "p7" });
  const body: "p7" = arm.body;
  void body;
  await arm.p7.servoJoints([0, 0, 0, 0, 0, 0, 0]);
  // @ts-expect-error the flat methods are gone: the facet has it (arm.p7.moveJoints)
  await arm.moveJoints([0, 0, 0, 0, 0, 0, 0]);
  // @ts-expect-error setLeds on a P7 client
  await arm.setLeds({ chest: [1] });
  // @ts-expect-error getBatteryState is the NAO facet's
  arm.getBatteryState();
  const dog = await connect(url, { expectBody: "tny360" });
  await dog.tny360.setVelocity({ xMS: 0.1, yMS: 0, yawRadS: 0 });
  await dog.tny360.smoothEnable();
  // @ts-expect-error no flat smoothEnable (each body's facet has its own)
  await dog.smoothEnable();
  // @ts-expect-error moveJoints is the P7's
  await dog.moveJoints([0]);
  // Waiting for the first state, complete or not, without hand-writing once("state").
  const s = await dog.waitForState((st) => st.joints.angles.length === 14, { timeoutMs: 1000 });
  const m = await dog.waitForMessage();
  void [s.seq, m.body];
}

export async function flatMethodsAreGone(): Promise<void> {
  // Code written before the facets: a client that is not narrowed has none of the flat body methods.
  const robot = await connect(url);
  // @ts-expect-error removed at 0.1.0: robot.nao.setJointTargets / robot.tny360.setJointTargets
  await robot.setJointTargets({ positions: [0] });
  // @ts-expect-error removed at 0.1.0: robot.nao.setLeds
  await robot.setLeds({ chest: [1] });
  // @ts-expect-error removed at 0.1.0: robot.p7.moveJoints
  await robot.moveJoints([0]);
  // @ts-expect-error removed at 0.1.0: robot.nao.getBatteryState
  robot.getBatteryState();
  // Every connected client is a BodylinkClient.
  const wide: BodylinkClient = robot;
  const narrow: BodylinkClient = await connect(url, { expectBody: "nao" });
  void wide;
  void narrow;
  // @ts-expect-error the wide class type shows no facet (only a narrowed client does)
  void wide.nao;
}

// The tables are keyed by the registry: a table with a body missing, or an extra one, does not compile.
type Facets = PerBody<{ nao: 1; p7: 2; tny360: 3 }>;
// @ts-expect-error a per-body table without tny360
type Missing = PerBody<{ nao: 1; p7: 2 }>;
// @ts-expect-error a per-body table with a body the registry does not have
type Extra = PerBody<{ nao: 1; p7: 2; tny360: 3; hexapod: 4 }>;
export type Used = [Facets, Missing, Extra, keyof BodyFacets extends BodyKind ? true : never, BodyClient<"nao">, RobotClient];
