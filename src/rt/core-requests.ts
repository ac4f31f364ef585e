/**
 * The control half of the thread boundary as types: each core's requests are an interface (method
 * name → its arguments and answer) that the core's handlers implement (`Handlers`) and the host's
 * calls consume (`CoreLink.call<K extends keyof Q>`), so a request renamed or retyped on one side
 * is a compile error on the other. The data half (state, control words, mailboxes) is in layout
 * tables (core-shm.ts). What crosses is structured-cloned: plain data only; a refusal's
 * BodylinkError crosses as { code, status, message } and is rebuilt on the host (core-host.ts).
 */
import type { AllocationSample, AllocationSite } from "../runtime/allocation.js";
import type { AcquireResult, LeaseInfo, LeaseSource } from "../runtime/authority.js";
import type { EstopRequest, EstopResetRequest, EstopState } from "../runtime/estop.js";
import type { RobotHealth } from "../runtime/robot.js";
import type { LifecycleState, TransitionTiming } from "./lifecycle.js";

/** A request table: every member a function type (its arguments; its answer, or a promise of it). */
export type RequestTable<Q> = { [K in keyof Q]: (...args: never[]) => unknown };

/** The arguments of request `K`. */
export type RequestArgs<Q, K extends keyof Q> = Q[K] extends (...args: infer A) => unknown ? A : never;
/** The answer to request `K`, as the host receives it. */
export type RequestAnswer<Q, K extends keyof Q> = Q[K] extends (...args: never[]) => infer T ? Awaited<T> : never;

/** Every request's arguments, by name (what the handlers and the messages are mapped over). */
export type ArgsOf<Q> = { [K in keyof Q]: RequestArgs<Q, K> };

/** What a core implements for table `Q`: one handler per request, given the body's robot first. */
export type Handlers<R, Q> = { readonly [K in keyof Q]: (robot: R, ...args: ArgsOf<Q>[K]) => RequestAnswer<Q, K> | Promise<RequestAnswer<Q, K>> };

/** One request as it crosses (host → core); `K` narrows it to some requests (the dispatcher's correlation). */
export type CallMessage<Q, K extends keyof Q = keyof Q> = { [P in K]: { readonly type: "call"; readonly id: number; readonly method: P; readonly args: ArgsOf<Q>[P] } }[K];

/** Run one request on its handler: the message's name picks the handler its arguments were typed by. */
export function dispatch<R, Q, K extends keyof Q>(handlers: Handlers<R, Q>, robot: R, m: CallMessage<Q, K>): RequestAnswer<Q, K> | Promise<RequestAnswer<Q, K>> {
  return handlers[m.method](robot, ...m.args);
}

/** The lifecycle of a core as the host reads it. */
export interface CoreLifecycle {
  readonly state: LifecycleState;
  readonly lastError: string | null;
  readonly driverErrors: number;
  readonly running: boolean;
  readonly timing: TransitionTiming;
}

/** The driver faults a test can switch on (CoreBaseOptions.testFaults). */
export interface DriverFaults {
  read: boolean;
  write: boolean;
}

/** An acquire as it crosses: the lease's id, not the lease (the host builds its handle over the mirror). */
export type AcquireAnswer = { readonly ok: true; readonly id: string } | Exclude<AcquireResult, { ok: true }>;

/** The requests every core answers (core-worker.ts), whatever its body. */
export interface CommonRequests {
  acquire(owner: string, source: LeaseSource, leaseMs: number): AcquireAnswer;
  renew(id: string, leaseMs: number): boolean;
  release(id: string): boolean;
  revoke(): void;
  holder(): LeaseInfo | null;
  isHeld(id: string): boolean;
  estopState(): EstopState;
  estop(req: EstopRequest): EstopState;
  resetEstop(req: EstopResetRequest): EstopState;
  /** JSON has no undefined: null asks for the whole ring. */
  health(windowCycles: number | null): RobotHealth;
  start(): void;
  stop(): void;
  lifecycle(): CoreLifecycle;
  settled(): void;
  finalize(): void;
  /** What the core's thread allocates per cycle, and where (runtime/allocation.ts): benches, tests, diagnosis. */
  allocation(cycles: number): AllocationSample;
  allocationSites(cycles: number, intervalBytes: number, top: number): { cycles: number; sites: AllocationSite[]; totalBytes: number };
  /** Test hook (a core started with testStalls): block the core's thread for `ms`, or until the file `releasePath` exists. */
  testStall(ms: number, releasePath?: string): boolean;
  /** Test hook (a core started with testFaults): the driver throws in read and/or write until told otherwise. */
  testFault(f: DriverFaults): boolean;
  /** Test hook (a core started with testFaults): the core's thread throws, uncaught, on its next turn (a core that dies). */
  testCrash(): boolean;
}

/** Request names that only a core started for tests answers (CoreBaseOptions.testStalls / testFaults). */
export function isTestRequest(method: PropertyKey): boolean {
  return typeof method === "string" && method.startsWith("test");
}
