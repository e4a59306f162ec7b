/** The actor runtime: define an actor, run it, publish to it, inspect its streams. */
export { type DeadLetter, type DeadLetterInput, type DeadReason, countDeadLetters, deleteDeadLetters, listDeadLetters, moveToDeadLetters, retryAllDeadLetters, retryDeadLetters } from "./dead-letters.js";
export { type Actor, type ActorDefinition, type ActorOptions, type BaseDeps, backoffMs, DEFAULTS, defineActor, type Handler, type Helpers, type RunDeps, resolveStreams, type StreamSelector } from "./define.js";
export { describeError, isRetryable, PermanentError, RequestTimeoutError, RetryableError } from "./errors.js";
export { type Every, type EveryOptions, every } from "./every.js";
export type { CounterKind, StreamCounters } from "./metrics.js";
export { registerStream, registeredStreams } from "./stream-registry.js";
export { DEFAULT_MAX_LEN, decodeFields, encodeFields, FIELD_DATA, FIELD_GROUP, FIELD_REPLY_TO, type PublishOptions, publish } from "./messages.js";
export type { Delivery, Outcome } from "./process-message.js";
export { type RequestOptions, request, sendReply } from "./request-reply.js";
export { type ActorHandle, type ActorMetrics, runActor, type StopResult, type StreamMetrics } from "./runner.js";
export { type GroupStats, LAG_SCAN_CAP, type StreamStats, streamStats } from "./stats.js";
