import { txtRecord, type DomainRow } from "../../shared/scans/db/domains.js";
import { ADMIN_TOKEN, type TestGateway } from "../helpers/gateway.js";

/**
 * TEST ONLY. The reads of operator-api.md section 5 that main does not answer yet
 * (`GET /me` and the lists), answered for the browser from the real database and the real
 * admin API, in the contract's shapes, so the dashboard's pages can be walked before the
 * accounts branch lands. Each stand-in steps aside by itself: the real gateway is asked
 * first, and only an `unknown_endpoint` / `method_not_allowed` answer is replaced. Nothing
 * here ships: the dashboard calls the contract's routes and nothing else.
 */

export interface Reply {
  status: number;
  body: unknown;
}

type StandIn = (gw: TestGateway, match: string[], query: URLSearchParams, authorization: string) => Promise<Reply>;

function paged<T>(name: string, all: T[], query: URLSearchParams): Reply {
  const limit = Math.min(500, Math.max(1, Number(query.get("limit") ?? "100") || 100));
  const page = Math.max(1, Number(query.get("page") ?? "1") || 1);
  const rows = all.slice((page - 1) * limit, page * limit);
  return { status: 200, body: { ok: true, [name]: rows, total: all.length, page, limit, has_more: page * limit < all.length } };
}

async function adminGet(gw: TestGateway, path: string, authorization: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const answer = await gw.call(`/admin/v1${path}`, { headers: { authorization } });
  return { status: answer.status, body: answer.body as Record<string, unknown> };
}

const iso = (d: Date | null) => (d ? d.toISOString().replace(/\.\d{3}Z$/, "Z") : null);

const STAND_INS: [RegExp, StandIn][] = [
  [
    /^\/admin\/v1\/me$/,
    async (_gw, _m, _q, authorization) =>
      authorization === `Bearer ${ADMIN_TOKEN}`
        ? { status: 200, body: { ok: true, principal: { kind: "operator" } } }
        : { status: 401, body: { ok: false, reason: "unauthorized" } },
  ],
  [
    /^\/admin\/v1\/orgs$/,
    async (gw, _m, query, authorization) => {
      const { rows } = await gw.ctx.db.query<{ id: string }>("SELECT id FROM orgs ORDER BY id DESC");
      const orgs = [];
      for (const row of rows) {
        const org = await adminGet(gw, `/orgs/${row.id}`, authorization);
        if (org.status !== 200) return org;
        orgs.push(org.body.org);
      }
      return paged("orgs", orgs, query);
    },
  ],
  [
    /^\/admin\/v1\/orgs\/(\d+)\/keys$/,
    async (gw, match, query, authorization) => {
      const { rows } = await gw.ctx.db.query<{ id: string; last_used_at: Date | null }>(
        "SELECT id, NULL::timestamptz AS last_used_at FROM api_keys WHERE org_id = $1 ORDER BY id DESC",
        [match[1]],
      );
      const keys = [];
      for (const row of rows) {
        const key = await adminGet(gw, `/keys/${row.id}`, authorization);
        if (key.status !== 200) return key;
        const details = key.body.details as Record<string, unknown>;
        if (query.get("status") && details.status !== query.get("status")) continue;
        if (query.get("kind") && details.kind !== query.get("kind")) continue;
        keys.push({ ...details, last_used_at: iso(row.last_used_at) });
      }
      return paged("keys", keys, query);
    },
  ],
  [
    /^\/admin\/v1\/orgs\/(\d+)\/domains$/,
    async (gw, match, query) => {
      const { rows } = await gw.ctx.db.query<DomainRow>("SELECT * FROM domains WHERE org_id = $1 ORDER BY id DESC", [match[1]]);
      const domains = rows.map((row) => ({
        name: row.name,
        verified: row.verified,
        verified_at: iso(row.verified_at),
        verification_token: row.verification_token,
        txt_record: txtRecord(row),
      }));
      return paged("domains", domains, query);
    },
  ],
  [
    /^\/admin\/v1\/orgs\/(\d+)\/members$/,
    async (gw, match, query) => {
      const { rows } = await gw.ctx.db.query<{ id: string; name: string; email: string; role: string; created_at: Date }>(
        "SELECT id, name, email, role, created_at FROM members WHERE org_id = $1 ORDER BY id DESC",
        [match[1]],
      );
      return paged(
        "members",
        rows.map((r) => ({ id: Number(r.id), name: r.name, email: r.email, role: r.role, created_at: iso(r.created_at) })),
        query,
      );
    },
  ],
  [
    /^\/admin\/v1\/orgs\/(\d+)\/content$/,
    async (gw, match, query) => {
      const { rows } = await gw.ctx.db.query<{ content_key: string; type: string; value: unknown; updated_at: Date }>(
        "SELECT content_key, type, value, updated_at FROM content WHERE org_id = $1 ORDER BY updated_at DESC",
        [match[1]],
      );
      return paged(
        "content",
        rows.map((r) => ({ content_key: r.content_key, type: r.type, value: r.value, updated_at: iso(r.updated_at) })),
        query,
      );
    },
  ],
  [
    /^\/admin\/v1\/orgs\/(\d+)\/secrets$/,
    async (gw, match, query) => {
      const { rows } = await gw.ctx.db.query<{ name: string; updated_at: Date }>(
        "SELECT name, updated_at FROM secrets WHERE org_id = $1 ORDER BY updated_at DESC",
        [match[1]],
      );
      return paged(
        "secrets",
        rows.map((r) => ({ name: r.name, updated_at: iso(r.updated_at) })),
        query,
      );
    },
  ],
  [
    /^\/admin\/v1\/orgs\/(\d+)\/risks$/,
    async (gw, match, query) => {
      const { rows } = await gw.ctx.db.query<{
        domain: string;
        finding_key: string;
        note: string;
        acked_at: Date;
        expires_at: Date | null;
      }>(
        "SELECT domain, finding_key, note, acked_at, expires_at FROM acknowledgements WHERE org_id = $1 AND released_at IS NULL ORDER BY acked_at DESC",
        [match[1]],
      );
      const now = gw.ctx.clock.now();
      return paged(
        "risks",
        rows.map((r) => ({
          domain: r.domain,
          finding_key: r.finding_key,
          note: r.note,
          acked_at: iso(r.acked_at),
          expires_at: iso(r.expires_at),
          expired: r.expires_at !== null && r.expires_at.getTime() <= now,
        })),
        query,
      );
    },
  ],
];

/** The stand-in for a GET the gateway does not answer, or null: the request goes to the gateway as it is. */
export async function standIn(gw: TestGateway, method: string, url: URL, authorization: string): Promise<Reply | null> {
  if (method !== "GET") return null;
  const found = STAND_INS.find(([pattern]) => pattern.test(url.pathname));
  if (!found) return null;
  const real = await gw.call(`${url.pathname}${url.search}`, { headers: authorization ? { authorization } : {} });
  const reason = (real.body as { reason?: string } | null)?.reason;
  if (reason !== "unknown_endpoint" && reason !== "method_not_allowed") return { status: real.status, body: real.body };
  const [pattern, answer] = found;
  return answer(gw, pattern.exec(url.pathname) ?? [], url.searchParams, authorization);
}
