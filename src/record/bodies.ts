/**
 * What the recorder does per body: one entry per registered body (`RECORDER_BODIES`, typed by the
 * registry: a body without one does not compile), so the recorder itself never asks which body it
 * records. An entry gets the runtime (an in-thread robot, or a threaded core's host) and says:
 * its per-cycle state record (channel and decoder; the NAO's state goes as frames and NaoState),
 * how an in-thread robot's state goes into the tap each cycle (a threaded core records its own),
 * what it adds when the recording starts (the NAO's handshake, an in-thread P7's commands) and the
 * events its state changes make (the NAO's link and safety), and its cycle count.
 */
import type { BodyKind } from "../bodies/registry.js";
import type { NaoRobot } from "../runtime/nao-robot.js";
import type { P7Robot } from "../runtime/p7-robot.js";
import type { BodyRuntime } from "../runtime/robot.js";
import type { CycleListener, CycleLoop } from "../runtime/loop.js";
import { type P7Mirror, p7StateDecoder, type StateRecordDecoder, type Tny360Mirror, tny360StateDecoder } from "./body-state-record.js";
import { RING_CHANNEL } from "./channels.js";
import type { RecordTap } from "./tap.js";

/** The runtime a recording is taken from: its `loop` when its core runs on this thread. */
export type RecordedRuntime = BodyRuntime & { readonly loop?: CycleLoop; onCycle(listener: CycleListener): () => void };

/** Records a runtime event (type, text, fields) in order with the frames. */
export type RecordEvent = (type: string, text: string, extra?: Record<string, unknown>) => void;

export interface RecordedBody {
  /** The body's per-cycle state record in the ring (channel and decoder), or null (the NAO: frames and NaoState). */
  readonly stateRecord: { readonly ring: number; readonly decode: StateRecordDecoder } | null;
  /** The runtime's cycle count (a threaded core's: as its host mirrors it). */
  cycleSeq(): number;
  /** When the recording starts: events to record, subscriptions to undo at the end. */
  attach(event: RecordEvent): Array<() => void>;
  /** Perform side, after every cycle: an in-thread robot's state into the tap, events on a change. */
  cycle(event: RecordEvent): void;
  /** The body's identity for each file's metadata (the NAO's body id and version from its preferences). */
  metadata(): ReadonlyArray<readonly [string, string]>;
}

/** Builds a body's entry for one recording; `inThread`: the core runs on the recorder's thread. */
export type RecorderBody = (robot: RecordedRuntime, tap: RecordTap, inThread: boolean) => RecordedBody;

/** The cycle count of a threaded core's host (CoreHost.cycles), or an in-thread robot's loop. */
function cycles(robot: RecordedRuntime, inThread: boolean): number {
  return inThread ? robot.loop!.seq : ((robot as { readonly cycles?: number }).cycles ?? 0);
}

/** A P7 or TNY-360: its state in its shared-memory layout, one ring record per cycle. */
function layoutBody(robot: RecordedRuntime, inThread: boolean, stateRecord: RecordedBody["stateRecord"], tapState: (seq: number) => void, attach: () => Array<() => void> = () => []): RecordedBody {
  return {
    stateRecord,
    cycleSeq: () => cycles(robot, inThread),
    attach,
    cycle: () => {
      if (inThread) tapState(robot.loop!.seq);
    },
    metadata: () => [],
  };
}

export const RECORDER_BODIES: { readonly [K in BodyKind]: RecorderBody } = {
  nao(robot, tap, inThread) {
    // the in-thread NaoRobot or a NaoHost: both have the state, boards and prefs read here
    const nao = robot as unknown as Pick<NaoRobot, "state" | "boards" | "prefs">;
    let lastLink = "";
    let lastSafety: string | null = null;
    return {
      stateRecord: null,
      cycleSeq: () => (inThread ? robot.loop!.seq : nao.state.seq),
      attach(event) {
        const boards = nao.boards;
        const ok = boards.filter((b) => b.accepted).length;
        event("handshake", `${ok}/${boards.length} motor boards started`, {
          boards: boards.map((b) => ({ name: b.name, accepted: b.accepted, reason: b.reason, version: b.configVersion, serial: b.serial })),
        });
        return [];
      },
      cycle(event) {
        const s = nao.state;
        if (inThread) tap.naoState(s); // a threaded core records its own, every cycle
        if (s.link !== lastLink) {
          const from = lastLink;
          lastLink = s.link;
          if (from) event("link", `body link ${from} → ${s.link}`, { from, to: s.link });
        }
        if (s.safetyReason !== lastSafety) {
          lastSafety = s.safetyReason;
          event("safety", s.safetyReason ? `stiffness ramps to 0: ${s.safetyReason}` : "commands flow normally", { reason: s.safetyReason });
        }
      },
      metadata: () =>
        nao.prefs
          ? [
              ["body_id", nao.prefs.bodyId],
              ["body_version", nao.prefs.bodyVersion],
            ]
          : [],
    };
  },
  p7: (robot, tap, inThread) =>
    layoutBody(
      robot,
      inThread,
      { ring: RING_CHANNEL.p7State, decode: p7StateDecoder() },
      (seq) => tap.p7State(seq, robot as unknown as P7Mirror),
      () => {
        if (!inThread) return [];
        // a core on this thread: the commands it takes (a threaded core records its own)
        const p7 = robot as unknown as P7Robot;
        return [p7.onCommand((kind, targets, speeds, joint) => tap.p7Command(p7.loop.seq, kind, targets, speeds, joint))];
      },
    ),
  tny360: (robot, tap, inThread) =>
    layoutBody(robot, inThread, { ring: RING_CHANNEL.tny360State, decode: tny360StateDecoder((robot as unknown as { source: "sim" | "remote" }).source) }, (seq) =>
      tap.tny360State(seq, robot as unknown as Tny360Mirror),
    ),
};

/** A runtime of no registered body (a test's fake): nothing of its own is recorded. */
export const UNKNOWN_BODY: RecorderBody = (robot, _tap, inThread) => ({
  stateRecord: null,
  cycleSeq: () => cycles(robot, inThread),
  attach: () => [],
  cycle: () => {},
  metadata: () => [],
});
