import { randomToken, sha256 } from "../../shared/platform/crypto/hash.js";
import { issueKey } from "../../shared/platform/crypto/key-format.js";
import { insertDomain } from "../../shared/scans/index.js";
import { insertKey } from "../../shared/verify/index.js";
import { insertMember, insertOrg } from "../../shared/accounts/index.js";
import { transaction, type Pool } from "../../shared/platform/db/pool.js";

/**
 * The scan and assignment part of `npm run load`: one organization per load domain (the
 * budgets of interface.md section 8, 10 fresh scans and 120 assignment changes per hour,
 * are per organization, so the load spreads over several), each with its verified domain,
 * two members to own findings and a server key locked to the domain. `firstScans` runs one
 * scan per domain before the timed run so the findings the changes name exist.
 */
export interface ScanOrg {
  orgId: number;
  domain: string;
  key: string;
  owners: string[];
}

export interface ScanTarget extends ScanOrg {
  /** Finding ids the first scan reported as warn or fail. */
  findings: string[];
}

/** A server key's settings: no rate limit that could stop the run, locked to `domain`, bound to loopback. */
export function serverKeySettings(name: string, domain: string) {
  return {
    name,
    domain,
    environment: "production",
    industry: "",
    scopes: [],
    ip_allow: ["127.0.0.1"],
    ip_deny: [],
    ip_binding: true,
    countries_allow: [],
    countries_block: [],
    rate_per_minute: 10_000_000,
    rate_per_source_per_minute: null,
    is_trial: false,
    expires_at: null,
    botcheck: { enabled: false, hold_ms: 0, allow_desktop: true, allow_tablet: true, allow_mobile: true, blocked_url: null },
    firewall: null,
    content_origin: null,
  };
}

export async function insertServerKey(pool: Pool, orgId: number, name: string, domain: string, nowMs: number): Promise<string> {
  const { key, prefix } = issueKey("server", true);
  await transaction(pool, (tx) =>
    insertKey(tx, { orgId, hash: sha256(key), prefix, kind: "server", nowMs, settings: serverKeySettings(name, domain) }),
  );
  return key;
}

export async function seedScanOrgs(pool: Pool, domains: readonly string[], nowMs: number): Promise<ScanOrg[]> {
  const orgs: ScanOrg[] = [];
  for (const domain of domains) {
    const orgId = await transaction(pool, async (tx) => {
      const org = await insertOrg(tx, { name: `Load ${domain}`, plan: "enterprise", fixTargetDays: 30, subscription: "active", nowMs });
      await insertDomain(tx, { orgId: org.id, name: domain, token: randomToken(32), verified: true, nowMs });
      return org.id;
    });
    const owners = [`alice@${domain}`, `bob@${domain}`];
    await transaction(pool, async (tx) => {
      for (const email of owners) await insertMember(tx, { orgId, name: email.split("@")[0], email, role: "member", nowMs });
    });
    orgs.push({ orgId, domain, key: await insertServerKey(pool, orgId, `Load scans ${domain}`, domain, nowMs), owners });
  }
  return orgs;
}

interface ScanAnswer {
  ok?: boolean;
  web?: { findings?: { id: string; status: string }[] };
  dns?: { findings?: { id: string; status: string }[] };
}

/** One fresh scan per organization through scan.php, `parallel` at a time; fails the run when a scan does not answer 200 with findings. */
export async function firstScans(url: string, orgs: readonly ScanOrg[], parallel = 4): Promise<ScanTarget[]> {
  const targets: ScanTarget[] = [];
  for (let i = 0; i < orgs.length; i += parallel) {
    targets.push(
      ...(await Promise.all(
        orgs.slice(i, i + parallel).map(async (org) => {
          const res = await fetch(`${url}/api/v1/scan.php`, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({ key: org.key, domain: org.domain }),
          });
          const body = (await res.json()) as ScanAnswer;
          const findings = [...(body.web?.findings ?? []), ...(body.dns?.findings ?? [])]
            .filter((f) => f.status === "fail" || f.status === "warn")
            .map((f) => f.id);
          if (res.status !== 200 || findings.length === 0)
            throw new Error(`first scan of ${org.domain}: ${res.status} ${JSON.stringify(body).slice(0, 300)}`);
          return { ...org, findings };
        }),
      )),
    );
  }
  return targets;
}

/**
 * The change bodies: round after round over the organizations (so each spends its own
 * budget evenly), each round moving another finding to the next owner, status and due date.
 */
export function changeBodies(targets: readonly ScanTarget[], nowMs: number): string[] {
  const statuses = ["in_progress", "done", "open"];
  const bodies: string[] = [];
  for (let round = 0; round < 6; round++) {
    const due = new Date(nowMs + (7 + round) * 86_400_000).toISOString().slice(0, 10);
    for (const t of targets) {
      bodies.push(
        JSON.stringify({
          key: t.key,
          domain: t.domain,
          for_domain: t.domain,
          finding_key: t.findings[round % t.findings.length],
          owner: t.owners[round % t.owners.length],
          status: statuses[round % statuses.length],
          due,
        }),
      );
    }
  }
  return bodies;
}
