import { recordActivity, insertMember, insertOrg, lockAndCountOrgs } from "../shared/accounts/index.js";
import { randomToken, sha256 } from "../shared/platform/crypto/hash.js";
import { issueKey } from "../shared/platform/crypto/key-format.js";
import { insertDomain } from "../shared/scans/index.js";
import { insertKey, type KeySettings } from "../shared/verify/index.js";
import { transaction, type Pool } from "../shared/platform/db/pool.js";

export interface DemoSeed {
  orgId: number;
  clientKey: string;
  serverKey: string;
  domain: string;
}

export const DEMO_DOMAIN = "demo.example";

function settings(name: string, domain: string | null): KeySettings {
  return {
    name,
    domain,
    environment: "development",
    industry: "",
    scopes: [],
    ip_allow: [],
    ip_deny: [],
    ip_binding: false,
    countries_allow: [],
    countries_block: [],
    rate_per_minute: 600,
    rate_per_source_per_minute: null,
    is_trial: false,
    expires_at: null,
    botcheck: { enabled: false, hold_ms: 1500, allow_desktop: true, allow_tablet: true, allow_mobile: true, blocked_url: null },
    firewall: null,
    content_origin: null,
  };
}

/** A demo organization with one client and one server key, when the database has no organization. */
export async function seedDemo(db: Pool, nowMs: number, production: boolean): Promise<DemoSeed | null> {
  return transaction(db, async (tx) => {
    // Two supervisors starting at once must not both seed: the table lock queues the second.
    if ((await lockAndCountOrgs(tx)) > 0) return null;
    const org = await insertOrg(tx, { name: "Demo", plan: "professional", fixTargetDays: 30, subscription: "active", nowMs });
    await insertMember(tx, { orgId: org.id, name: "Demo Owner", email: "owner@demo.example", role: "owner", nowMs });
    await insertDomain(tx, { orgId: org.id, name: DEMO_DOMAIN, token: randomToken(32), verified: true, nowMs });
    const client = issueKey("client", production);
    const server = issueKey("server", production);
    await insertKey(tx, {
      orgId: org.id,
      hash: sha256(client.key),
      prefix: client.prefix,
      kind: "client",
      settings: settings("Demo site", DEMO_DOMAIN),
      nowMs,
    });
    await insertKey(tx, {
      orgId: org.id,
      hash: sha256(server.key),
      prefix: server.prefix,
      kind: "server",
      settings: settings("Demo backend", DEMO_DOMAIN),
      nowMs,
    });
    await recordActivity(tx, {
      orgId: org.id,
      atMs: nowMs,
      who: "system",
      via: "system",
      group: "settings",
      action: "Demo organization seeded",
      actionCode: "org.seeded",
    });
    return { orgId: org.id, clientKey: client.key, serverKey: server.key, domain: DEMO_DOMAIN };
  });
}
