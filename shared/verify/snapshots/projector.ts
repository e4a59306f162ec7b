import { createHash } from "node:crypto";
import { replicated, type Redis } from "../../platform/redis/client.js";
import type { Clock } from "../../platform/clock.js";
import { findKey, inheritInstallations, installationsOf, keysOfOrg, liveHeirOf, type KeyRow } from "../db/keys.js";
import { verifiedDomains } from "../../scans/index.js";
import { contentOf, secretsOf } from "../db/content.js";
import { allOrgIds, allowanceOf, cycleUsed, findOrg, orgCycle, type OrgRow } from "../../accounts/index.js";
import type { Pool, Queryable } from "../../platform/db/pool.js";
import { clearPending, markPending, type ProjectionKind, withEntityLock } from "../db/projections.js";
import type { Logger } from "../../platform/log.js";
import type { Keys } from "../../platform/redis/keys.js";
import { loadScript, runScript } from "../../platform/redis/scripts.js";
import type { KeySnapshot, OrgSnapshot, SnapshotChange } from "./types.js";

/**
 * Postgres → Redis. Every admin change calls the projector after its transaction
 * commits; on start, and whenever the sentinel key is missing (Redis lost its data),
 * `rebuildAll` projects everything again and restores the counters PostgreSQL knows.
 * The version of a snapshot is a digest of its JSON, so re-projecting an unchanged row
 * leaves every ingress cache valid, and any change is seen by verify's version check.
 *
 * A projection is owed before it is written: `tracked` marks it in PostgreSQL
 * (projection_pending), writes Redis, then clears the mark. If Redis refuses the write
 * the admin call still fails (500), but the mark stays and the reconcile loop
 * (reconcile.ts) projects again within a second or two of Redis coming back: a
 * committed revocation cannot silently stay unprojected.
 */

export function digest(json: string): string {
  return createHash("sha256").update(json).digest("base64url").slice(0, 16);
}

export function keySnapshotOf(row: KeyRow): KeySnapshot {
  return {
    id: row.id,
    org_id: row.org_id,
    kind: row.kind,
    name: row.name,
    prefix: row.prefix,
    environment: row.environment,
    industry: row.industry,
    scopes: row.scopes,
    domain: row.domain,
    ip_allow: row.ip_allow,
    ip_deny: row.ip_deny,
    ip_binding: row.ip_binding,
    countries_allow: row.countries_allow,
    countries_block: row.countries_block,
    rate_per_minute: row.rate_per_minute,
    rate_per_source_per_minute: row.rate_per_source_per_minute,
    is_trial: row.is_trial,
    expires_at_ms: row.expires_at?.getTime() ?? null,
    // Only when set: the snapshots (and versions) of keys not being replaced stay as they were.
    ...(row.retires_at ? { retires_at_ms: row.retires_at.getTime() } : {}),
    status: row.status === "suspended" ? "suspended" : "active",
    botcheck: row.botcheck,
    firewall: row.firewall,
    content_origin: row.content_origin,
  };
}

export function orgSnapshotOf(row: OrgRow, domains: string[]): OrgSnapshot {
  return {
    id: row.id,
    plan: row.plan,
    allowance: allowanceOf(row.plan),
    subscription: row.subscription,
    cycle_anchor_ms: row.cycle_anchor.getTime(),
    lapsed_at_ms: row.lapsed_at?.getTime() ?? null,
    verified_domains: domains,
  };
}

/** How long a projection waits for the replicas to acknowledge it (WAIT) before leaving it to the reconcile loop. */
const REPLICA_WAIT_MS = 250;

export interface ProjectorDeps {
  db: Pool;
  redis: Redis;
  keys: Keys;
  clock: Clock;
  logger: Logger;
}

export function createProjector(deps: ProjectorDeps) {
  const { db, redis, keys, clock, logger } = deps;

  const publish = (change: SnapshotChange) => redis.publish(keys.snapshotChannel(), JSON.stringify(change));
  const retireScript = loadScript("key-retire-3.lua");
  const inheritScript = loadScript("key-inherit-2.lua");

  /** Flat install, status, ... pairs a script returned, as rows. */
  const pairs = (reply: unknown): { install: string; status: string }[] => {
    const flat = Array.isArray(reply) ? reply.map(String) : [];
    const rows: { install: string; status: string }[] = [];
    for (let i = 0; i + 1 < flat.length; i += 2) rows.push({ install: flat[i], status: flat[i + 1] });
    return rows;
  };

  /**
   * A revoked key that a rotation replaced hands its Redis installations to its live heir
   * (key-retire-3.lua, atomic with the counting script) and PostgreSQL is told of those it
   * did not hold yet: the new key keeps every installation the old one had, however far the
   * usage actor lags. Runs again harmlessly (the old hash is gone: nothing to hand over).
   */
  async function retire(q: Queryable, row: KeyRow): Promise<boolean> {
    const heir = await liveHeirOf(q, row.id);
    if (heir === null) return false;
    const carried = await runScript(
      redis,
      retireScript,
      [keys.keySnapshot(row.org_id, row.id), keys.installations(row.org_id, row.id), keys.installations(row.org_id, heir)],
      [],
    );
    await inheritInstallations(q, heir, pairs(carried), clock.now());
    return true;
  }

  /**
   * A key that replaces one still in its grace starts with the old key's Redis installations
   * (key-inherit-2.lua), written before its index so that no call can find it without them;
   * PostgreSQL is told of those it lacked. After a grace-less rotation the old hash is gone
   * (retire ran first): nothing to take.
   */
  async function inherit(q: Queryable, row: KeyRow): Promise<void> {
    if (row.rotated_from === null) return;
    const taken = await runScript(
      redis,
      inheritScript,
      [keys.installations(row.org_id, row.rotated_from), keys.installations(row.org_id, row.id)],
      [],
    );
    await inheritInstallations(q, row.id, pairs(taken), clock.now());
  }

  /**
   * The key index (untagged: found by the API key's hash) and the key's snapshot (tagged with
   * its organization's shard) may sit in different Redis Cluster slots, so they are written
   * one after the other, never in one MULTI, in the order that is safe between the two
   * writes: a revocation drops the index first (the key is unknown at once), a projection
   * writes the snapshot first (the index never points at a missing or older snapshot;
   * verify's version check catches an older one anyway).
   */
  async function writeKey(q: Queryable, row: KeyRow, options: { installations: boolean; retire: boolean }): Promise<string[]> {
    const index = keys.keyIndex(row.key_hash.toString("hex"));
    const written = [index, keys.keySnapshot(row.org_id, row.id)];
    if (row.status === "revoked") {
      await redis.del(index);
      if (options.retire && (await retire(q, row))) return written;
      await redis.multi().del(keys.keySnapshot(row.org_id, row.id), keys.installations(row.org_id, row.id)).exec();
      return written;
    }
    if (options.installations) await inherit(q, row);
    const json = JSON.stringify(keySnapshotOf(row));
    const multi = redis.multi();
    multi.hset(keys.keySnapshot(row.org_id, row.id), "json", json, "v", digest(json));
    if (options.installations) {
      // The owner's decisions (approved, blocked) are made in PostgreSQL first, so its status
      // is the newest and overwrites; a pending row never overwrites what the counting
      // script recorded since (Redis is ahead of the usage actor for sightings).
      for (const inst of await installationsOf(q, row.id)) {
        if (inst.status === "pending") multi.hsetnx(keys.installations(row.org_id, row.id), inst.install, inst.status);
        else multi.hset(keys.installations(row.org_id, row.id), inst.install, inst.status);
      }
    }
    await multi.exec();
    await redis.set(index, `${row.org_id}:${row.id}`);
    return written;
  }

  async function writeOrg(q: Queryable, row: OrgRow): Promise<string[]> {
    const json = JSON.stringify(orgSnapshotOf(row, await verifiedDomains(q, row.id)));
    const { startMs } = orgCycle(row, clock.now());
    const used = await cycleUsed(q, row.id, startMs);
    const multi = redis.multi();
    multi.hset(keys.orgSnapshot(row.id), "json", json, "v", digest(json));
    // Redis is ahead of PostgreSQL while usage events are in flight: restore only a lost counter.
    multi.set(keys.cycleUsed(row.id, startMs), used, "NX");
    await multi.exec();
    return [keys.orgSnapshot(row.id)];
  }

  /** Content and sealed secrets of one organization, replaced whole (they are small). */
  async function writeContent(q: Queryable, orgId: number): Promise<void> {
    const content = await contentOf(q, orgId);
    const secrets = await secretsOf(q, orgId);
    const multi = redis.multi();
    multi.del(keys.contentSnapshot(orgId), keys.secretSnapshot(orgId));
    for (const row of content) {
      multi.hset(
        keys.contentSnapshot(orgId),
        row.content_key,
        JSON.stringify({ type: row.type, value: row.value, updated_at: row.updated_at.getTime() }),
      );
    }
    for (const row of secrets) multi.hset(keys.secretSnapshot(orgId), row.name, row.sealed.toString("base64"));
    await multi.exec();
  }

  /**
   * Projections of one entity run one at a time (a transaction-scoped advisory lock), and
   * each reads PostgreSQL after taking the lock. A projection starts after its change
   * committed, so the last one to run reads the newest row: two concurrent changes can
   * never leave the older snapshot in Redis.
   */
  function serialized(kind: number, id: number, fn: (q: Queryable) => Promise<void>): Promise<void> {
    return withEntityLock(db, kind, id, fn);
  }

  /**
   * The mark is cleared only once the replicas of the masters written have the change: a
   * failover before then would promote a replica without it (a revocation undone), so the
   * mark stays and the reconcile loop projects again, onto the new master if there was one.
   */
  async function tracked(kind: ProjectionKind, id: number, project: () => Promise<string[]>): Promise<void> {
    const seq = await markPending(db, kind, id, clock.now());
    const written = await project();
    if (!(await replicated(redis, written, REPLICA_WAIT_MS))) {
      logger.warn({ kind, id }, "projection not yet on every replica; the reconcile loop projects it again");
      return;
    }
    await clearPending(db, kind, id, seq);
  }

  return {
    async contentChanged(orgId: number): Promise<void> {
      await tracked("content", orgId, async () => {
        await serialized(3, orgId, (q) => writeContent(q, orgId));
        await publish({ type: "content", id: orgId });
        return [keys.contentSnapshot(orgId), keys.secretSnapshot(orgId)];
      });
    },

    /**
     * `installations`: also copy the key's installations from PostgreSQL (a new, rotated key;
     * an owner's decision on one, which is thus owed like any projection until Redis has it).
     * A revoked key that a rotation replaced hands its Redis installations to its heir (retire).
     */
    async keyChanged(keyId: number, options: { installations?: boolean } = {}): Promise<void> {
      await tracked("key", keyId, async () => {
        let written: string[] = [];
        await serialized(1, keyId, async (q) => {
          const row = await findKey(q, keyId);
          // A re-projection (reconcile) copies installations too: HSETNX never overwrites a newer status.
          if (row) written = await writeKey(q, row, { installations: options.installations ?? false, retire: true });
        });
        if (written.length > 0) await publish({ type: "key", id: keyId });
        return written;
      });
    },

    async orgChanged(orgId: number): Promise<void> {
      await tracked("org", orgId, async () => {
        let written: string[] = [];
        await serialized(2, orgId, async (q) => {
          const row = await findOrg(q, orgId);
          if (row) written = await writeOrg(q, row);
        });
        if (written.length > 0) await publish({ type: "org", id: orgId });
        return written;
      });
    },

    /** Everything, from PostgreSQL. The sentinel is set last: until then verify answers 503. */
    async rebuildAll(): Promise<{ orgs: number; keys: number }> {
      const started = Date.now();
      const orgIds = await allOrgIds(db);
      let keyCount = 0;
      for (const id of orgIds) {
        const org = await findOrg(db, id);
        if (!org) continue;
        await writeOrg(db, org);
        await writeContent(db, id);
        for (const key of await keysOfOrg(db, id)) {
          // Redis lost everything: a revoked key has nothing left to hand over.
          await writeKey(db, key, { installations: true, retire: false });
          keyCount++;
        }
      }
      await Promise.all(keys.snapshotSentinels().map((sentinel) => redis.set(sentinel, String(clock.now()))));
      await publish({ type: "all", id: 0 });
      logger.info({ orgs: orgIds.length, keys: keyCount, ms: Date.now() - started }, "snapshots rebuilt");
      return { orgs: orgIds.length, keys: keyCount };
    },
  };
}

export type Projector = ReturnType<typeof createProjector>;

/**
 * Watches the sentinel; when Redis has lost it, rebuilds. A short lock keeps several
 * processes from rebuilding at once (a duplicate rebuild would be harmless, only wasteful).
 */
export function watchSnapshots(deps: ProjectorDeps & { projector: Projector; intervalMs?: number; onRebuild?: () => void }): {
  stop(): void;
} {
  const { redis, keys, projector, logger } = deps;
  let running = false;
  const lockKey = `${keys.snapshotSentinel()}:rebuilding`;
  const tick = async () => {
    if (running) return;
    running = true;
    try {
      // One EXISTS per shard: the sentinels sit in different slots (cluster nodes).
      if ((await Promise.all(keys.snapshotSentinels().map((sentinel) => redis.exists(sentinel)))).every((n) => n === 1)) return;
      if ((await redis.set(lockKey, "1", "PX", 30_000, "NX")) !== "OK") return;
      try {
        logger.warn("snapshot sentinel missing: rebuilding from PostgreSQL");
        deps.onRebuild?.();
        await projector.rebuildAll();
      } finally {
        await redis.del(lockKey);
      }
    } catch (error) {
      logger.error({ err: error }, "snapshot watch failed");
    } finally {
      running = false;
    }
  };
  const timer = setInterval(() => void tick(), deps.intervalMs ?? 500);
  timer.unref();
  void tick();
  return { stop: () => clearInterval(timer) };
}
