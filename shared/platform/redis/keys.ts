/**
 * The one key builder. Every Redis key and stream name is made here, with REDIS_PREFIX
 * applied. Keys a Lua script touches together share a hash tag: the tag of the
 * organization's shard (orgId mod SHARDS). An organization's snapshots, counters and its
 * shard's usage stream all live in one slot, so the verify script runs on Redis Cluster
 * unchanged. Other keys written or read together carry a tag of their own ({metrics});
 * everything else is single-key, or written by separate commands where two slots meet
 * (docs/operations.md, "Redis Cluster").
 *
 * Shard tags sit at evenly spaced cluster slots: shard i's tag hashes (CRC16 mod 16384) to
 * slot rev(i) × 256 + 128, rev reversing the 6 bits of i. A cluster's masters own contiguous
 * slot ranges of about equal size (`redis-cli --cluster create` and `rebalance` keep them
 * so), so each master holds about SHARDS / masters shards and organizations (consecutive
 * ids, shard = id mod SHARDS) spread evenly over up to SHARDS masters; the bit reversal
 * sends consecutive shards to distant slots, so even a handful of organizations lands on
 * several masters. Every shard has its own usage stream (read by the usage actor: one
 * blocking reader per stream on a cluster) and its own sentinel.
 */

export const SHARDS = 64;

/**
 * A key kept beside a stream, in the stream's own cluster slot (a script touches both): the
 * stream's whole name as the hash tag. Stream names and REDIS_PREFIX hold no braces.
 * `inhand`: hash entry id → event id of a SIEM destination's entries read and not yet
 * delivered; `late`: event ids its fan-out appended below an id already on the stream
 * (actors/siem/replay.ts).
 */
export function streamSide(stream: string, part: "inhand" | "late"): string {
  if (/[{}]/.test(stream)) throw new Error(`stream name with a brace: ${stream}`);
  return `{${stream}}:${part}`;
}

/** Hash tag contents of the shards, found by search so that SHARD_TAGS[i] lies in slot rev(i) × 256 + 128 (test/shared/platform/keys.test.ts). */
export const SHARD_TAGS: readonly string[] = [
  "s0.2zv",
  "s1.fu3",
  "s2.15w",
  "s3.89z",
  "s4.oag",
  "s5.fmj",
  "s6.dcv",
  "s7.efc",
  "s8.5kh",
  "s9.im5",
  "s10.5os",
  "s11.4jf",
  "s12.2hw",
  "s13.3mb",
  "s14.h0j",
  "s15.467",
  "s16.3fo",
  "s17.2cz",
  "s18.3ll",
  "s19.59",
  "s20.ef",
  "s21.5vh",
  "s22.7xt",
  "s23.69i",
  "s24.4od",
  "s25.5jq",
  "s26.7dm",
  "s27.6ax",
  "s28.3bc",
  "s29.2gv",
  "s30.1c4v",
  "s31.2ey",
  "s32.76w",
  "s33.63b",
  "s34.egr",
  "s35.1h7",
  "s36.jin",
  "s37.6o3",
  "s38.bju",
  "s39.6e0",
  "s40.5i0",
  "s41.afu",
  "s42.6b9",
  "s43.jdd",
  "s44.55a",
  "s45.40t",
  "s46.c48",
  "s47.j85",
  "s48.nig",
  "s49.gej",
  "s50.fbp",
  "s51.2m5",
  "s52.aet",
  "s53.5j1",
  "s54.34q",
  "s55.21d",
  "s56.475",
  "s57.h1h",
  "s58.a7f",
  "s59.q0c",
  "s60.neg",
  "s61.gij",
  "s62.egv",
  "s63.1h3",
];

export type KeyId = number | string;

export function shardOf(orgId: KeyId): number {
  return Number(orgId) % SHARDS;
}

/** Shard of an API key's index entry, from its hash (hex): index entries spread over the shards too. */
export function indexShardOf(keyHash: string): number {
  return Number.parseInt(keyHash.slice(0, 8), 16) % SHARDS;
}

const shardTag = (shard: number): string => `{${SHARD_TAGS[shard]}}`;

export function createKeys(prefix: string) {
  const tag = (orgId: KeyId) => shardTag(shardOf(orgId));
  return {
    prefix,
    /**
     * Sentinel of one shard: present while that shard's snapshots and key index entries are
     * complete. Missing means Redis, or the cluster node holding the shard, lost them: each
     * shard's sentinel sits in the slot of its data, so a master restarted empty loses both
     * together. Any one missing rebuilds everything; shard 0's is the one operators delete.
     */
    snapshotSentinel: (shard = 0) => `${prefix}${shardTag(shard)}:snap:ready`,
    snapshotSentinels: () => Array.from({ length: SHARDS }, (_, shard) => `${prefix}${shardTag(shard)}:snap:ready`),
    /** Pub/sub channel telling ingress processes which snapshots changed. */
    snapshotChannel: () => `${prefix}snap:changed`,
    /** SHA-256 of an API key (hex) → "orgId:keyId"; tagged with indexShardOf(keyHash) and guarded by that shard's sentinel. */
    keyIndex: (keyHash: string) => `${prefix}${shardTag(indexShardOf(keyHash))}:kh:${keyHash}`,
    keySnapshot: (orgId: KeyId, keyId: KeyId) => `${prefix}${tag(orgId)}:key:${keyId}`,
    orgSnapshot: (orgId: KeyId) => `${prefix}${tag(orgId)}:org:${orgId}`,
    /** Hash content_key → JSON {type, value, updated_at}. */
    contentSnapshot: (orgId: KeyId) => `${prefix}${tag(orgId)}:content:${orgId}`,
    /** Hash name → base64 of the sealed (still encrypted) secret. */
    secretSnapshot: (orgId: KeyId) => `${prefix}${tag(orgId)}:secrets:${orgId}`,
    /** Per-key fixed one-minute window: minute = floor(now_s / 60). */
    rateWindow: (orgId: KeyId, keyId: KeyId, minute: number) => `${prefix}${tag(orgId)}:rate:${keyId}:${minute}`,
    /**
     * The key's window of counted refusals (place, scope, key state, bot check): kept apart so
     * they never take honest callers' slots. Named `:place` since it first held the place
     * refusals alone; a rename would split one minute's window across a deploy.
     */
    refusalWindow: (orgId: KeyId, keyId: KeyId, minute: number) => `${prefix}${tag(orgId)}:rate:${keyId}:${minute}:place`,
    /** Per-source window of one key (rate_per_source_per_minute); `source` is a digest of the source network, never an address. */
    sourceWindow: (orgId: KeyId, keyId: KeyId, minute: number, source: string) =>
      `${prefix}${tag(orgId)}:rate:${keyId}:${minute}:src:${source}`,
    /** Calls counted in the organization's current cycle (pooled across its keys). */
    cycleUsed: (orgId: KeyId, cycleStart: number) => `${prefix}${tag(orgId)}:used:${orgId}:${cycleStart}`,
    /** Hash install → status (approved, pending, blocked) for one key. */
    installations: (orgId: KeyId, keyId: KeyId) => `${prefix}${tag(orgId)}:inst:${keyId}`,
    /** Set of the caller-chosen endpoint labels recorded for one key on a UTC day (capped: shared/verify/installations.ts). */
    endpointLabels: (orgId: KeyId, keyId: KeyId, day: string) => `${prefix}${tag(orgId)}:labels:${keyId}:${day}`,
    /** Installations of one key recorded pending on a UTC day (capped). */
    pendingInstalls: (orgId: KeyId, keyId: KeyId, day: string) => `${prefix}${tag(orgId)}:instnew:${keyId}:${day}`,
    /** Hash install → 1: the installations of one key sighted in one minute (last_seen_at at most once a minute). */
    installSightings: (orgId: KeyId, keyId: KeyId, minute: number) => `${prefix}${tag(orgId)}:instseen:${keyId}:${minute}`,
    /** Usage events of every organization of one shard. */
    usageStream: (shard: number) => `${prefix}${shardTag(shard)}:stream:usage`,
    usageStreamOf: (orgId: KeyId) => `${prefix}${tag(orgId)}:stream:usage`,
    /** Any other stream by name (scan jobs, events, notifications, ...). */
    stream: (name: string) => `${prefix}stream:${name}`,
    deadLetters: (stream: string) => `${stream}:dead`,
    /** A key beside a stream, in its slot (streamSide above). */
    streamSide,
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
    /** One actor process's heartbeat (shared/platform/streams/alive.ts), expiring when the process stops beating. */
    actorAlive: (name: string, processName: string) => `${prefix}{alive}:actors:alive:${name}:${processName}`,
    /** Sorted set `<name>:<process>` → last beat (ms): lists the heartbeats without a keyspace scan. */
    actorAliveIndex: () => `${prefix}{alive}:actors:alive`,
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
    /** Count of an organization's "send test event" requests published and not yet handled (PX expiry: siem-test-admit-1.lua). */
    siemTestsOutstanding: (orgId: KeyId) => `${prefix}siem:tests:${orgId}`,
    /** A WebAuthn challenge between its options call and its verify call (JSON: what it is bound to, its end). */
    authChallenge: (challenge: string) => `${prefix}auth:challenge:${challenge}`,
    /** A fixed window of a sign-in budget; `subject` is a digest of the source network or e-mail, never the address itself. */
    authBudget: (name: string, subject: string, window: number) => `${prefix}auth:budget:${name}:${subject}:${window}`,
    clockOffset: () => `${prefix}clock:offset`,
    clockChannel: () => `${prefix}clock:moved`,
  } as const;
}

export type Keys = ReturnType<typeof createKeys>;
