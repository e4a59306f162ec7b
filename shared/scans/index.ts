/**
 * Scans: stored scans and their findings, the scan schedule, rechecks, an organisation's
 * domains and their DNS TXT proof, and the scan stream contract.
 *
 * The room's public surface: routes, actors, ops/ and other rooms import this file only
 * (ops/lint.mjs, docs/architecture.md); files inside the room import each other by path.
 */
export {
  countDomains,
  type DomainRow,
  findDomain,
  insertDomain,
  listDomains,
  markVerified,
  orgOfVerifiedDomain,
  txtRecord,
  verifiedDomains,
} from "./db/domains.js";
export { claimDueScans, pruneSchedule, scheduleDomain, unscheduledDomains } from "./db/monitor.js";
export { insertRecheck } from "./db/rechecks.js";
export {
  acknowledgementsOf,
  type AckRow,
  findingsOf,
  insertScan,
  jobStored,
  latestGrades,
  latestScans,
  previousScan,
  scanById,
  scanHistory,
  type ScanKind,
  type ScanRow,
  type SectionInput,
  type StoredFinding,
} from "./db/scans.js";
export { lookupTxt } from "./dns-txt.js";
export {
  type RecheckReply,
  recheckReplySchema,
  SCAN_STREAM,
  type ScanJob,
  scanJobSchema,
  type ScanReply,
  scanReplySchema,
} from "./stream.js";
