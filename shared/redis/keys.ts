/**
 * The one key builder. Every Redis key and stream name is made here, with REDIS_PREFIX
 * applied. Keys a Lua script touches together share a hash tag `{s:N}`: the shard of the
 * organization (orgId mod USAGE_SHARDS). An organization's snapshots, counters and its
 * shard's usage stream all live in one slot, so the verify script runs on Redis Cluster
 * unchanged; organizations spread over the shards.
 */

export const USAGE_SHARDS = 4;

export type KeyId = number | string;

export function shardOf(orgId: KeyId): number {
  return Number(orgId) % USAGE_SHARDS;
}

export function createKeys(prefix: string) {
  const tag = (orgId: KeyId) => `{s:${shardOf(orgId)}}`;
  return {
    prefix,
    /** Sentinel: present while snapshots are complete. Missing means Redis lost them. */
    snapshotSentinel: () => `${prefix}snap:ready`,
    /** Pub/sub channel telling ingress processes which snapshots changed. */
    snapshotChannel: () => `${prefix}snap:changed`,
    /** SHA-256 of an API key → "orgId:keyId". */
    keyIndex: (keyHash: string) => `${prefix}kh:${keyHash}`,
    keySnapshot: (orgId: KeyId, keyId: KeyId) => `${prefix}${tag(orgId)}:key:${keyId}`,
    orgSnapshot: (orgId: KeyId) => `${prefix}${tag(orgId)}:org:${orgId}`,
    /** Hash content_key → JSON {type, value, updated_at}. */
    contentSnapshot: (orgId: KeyId) => `${prefix}${tag(orgId)}:content:${orgId}`,
    /** Hash name → base64 of the sealed (still encrypted) secret. */
    secretSnapshot: (orgId: KeyId) => `${prefix}${tag(orgId)}:secrets:${orgId}`,
    /** Per-key fixed one-minute window: minute = floor(now_s / 60). */
    rateWindow: (orgId: KeyId, keyId: KeyId, minute: number) => `${prefix}${tag(orgId)}:rate:${keyId}:${minute}`,
    /** Calls counted in the organization's current cycle (pooled across its keys). */
    cycleUsed: (orgId: KeyId, cycleStart: number) => `${prefix}${tag(orgId)}:used:${orgId}:${cycleStart}`,
    /** Hash install → status (approved, pending, blocked) for one key. */
    installations: (orgId: KeyId, keyId: KeyId) => `${prefix}${tag(orgId)}:inst:${keyId}`,
    /** Usage events of every organization of one shard. */
    usageStream: (shard: number) => `${prefix}{s:${shard}}:stream:usage`,
    usageStreamOf: (orgId: KeyId) => `${prefix}${tag(orgId)}:stream:usage`,
    /** Any other stream by name (scan jobs, events, notifications, ...). */
    stream: (name: string) => `${prefix}stream:${name}`,
    deadLetters: (stream: string) => `${stream}:dead`,
    /** Idempotency marker of one handled message (actor runtime). */
    handled: (group: string, messageId: string) => `${prefix}done:${group}:${messageId}`,
    /** Reply list of a request/reply exchange between ingress and an actor. */
    reply: (requestId: string) => `${prefix}reply:${requestId}`,
    challenge: (nonce: string) => `${prefix}challenge:${nonce}`,
    scanBudget: (orgId: KeyId, hour: number) => `${prefix}scanrate:${orgId}:${hour}`,
    clockOffset: () => `${prefix}clock:offset`,
    clockChannel: () => `${prefix}clock:moved`,
  } as const;
}

export type Keys = ReturnType<typeof createKeys>;
