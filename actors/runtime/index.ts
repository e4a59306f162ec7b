/**
 * The actor runtime: define an actor, run it. What a message looks like on the wire, how it
 * is published or requested, dead letters and stream statistics are contracts with the
 * ingress and the CLI, in shared/platform/streams/.
 */
export {
  type Actor,
  type ActorDefinition,
  type ActorOptions,
  type BaseDeps,
  backoffMs,
  claimTiming,
  type CompiledSchema,
  compileSchema,
  DEFAULTS,
  defineActor,
  type Handler,
  type Helpers,
  type RunDeps,
  resolveStreams,
  type StreamSelector,
} from "./define.js";
export { describeError, isRetryable, PermanentError, RetryableError } from "./errors.js";
export { type Every, type EveryOptions, every } from "./every.js";
export type { CounterKind, StreamCounters } from "./metrics.js";
export type { Delivery, Outcome } from "./process-message.js";
export { type ActorHandle, type ActorMetrics, runActor, type StopResult, type StreamMetrics } from "./runner.js";
