import { randomToken, sha256 } from "../shared/platform/crypto/hash.js";
import { issueKey } from "../shared/platform/crypto/key-format.js";
import { findDomain, insertDomain, orgOfVerifiedDomain } from "../shared/scans/index.js";
import { insertKey, keysOfOrg, setKeyStatus, type KeySettings } from "../shared/verify/index.js";
import { transaction, type Pool } from "../shared/platform/db/pool.js";
import { countPasskeys, insertLink, LIFETIMES, membershipsOf, newToken, tokenHash } from "../shared/accounts/index.js";
import { DEMO_PAGE_HOST } from "../ingress/routes/demo.js";
import { DEMO_DOMAIN } from "./seed.js";

/**
 * Keys of the demo page `{site_url}/demo` (docs/embed.md). The page is served from the
 * gateway itself, so the browser calls botcheck.php from the gateway's own host: the
 * client key is locked to `demo.localhost`, a name every current browser resolves to
 * the loopback address (RFC 6761) and treats as a secure context, so the page can be
 * opened at http://demo.localhost:PORT/demo with nothing to configure.
 *
 * Only a key's hash is stored, so the values cannot be read back on a later start:
 * each start in demo mode revokes the previous demo-page keys of the demo organization
 * and issues fresh ones, which the supervisor hands to its children
 * (DEMO_CLIENT_KEY, DEMO_SERVER_KEY) and nobody else.
 */

const CLIENT_NAME = "Demo page";
const SERVER_NAME = "Demo page backend";

function settings(name: string, botcheck: boolean): KeySettings {
  return {
    name,
    domain: DEMO_PAGE_HOST,
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
    botcheck: { enabled: botcheck, hold_ms: 1500, allow_desktop: true, allow_tablet: true, allow_mobile: true, blocked_url: null },
    firewall: null,
    content_origin: null,
  };
}

/** Fresh demo-page keys for the seeded demo organization; null when the database has none. */
export async function prepareDemoPage(db: Pool, nowMs: number, production: boolean): Promise<{ client: string; server: string } | null> {
  return transaction(db, async (tx) => {
    const orgId = await orgOfVerifiedDomain(tx, DEMO_DOMAIN);
    if (orgId === null) return null;
    if (!(await findDomain(tx, orgId, DEMO_PAGE_HOST))) {
      await insertDomain(tx, { orgId, name: DEMO_PAGE_HOST, token: randomToken(32), verified: true, nowMs });
    }
    for (const key of await keysOfOrg(tx, orgId)) {
      if ((key.name === CLIENT_NAME || key.name === SERVER_NAME) && key.status !== "revoked")
        await setKeyStatus(tx, key.id, "revoked", nowMs);
    }
    const client = issueKey("client", production);
    const server = issueKey("server", production);
    await insertKey(tx, {
      orgId,
      hash: sha256(client.key),
      prefix: client.prefix,
      kind: "client",
      settings: settings(CLIENT_NAME, true),
      nowMs,
    });
    await insertKey(tx, {
      orgId,
      hash: sha256(server.key),
      prefix: server.prefix,
      kind: "server",
      settings: settings(SERVER_NAME, false),
      nowMs,
    });
    return { client: client.key, server: server.key };
  });
}

/**
 * Demo mode: a way in to the dashboard for the demo organization's owner, printed at start
 * (docs/dashboard.md). Without a passkey yet, an invitation link (registers one, 72 h);
 * after, a sign-in link (15 min). Null when the demo owner does not exist.
 */
export async function demoOwnerLink(pool: Pool, nowMs: number): Promise<{ path: string; expiresAtMs: number } | null> {
  const owner = (await membershipsOf(pool, "owner@demo.example")).find((m) => m.role === "owner");
  if (!owner) return null;
  const invite = (await countPasskeys(pool, owner.id)) === 0;
  const token = newToken();
  const link = await insertLink(pool, {
    memberId: owner.id,
    purpose: invite ? "invitation" : "signin",
    tokenHash: tokenHash(token),
    nowMs,
    lifetimeMs: invite ? LIFETIMES.invitationMs : LIFETIMES.signinLinkMs,
  });
  return {
    path: invite ? `/dashboard/invitation#token=${token}` : `/dashboard/signin#link=${token}`,
    expiresAtMs: link.expires_at.getTime(),
  };
}
