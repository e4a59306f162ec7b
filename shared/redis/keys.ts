/**
 * The one key builder. Every Redis key and stream name is made here, with REDIS_PREFIX
 * applied. Keys a Lua script touches together share a hash tag `{s:N}`: the shard of the
 * organization (orgId mod USAGE_SHARDS). An organization's snapshots, counters and its
 * shard's usage stream all live in one slot, so the verify script runs on Redis Cluster
 * unchanged; organizations spread over the shards. Other keys written or read together carry
 * a tag of their own ({metrics}); everything else is single-key, or written by separate
 * commands where two slots meet (docs/operations.md, "Redis Cluster").
 */

export const USAGE_SHARDS = 4;

export type KeyId = number | string;

export function shardOf(orgId: KeyId): number {
  return Number(orgId) % USAGE_SHARDS;
}

/** Shard of an API key's index entry, from its hash (hex): index entries spread over the shards too. */
export function indexShardOf(keyHash: string): number {
  return Number.parseInt(keyHash.slice(0, 8), 16) % USAGE_SHARDS;
}

export function createKeys(prefix: string) {
  const tag = (orgId: KeyId) => `{s:${shardOf(orgId)}}`;
  return {
    prefix,
    /**
     * Sentinel of one shard: present while that shard's snapshots and key index entries are
     * complete. Missing means Redis, or the cluster node holding the shard, lost them: each
     * shard's sentinel sits in the slot of its data, so a master restarted empty loses both
     * together. Any one missing rebuilds everything; shard 0's is the one operators delete.
     */
    snapshotSentinel: (shard = 0) => `${prefix}{s:${shard}}:snap:ready`,
    snapshotSentinels: () => Array.from({ length: USAGE_SHARDS }, (_, shard) => `${prefix}{s:${shard}}:snap:ready`),
    /** Pub/sub channel telling ingress processes which snapshots changed. */
    snapshotChannel: () => `${prefix}snap:changed`,
    /** SHA-256 of an API key (hex) → "orgId:keyId"; tagged with indexShardOf(keyHash) and guarded by that shard's sentinel. */
    keyIndex: (keyHash: string) => `${prefix}{s:${indexShardOf(keyHash)}}:kh:${keyHash}`,
    keySnapshot: (orgId: KeyId, keyId: KeyId) => `${prefix}${tag(orgId)}:key:${keyId}`,
    orgSnapshot: (orgId: KeyId) => `${prefix}${tag(orgId)}:org:${orgId}`,
    /** Hash content_key → JSON {type, value, updated_at}. */
    contentSnapshot: (orgId: KeyId) => `${prefix}${tag(orgId)}:content:${orgId}`,
    /** Hash name → base64 of the sealed (still encrypted) secret. */
    secretSnapshot: (orgId: KeyId) => `${prefix}${tag(orgId)}:secrets:${orgId}`,
    /** Per-key fixed one-minute window: minute = floor(now_s / 60). */
    rateWindow: (orgId: KeyId, keyId: KeyId, minute: number) => `${prefix}${tag(orgId)}:rate:${keyId}:${minute}`,
    /** The key's window of place-rule refusals (domain, IP, country): kept apart so they never take honest callers' slots. */
    placeWindow: (orgId: KeyId, keyId: KeyId, minute: number) => `${prefix}${tag(orgId)}:rate:${keyId}:${minute}:place`,
    /** Per-source window of one key (rate_per_source_per_minute); `source` is a digest of the source network, never an address. */
    sourceWindow: (orgId: KeyId, keyId: KeyId, minute: number, source: string) => `${prefix}${tag(orgId)}:rate:${keyId}:${minute}:src:${source}`,
    /** Calls counted in the organization's current cycle (pooled across its keys). */
    cycleUsed: (orgId: KeyId, cycleStart: number) => `${prefix}${tag(orgId)}:used:${orgId}:${cycleStart}`,
    /** Hash install → status (approved, pending, blocked) for one key. */
    installations: (orgId: KeyId, keyId: KeyId) => `${prefix}${tag(orgId)}:inst:${keyId}`,
    /** Set of the caller-chosen endpoint labels recorded for one key on a UTC day (capped: shared/enforcement/installations.ts). */
    endpointLabels: (orgId: KeyId, keyId: KeyId, day: string) => `${prefix}${tag(orgId)}:labels:${keyId}:${day}`,
    /** Installations of one key recorded pending on a UTC day (capped). */
    pendingInstalls: (orgId: KeyId, keyId: KeyId, day: string) => `${prefix}${tag(orgId)}:instnew:${keyId}:${day}`,
    /** Hash install → 1: the installations of one key sighted in one minute (last_seen_at at most once a minute). */
    installSightings: (orgId: KeyId, keyId: KeyId, minute: number) => `${prefix}${tag(orgId)}:instseen:${keyId}:${minute}`,
    /** Usage events of every organization of one shard. */
    usageStream: (shard: number) => `${prefix}{s:${shard}}:stream:usage`,
    usageStreamOf: (orgId: KeyId) => `${prefix}${tag(orgId)}:stream:usage`,
    /** Any other stream by name (scan jobs, events, notifications, ...). */
    stream: (name: string) => `${prefix}stream:${name}`,
    deadLetters: (stream: string) => `${stream}:dead`,
    /** Set of every stream's name, added where a stream is made (group creation, publishers): /metrics and the CLI read it instead of scanning. */
    streamRegistry: () => `${prefix}streams`,
    /** Idempotency marker of one handled message (actor runtime). */
    handled: (group: string, messageId: string) => `${prefix}done:${group}:${messageId}`,
    /** Reply list of a request/reply exchange between ingress and an actor. */
    reply: (requestId: string) => `${prefix}reply:${requestId}`,
    challenge: (nonce: string) => `${prefix}challenge:${nonce}`,
    scanBudget: (orgId: KeyId, hour: number) => `${prefix}scanrate:${orgId}:${hour}`,
    /** One actor process's published metrics (JSON), and the set of publishers by time; one tag: written in one MULTI, read in one MGET. */
    actorMetrics: (processName: string) => `${prefix}{metrics}:actor:${processName}`,
    actorMetricsIndex: () => `${prefix}{metrics}:actors`,
    /** Hash: the cached status page (json, etag, built_at, snapshot); shared by every ingress process. */
    statusDocument: () => `${prefix}status:doc`,
    /** Lock: the one ingress process building the status document this minute. */
    statusBuildLock: () => `${prefix}status:building`,
    /** Lease: the one prober checking this service in this interval slot. */
    probeLease: (service: string, slotMs: number) => `${prefix}status:probe:${service}:${slotMs}`,
    /** A rendered quarterly report (short-lived). */
    statusReport: (quarter: string) => `${prefix}status:report:${quarter}`,
    /** Per-organization fixed one-hour window of a limited action (assignment changes, re-checks). */
    hourlyBudget: (name: string, orgId: KeyId, hour: number) => `${prefix}budget:${name}:${orgId}:${hour}`,
    /** Bumped after every SIEM destination change: the pusher's fan-out reloads its destinations when it moves. */
    siemVersion: () => `${prefix}siem:version`,
    /** Pub/sub channel telling pushers that destinations changed (start or stop their delivery loops). */
    siemChanged: () => `${prefix}siem:changed`,
    /** Lease: the one pusher process running this destination's delivery loop (its value: that process's name). */
    siemLease: (destinationId: number) => `${prefix}siem:lease:${destinationId}`,
    /** Set of pusher process names that announced themselves; alive while their `siemPusher` key exists. */
    siemPushers: () => `${prefix}siem:pushers`,
    /** One pusher process's heartbeat (PX expiry, renewed with its leases). */
    siemPusher: (owner: string) => `${prefix}siem:pusher:${owner}`,
    /** A WebAuthn challenge between its options call and its verify call (JSON: what it is bound to, its end). */
    authChallenge: (challenge: string) => `${prefix}auth:challenge:${challenge}`,
    /** A fixed window of a sign-in budget; `subject` is a digest of the source network or e-mail, never the address itself. */
    authBudget: (name: string, subject: string, window: number) => `${prefix}auth:budget:${name}:${subject}:${window}`,
    clockOffset: () => `${prefix}clock:offset`,
    clockChannel: () => `${prefix}clock:moved`,
  } as const;
}

export type Keys = ReturnType<typeof createKeys>;
