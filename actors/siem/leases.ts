import { createHash } from "node:crypto";
import type { Redis } from "../../shared/platform/redis/client.js";
import type { Keys } from "../../shared/platform/redis/keys.js";
import { loadScript, runScript } from "../../shared/platform/redis/scripts.js";
import { sourcePath } from "../../shared/platform/paths.js";

/**
 * Which pusher process runs which destination's delivery loop.
 *
 * - **Lease**: a Redis key per destination holding the owner's name with a PX expiry
 *   (`lease-claim-1.lua` takes it, `lease-renew-1.lua` extends it, `lease-release-1.lua` gives
 *   it back). Only the
 *   holder runs the loop. Redis, not PostgreSQL: the lease guards reads of a Redis stream,
 *   so it lives and dies with what it guards, its expiry is measured by one clock (Redis's)
 *   for every host, and renewing hundreds of leases is one pipelined round trip.
 * - **Members**: each process announces itself with a key of the same lifetime
 *   (`siem:pusher:<name>`) and its name in the set `siem:pushers`; a name whose key expired
 *   is dropped from the set by whoever notices.
 * - **Balance**: rendezvous hashing. A destination belongs to the live member with the
 *   highest hash of (member, destination): every process computes the same answer from the
 *   same member list, each of N members gets about 1/N, and a member joining or leaving
 *   moves only the destinations it gains or loses.
 */

const LUA_DIR = sourcePath("actors", "siem", "lua");
const CLAIM = loadScript("lease-claim-1.lua", LUA_DIR);
const RENEW = loadScript("lease-renew-1.lua", LUA_DIR);
const RELEASE = loadScript("lease-release-1.lua", LUA_DIR);

export interface LeaseDeps {
  redis: Redis;
  keys: Keys;
  owner: string;
  ttlMs: number;
}

/** Takes the destination's lease, or renews it when `owner` holds it already; false when another process holds it. */
export async function claimLease(deps: LeaseDeps, destinationId: number): Promise<boolean> {
  return Number(await runScript(deps.redis, CLAIM, [deps.keys.siemLease(destinationId)], [deps.owner, deps.ttlMs])) === 1;
}

/** Extends the lease `owner` holds; false when it is free or another process's. */
export async function renewLease(deps: LeaseDeps, destinationId: number): Promise<boolean> {
  return Number(await runScript(deps.redis, RENEW, [deps.keys.siemLease(destinationId)], [deps.owner, deps.ttlMs])) === 1;
}

/** Gives the lease back (only if `owner` still holds it). */
export async function releaseLease(deps: LeaseDeps, destinationId: number): Promise<void> {
  await runScript(deps.redis, RELEASE, [deps.keys.siemLease(destinationId)], [deps.owner]);
}

/** Announces this process for another `ttlMs`. */
export async function announceMember(deps: LeaseDeps): Promise<void> {
  await Promise.all([
    deps.redis.set(deps.keys.siemPusher(deps.owner), "1", "PX", deps.ttlMs),
    deps.redis.sadd(deps.keys.siemPushers(), deps.owner),
  ]);
}

/** Leaves at once (a clean stop): the others rebalance on their next round instead of after the expiry. */
export async function leaveMembers(deps: LeaseDeps): Promise<void> {
  await Promise.all([deps.redis.del(deps.keys.siemPusher(deps.owner)), deps.redis.srem(deps.keys.siemPushers(), deps.owner)]);
}

/** The live members, sorted; names whose heartbeat expired are removed from the set. */
export async function liveMembers(deps: Pick<LeaseDeps, "redis" | "keys">): Promise<string[]> {
  const names = await deps.redis.smembers(deps.keys.siemPushers());
  const alive = await Promise.all(names.map((name) => deps.redis.exists(deps.keys.siemPusher(name))));
  const dead = names.filter((_, i) => alive[i] === 0);
  if (dead.length > 0) await deps.redis.srem(deps.keys.siemPushers(), ...dead);
  return names.filter((_, i) => alive[i] === 1).sort();
}

function weight(member: string, destinationId: number): number {
  return createHash("sha256").update(`${member}\n${destinationId}`).digest().readUInt32BE(0);
}

/** The member a destination belongs to (rendezvous hashing); null with no members. */
export function ownerOf(destinationId: number, members: readonly string[]): string | null {
  let best: string | null = null;
  let bestWeight = -1;
  for (const member of members) {
    const w = weight(member, destinationId);
    if (w > bestWeight || (w === bestWeight && best !== null && member < best)) {
      best = member;
      bestWeight = w;
    }
  }
  return best;
}
