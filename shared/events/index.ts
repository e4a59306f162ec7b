/**
 * Events: the event feed and its outbox, the events stream, SIEM destinations (table, stream
 * contracts, target parsing, syslog format) and webhooks.
 *
 * The room's public surface: routes, actors, ops/ and other rooms import this file only
 * (ops/lint.mjs, docs/architecture.md); files inside the room import each other by path.
 */
export {
  claimOutbox,
  deleteEventsBefore,
  deleteOutbox,
  type EventRow,
  type EventType,
  eventView,
  feedPage,
  insertEvent,
  isEventType,
  listenOutbox,
  unlistenOutbox,
} from "./db/events.js";
export {
  allDestinations,
  deleteDestination,
  destinationById,
  countDestinations,
  existingDestinationIds,
  findDestination,
  insertDestination,
  listDestinations,
  recordDelivered,
  recordFailure,
  SIEM_KINDS,
  type SiemDestinationRow,
  type SiemKind,
  tokenAad,
} from "./db/siem.js";
export {
  type AttemptOutcome,
  claimDeliveries,
  claimMail,
  countWebhooks,
  deleteWebhook,
  deliveriesOf,
  type DeliveryJob,
  enqueueDeliveries,
  findWebhook,
  insertWebhook,
  listWebhooks,
  nextWebhookId,
  recordAttempt,
  webhookSecretAad,
} from "./db/webhooks.js";
export {
  admitSiemTest,
  appendToDestinations,
  type DestinationMessage,
  destinationMessageSchema,
  destinationOfStream,
  destinationStreamName,
  SIEM_GROUP,
  SIEM_TEST_STREAM,
  SIEM_TESTS_OUTSTANDING,
  siemTestDone,
  type SiemTestEvent,
  type SiemTestReply,
  siemTestReplySchema,
  type SiemTestRequest,
  siemPutBack,
  siemTestSchema,
} from "./siem-stream.js";
export {
  type EventOf,
  type EventPayloads,
  type EventView,
  type FindingEventType,
  type FindingEventView,
  type FindingExtra,
  type FindingFields,
  isEventOf,
  isFindingEvent,
  type Owner,
  type RegressionChange,
  type RiskFields,
} from "./payloads.js";
export { parseTarget, type SiemTarget } from "./siem-target.js";
export { type EventMessage, eventMessageSchema, EVENTS_STREAM, EVENTS_STREAM_MAX_LEN } from "./stream.js";
export { octetFrame, type SyslogEvent, syslogLine } from "./syslog.js";
export { eventsByIds, eventsToReplay } from "./db/siem.js";
