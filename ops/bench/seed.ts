import { randomToken, sha256 } from "../../shared/platform/crypto/hash.js";
import { issueKey } from "../../shared/platform/crypto/key-format.js";
import { insertDomain } from "../../shared/scans/index.js";
import { insertKey } from "../../shared/verify/index.js";
import { insertOrg } from "../../shared/accounts/index.js";
import { migrate } from "../../shared/platform/db/migrate.js";
import { createPool, ensureDatabase, transaction } from "../../shared/platform/db/pool.js";

/**
 * The benchmark's own database (`<DATABASE_URL's name>_bench`, created and migrated when
 * missing) and one enterprise organization (unlimited allowance) with a verified domain
 * and two client keys whose rate limit never stops the run: one for verify, one with
 * bot protection on for botcheck (hold time 0, so the bench can earn a pass token at once).
 */

export const BENCH_DOMAIN = "bench.example";

export function benchDatabaseUrl(databaseUrl: string): string {
  const url = new URL(databaseUrl);
  const name = decodeURIComponent(url.pathname.replace(/^\//, "")) || "gateway";
  url.pathname = `/${name}_bench`;
  return url.toString();
}

export interface BenchSeed {
  orgId: number;
  key: string;
  botcheckKey: string;
}

export async function seedBench(databaseUrl: string, nowMs: number): Promise<BenchSeed> {
  await ensureDatabase(databaseUrl);
  const pool = createPool(databaseUrl, 2);
  try {
    await migrate(pool);
    return await transaction(pool, async (tx) => {
      const org = await insertOrg(tx, { name: "Bench", plan: "enterprise", fixTargetDays: 30, subscription: "active", nowMs });
      await insertDomain(tx, { orgId: org.id, name: BENCH_DOMAIN, token: randomToken(32), verified: true, nowMs });
      const settings = (name: string, botcheck: boolean, holdMs: number) => ({
        name,
        domain: BENCH_DOMAIN,
        environment: "production",
        industry: "",
        scopes: [],
        ip_allow: [],
        ip_deny: [],
        ip_binding: false,
        countries_allow: [],
        countries_block: [],
        rate_per_minute: 10_000_000,
        rate_per_source_per_minute: null,
        is_trial: false,
        expires_at: null,
        botcheck: { enabled: botcheck, hold_ms: holdMs, allow_desktop: true, allow_tablet: true, allow_mobile: true, blocked_url: null },
        firewall: null,
        content_origin: null,
      });
      const { key, prefix } = issueKey("client", true);
      await insertKey(tx, {
        orgId: org.id,
        hash: sha256(key),
        prefix,
        kind: "client",
        nowMs,
        settings: settings("Bench site", false, 1500),
      });
      const botcheck = issueKey("client", true);
      const botcheckKey = botcheck.key;
      await insertKey(tx, {
        orgId: org.id,
        hash: sha256(botcheckKey),
        prefix: botcheck.prefix,
        kind: "client",
        nowMs,
        settings: settings("Bench bot check", true, 0),
      });
      return { orgId: org.id, key, botcheckKey };
    });
  } finally {
    await pool.end();
  }
}
