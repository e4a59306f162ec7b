/**
 * Verify: the enforcement chain (rules, the enforcer, the counting batch and its Lua script
 * in shared/platform/redis/lua/), the key and organisation snapshots, the usage stream contract,
 * and the tables of keys, installations, usage and content.
 *
 * The room's public surface: routes, actors, ops/ and other rooms import this file only
 * (ops/lint.mjs, docs/architecture.md); files inside the room import each other by path.
 */
export { evaluate, requestHost, RULES, type Rule, type RuleInput } from "./chain.js";
export { COUNTED_RULES, counts, scriptOutcome, type ScriptOutcome } from "./counting.js";
export { checkKeyKnown, checkKeySent } from "./existence.js";
export { allowanceCycle, effectiveEnd } from "./expiry.js";
export { hostOf } from "./domain.js";
export { createPreparer, prepare, type Prepared } from "./prepared.js";
export { scopesText } from "./scope.js";
export { PASS, type Ask, type CountryOf, type Verdict } from "./types.js";
export { countingCall, createCountingBatcher, type CountingBatcher, type CountingCall } from "./batch.js";
export {
  createEnforcer,
  type Enforced,
  type EnforceOptions,
  type EnforceRequest,
  type Enforcer,
  type EnforcerMetrics,
} from "./enforcer.js";
export { ENTITLEMENT_REUSE_S, type SignedTokens } from "./entitlements.js";
export {
  CONTENT_TYPES,
  type ContentType,
  countContent,
  countSecrets,
  deleteContent,
  deleteSecret,
  listContent,
  listSecretNames,
  secretAad,
  upsertContent,
  upsertSecret,
} from "./db/content.js";
export {
  copyInstallations,
  countKeysInGrace,
  countLiveKeys,
  findKey,
  insertKey,
  type InstallationRow,
  installationsOf,
  installationsPageOf,
  type KeyRow,
  type KeySettings,
  keysOfOrg,
  listKeysOfOrg,
  setInstallationStatus,
  setKeyStatus,
  updateKeySettings,
} from "./db/keys.js";
export { lockSealedRows, SEALED_COLUMNS, type SealedColumn, writeSealed } from "./db/sealed.js";
export {
  APPLIED_RETENTION_MS,
  applyNewUsage,
  type DailyRow,
  dailyUsageOfKey,
  type InstallationRow as InstallationUsageRow,
  markApplied,
  pruneApplied,
  writeCycles,
  writeDaily,
  writeInstallations,
  writeLastUsed,
} from "./db/usage.js";
export { OTHER_LABEL, ROUTE_LABELS, type RouteLabel, UNNAMED_INSTALL } from "./installations.js";
export { forgetStalePendingInstallations, PENDING_INSTALL_RETENTION_MS } from "./stale-installations.js";
export { type AddressList, compileList, listHas, parseAddress } from "./ip.js";
export { createSnapshotCache, type Resolved, type SnapshotCache } from "./snapshots/cache.js";
export { createProjector, type Projector, watchSnapshots } from "./snapshots/projector.js";
export { reconcileProjections } from "./snapshots/reconcile.js";
export { sourceId } from "./source.js";
export { type UsageBatch, usageBatchSchema } from "./usage-stream.js";
export { gracePartnersOf, scheduleRetirement, SETTING_COLUMNS } from "./db/keys.js";
export {
  dailyUsageOfOrg,
  INSTALLATION_STATUSES,
  type InstallationStatus,
  listInstallationsOfOrg,
  type OrgInstallationRow,
} from "./db/org-usage.js";
export { retireKeysWhenDue } from "./snapshots/retire.js";
export { claimPendingNotices, ownersAndAdmins, type PendingInstallation } from "./db/installation-notices.js";
