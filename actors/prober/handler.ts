import { performance } from "node:perf_hooks";
import type { Redis } from "../../shared/platform/redis/client.js";
import type { Clock } from "../../shared/platform/clock.js";
import type { Pool } from "../../shared/platform/db/pool.js";
import { backfillRollups, insertCheck, listServices, pruneChecks, type ServiceKey } from "../../shared/status/index.js";
import type { Keys } from "../../shared/platform/redis/keys.js";
import { dnsHostResolver } from "../../shared/platform/net/outbound/ssrf.js";
import type { AddressPolicy } from "../../shared/platform/net/address-policy.js";
import { createDnsClient } from "../../shared/platform/net/outbound/dns-client.js";
import { followRedirects } from "../../shared/platform/net/outbound/http-client.js";
import type { ScanOptions } from "../../shared/platform/net/outbound/options.js";
import type { ProbeOutcome } from "./messages.js";

/**
 * One round of the prober: every configured service is checked once per interval slot
 * (slot = floor(now / interval) on the shared clock). Two probers side by side: a Redis
 * lease per (service, slot) lets one of them make the request, and the unique
 * (service, slot_at) row in PostgreSQL keeps a second record out even if Redis lost the
 * lease. A check is a GET through the scanner's SSRF guard, redirects followed (each hop
 * re-checked); up means a final 2xx or 3xx within the time-out, and for https a
 * certificate that validates (system store plus SCAN_CA_FILE). Recording a check also adds it
 * to the service's daily roll-up (shared/status/db/status.ts insertCheck), which the 90-day bars read.
 */

export interface ProberDeps {
  db: Pool;
  redis: Redis;
  keys: Keys;
  clock: Clock;
  /** Scanner options: outbound the `probe` policy (PROBE_ALLOW_PRIVATE), caPem from SCAN_CA_FILE, timeoutMs the probe time-out. */
  options: ScanOptions;
  intervalMs: number;
  /** Tests narrow the SSRF guard; production uses its default. */
  addressPolicy?: AddressPolicy;
}

/** Checks older than this are deleted: the report can still cover the last four full quarters. */
export const RETENTION_DAYS = 400;

export async function probeUrl(rawUrl: string, options: ScanOptions, addressPolicy?: AddressPolicy): Promise<ProbeOutcome> {
  let url: URL;
  try {
    url = new URL(rawUrl);
  } catch {
    return { ok: false, statusCode: null, latencyMs: null, error: "not a URL" };
  }
  const context = { options, resolveHost: dnsHostResolver(createDnsClient(options.resolver, options.timeoutMs)), addressPolicy };
  const started = performance.now();
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<null>((resolve) => {
    timer = setTimeout(() => resolve(null), options.timeoutMs);
  });
  // The whole check, redirects included, gets one time-out: a chain of slow hops is one slow answer.
  const chain = await Promise.race([followRedirects(url, context), timedOut]);
  clearTimeout(timer);
  if (chain === null) return { ok: false, statusCode: null, latencyMs: null, error: `no answer within ${options.timeoutMs} ms` };
  const latencyMs = Math.round(performance.now() - started);
  const last = chain.hops[chain.hops.length - 1];
  if (chain.outcome !== "complete" || !last || last.status === null) {
    const why =
      chain.outcome === "loop" || chain.outcome === "too-many-redirects" ? `redirect ${chain.outcome}` : (last?.error ?? chain.outcome);
    return { ok: false, statusCode: last?.status ?? null, latencyMs: null, error: why };
  }
  const untrusted = chain.hops.find((hop) => hop.tls !== null && !hop.tls.authorized);
  if (untrusted?.tls)
    return { ok: false, statusCode: last.status, latencyMs, error: `certificate: ${untrusted.tls.authorizationError ?? "not trusted"}` };
  if (last.status >= 400) return { ok: false, statusCode: last.status, latencyMs, error: `status ${last.status}` };
  return { ok: true, statusCode: last.status, latencyMs, error: null };
}

/** Probes each configured service whose slot is not taken yet; the services this process recorded. */
export async function probeRound(deps: ProberDeps): Promise<ServiceKey[]> {
  const now = deps.clock.now();
  const slotMs = Math.floor(now / deps.intervalMs) * deps.intervalMs;
  const services = (await listServices(deps.db)).filter((s) => s.url);
  const recorded = await Promise.all(
    services.map(async (service) => {
      const lease = await deps.redis.set(deps.keys.probeLease(service.key, slotMs), "1", "PX", deps.intervalMs * 2, "NX");
      if (lease !== "OK") return null;
      const outcome = await probeUrl(service.url as string, deps.options, deps.addressPolicy);
      const inserted = await insertCheck(deps.db, { service: service.key, slotMs, atMs: deps.clock.now(), ...outcome });
      return inserted ? service.key : null;
    }),
  );
  return recorded.filter((key): key is ServiceKey => key !== null);
}

/** Days of raw checks the backfill looks at: the page's bars (90) and a margin. */
export const BACKFILL_DAYS = 92;

/**
 * Writes the missing daily roll-ups of the days the bars show (checks recorded by a prober
 * that predates the roll-ups, during a rolling upgrade). Run at start and hourly.
 */
export async function backfillDailyRollups(deps: Pick<ProberDeps, "db" | "clock">): Promise<number> {
  return backfillRollups(deps.db, deps.clock.now() - BACKFILL_DAYS * 86_400_000);
}

export async function pruneOldChecks(deps: Pick<ProberDeps, "db" | "clock">): Promise<number> {
  return pruneChecks(deps.db, deps.clock.now() - RETENTION_DAYS * 86_400_000);
}
