/**
 * The P7 state crossing threads (layout: src/bodies/p7/layout.ts): the arm's three models and the
 * link status, published by the P7 core after every cycle, mirrored by its host.
 */
import { type LinkStatus, linkStatusText } from "../bodies/link.js";
import { linkCodeOf } from "./codes.js";
import { P7_FLAG, P7_SCALAR, P7_STATE_LAYOUT } from "../bodies/p7/layout.js";
import type { P7State } from "../bodies/p7/state.js";
import { layoutBytes } from "./layout.js";
import { type StateBinding, StateChannel } from "./state-channel.js";

/** What crosses: the state and the link status (P7Robot has both; so has its host's mirror). */
export interface P7Mirror {
  readonly state: P7State;
  link: LinkStatus;
}

export const P7_STATE_BYTES = layoutBytes(P7_STATE_LAYOUT);

export const P7_BINDING: StateBinding<P7Mirror, typeof P7_STATE_LAYOUT> = {
  layout: P7_STATE_LAYOUT,
  arrays: ({ state: s }) => ({
    angles: s.angles,
    velocities: s.velocities,
    efforts: s.efforts,
    temperatures: s.temperatures,
    errorIds: s.errorIds,
    angularVelocity: s.angularVelocity,
    linearAcceleration: s.linearAcceleration,
    simWorld: s.simWorld,
    simContacts: s.simContacts,
  }),
  write(v, m) {
    const s = m.state;
    const c = v.scalars;
    c[P7_SCALAR.seq] = s.seq;
    c[P7_SCALAR.timestampMs] = s.timestampMs;
    c[P7_SCALAR.epochMs] = s.epochMs;
    const f = v.flags;
    f[P7_FLAG.jointValid] = s.jointValid ? 1 : 0;
    f[P7_FLAG.motorValid] = s.motorValid ? 1 : 0;
    f[P7_FLAG.imuValid] = s.imuValid ? 1 : 0;
    f[P7_FLAG.link] = linkCodeOf(m.link);
  },
  read(v, m) {
    const s = m.state;
    const c = v.scalars;
    s.seq = c[P7_SCALAR.seq]!;
    s.timestampMs = c[P7_SCALAR.timestampMs]!;
    s.epochMs = c[P7_SCALAR.epochMs]!;
    const f = v.flags;
    s.jointValid = f[P7_FLAG.jointValid] === 1;
    s.motorValid = f[P7_FLAG.motorValid] === 1;
    s.imuValid = f[P7_FLAG.imuValid] === 1;
    m.link = linkStatusText(f[P7_FLAG.link]!);
  },
};

export function p7StateChannel(buffer: SharedArrayBuffer, start: number, words: Int32Array, index: number): StateChannel<P7Mirror, typeof P7_STATE_LAYOUT> {
  return new StateChannel(P7_BINDING, buffer, start, words, index);
}
