import { ADMIN_API, credentialsLost, requestInit, serverKey } from "./auth.js";
import { send, sentenceFor, type Answer } from "./http.js";
import type {
  ActivityEntry,
  Assignment,
  Budget,
  ContentItem,
  DeadLetter,
  Delivery,
  Destination,
  Domain,
  HistoryPoint,
  Incident,
  Installation,
  KeyDetails,
  Maintenance,
  Member,
  Org,
  OrgInstallation,
  Paged,
  Risk,
  ScanResult,
  SecretInfo,
  Service,
  TokenDetails,
  UsageDay,
  Webhook,
} from "./shapes.js";

export type * from "./shapes.js";

/**
 * The calls the dashboard makes, one function each, typed by the contracts: the admin API
 * (operator-api.md sections 2 and 5) and the public security-data endpoints
 * (interface.md 4.5, 4.7-4.9) that take a server key. The dashboard calls nothing a token
 * could not call.
 */

export type Query = Record<string, string | number | boolean | undefined | null>;

function queryString(query: Query | undefined): string {
  if (!query) return "";
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    if (value === undefined || value === null || value === "" || value === false) continue;
    params.set(name, value === true ? "1" : String(value));
  }
  const text = params.toString();
  return text ? `?${text}` : "";
}

/** Listeners told when a call answers 401: the app sends the person to the sign-in page. */
const signedOutListeners = new Set<() => void>();
export function onSignedOut(listener: () => void): () => void {
  signedOutListeners.add(listener);
  return () => signedOutListeners.delete(listener);
}

export async function admin<T>(
  method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE",
  path: string,
  options: { query?: Query; body?: unknown } = {},
): Promise<Answer<T>> {
  const init = requestInit(method);
  const answer = await send<T>(`${ADMIN_API}${path}${queryString(options.query)}`, {
    method,
    headers: init.headers,
    credentials: init.credentials,
    body: method === "GET" || method === "DELETE" ? undefined : JSON.stringify(options.body ?? {}),
  });
  if (!answer.ok && answer.status === 401) {
    credentialsLost();
    for (const listener of signedOutListeners) listener();
  }
  return answer;
}

const seg = encodeURIComponent;

export function budgetOf(headers: Headers): Budget | null {
  const limit = headers.get("x-ratelimit-limit");
  const remaining = headers.get("x-ratelimit-remaining");
  const reset = headers.get("x-ratelimit-reset");
  if (limit === null || remaining === null || reset === null) return null;
  return { limit: Number(limit), remaining: Number(remaining), resetAt: Number(reset) };
}

// ---- the admin API ----

export const api = {
  me: () => admin<{ principal: unknown }>("GET", "/me"),

  orgs: (query: Query) => admin<Paged & { orgs: Org[] }>("GET", "/orgs", { query }),
  org: (org: number) => admin<{ org: Org }>("GET", `/orgs/${org}`),
  createOrg: (body: { name: string; plan: string }) => admin<{ org: Org }>("POST", "/orgs", { body }),
  patchOrg: (org: number, body: Partial<Pick<Org, "name" | "plan" | "fix_target_days" | "subscription">>) =>
    admin<{ org: Org }>("PATCH", `/orgs/${org}`, { body }),

  /** Every key's usage summed per day; without a range the service's own last 30 days. */
  orgUsage: (org: number, from?: string, to?: string) =>
    admin<{ org_id: number; usage: UsageDay[]; from: string; to: string }>("GET", `/orgs/${org}/usage`, { query: { from, to } }),
  /** The installations of the organization's keys that are not revoked, most recently seen first; filters `status`. */
  orgInstallations: (org: number, query: Query = {}) =>
    admin<Paged & { installations: OrgInstallation[] }>("GET", `/orgs/${org}/installations`, { query }),

  keys: (org: number, query: Query) => admin<Paged & { keys: KeyDetails[] }>("GET", `/orgs/${org}/keys`, { query }),
  createKey: (org: number, body: Record<string, unknown>) =>
    admin<{ key: string; details: KeyDetails }>("POST", `/orgs/${org}/keys`, { body }),
  key: (id: number) => admin<{ details: KeyDetails }>("GET", `/keys/${id}`),
  patchKey: (id: number, body: Record<string, unknown>) => admin<{ details: KeyDetails }>("PATCH", `/keys/${id}`, { body }),
  keyAction: (id: number, action: "suspend" | "resume" | "revoke") => admin<{ details: KeyDetails }>("POST", `/keys/${id}/${action}`),
  rotateKey: (id: number, graceS: number) =>
    admin<{ key: string; details: KeyDetails }>("POST", `/keys/${id}/rotate`, { body: graceS > 0 ? { grace_s: graceS } : {} }),
  /** A key's installations, newest first (those the usage actor has not written down yet first of all). */
  installations: (id: number, query: Query = {}) =>
    admin<Paged & { installations: Installation[] }>("GET", `/keys/${id}/installations`, { query }),
  decideInstallation: (id: number, install: string, decision: "approve" | "block") =>
    admin<{ installation: Installation }>("POST", `/keys/${id}/installations/${seg(install)}/${decision}`),
  /** Without a range the service answers its own last 30 days (its clock decides what "today" is). */
  usage: (id: number, from?: string, to?: string) =>
    admin<{ usage: UsageDay[]; from: string; to: string }>("GET", `/keys/${id}/usage`, { query: { from, to } }),

  domains: (org: number, query: Query = {}) => admin<Paged & { domains: Domain[] }>("GET", `/orgs/${org}/domains`, { query }),
  addDomain: (org: number, domain: string) => admin<{ domain: Domain }>("POST", `/orgs/${org}/domains`, { body: { domain } }),
  verifyDomain: (org: number, domain: string) =>
    admin<{ domain: Domain; checked?: { found: string[]; error?: string } }>("POST", `/orgs/${org}/domains/${seg(domain)}/verify`),

  members: (org: number, query: Query = {}) => admin<Paged & { members: Member[] }>("GET", `/orgs/${org}/members`, { query }),
  addMember: (org: number, body: { name: string; email: string; role: string }) =>
    admin<{ member: Member }>("POST", `/orgs/${org}/members`, { body }),
  setMemberRole: (org: number, id: number, role: string) =>
    admin<{ member: Member }>("PATCH", `/orgs/${org}/members/${id}`, { body: { role } }),
  removeMember: (org: number, id: number) =>
    admin<{ removed: Member; assignments_unassigned: number; default_owner_cleared: boolean; tokens_revoked: number }>(
      "DELETE",
      `/orgs/${org}/members/${id}`,
    ),
  tokens: (org: number) => admin<Paged & { tokens: TokenDetails[] }>("GET", `/orgs/${org}/tokens`),
  createToken: (org: number, body: { name: string; scopes: string[]; expires_at?: string }) =>
    admin<{ token: string; details: TokenDetails }>("POST", `/orgs/${org}/tokens`, { body }),
  revokeToken: (org: number, id: number) => admin<Record<string, unknown>>("DELETE", `/orgs/${org}/tokens/${id}`),

  risks: (org: number, query: Query = {}) => admin<Paged & { risks: Risk[] }>("GET", `/orgs/${org}/risks`, { query }),
  acceptRisk: (org: number, body: { domain: string; finding_key: string; note: string; expires_at: string | null }) =>
    admin<{ acknowledgement: Risk }>("POST", `/orgs/${org}/risks`, { body }),
  releaseRisk: (org: number, domain: string, findingKey: string) =>
    admin<Record<string, unknown>>("DELETE", `/orgs/${org}/risks/${seg(domain)}/${seg(findingKey)}`),

  content: (org: number, query: Query = {}) =>
    admin<Paged & { content: Record<string, ContentItem> | (ContentItem & { content_key: string })[] }>("GET", `/orgs/${org}/content`, {
      query,
    }),
  putContent: (org: number, contentKey: string, type: string, value: unknown) =>
    admin<{ content: Record<string, ContentItem> }>("PUT", `/orgs/${org}/content/${seg(contentKey)}`, { body: { type, value } }),
  deleteContent: (org: number, contentKey: string) => admin<Record<string, unknown>>("DELETE", `/orgs/${org}/content/${seg(contentKey)}`),
  secrets: (org: number, query: Query = {}) => admin<Paged & { secrets: SecretInfo[] }>("GET", `/orgs/${org}/secrets`, { query }),
  putSecret: (org: number, name: string, value: string) =>
    admin<{ secret: SecretInfo }>("PUT", `/orgs/${org}/secrets/${seg(name)}`, { body: { value } }),
  deleteSecret: (org: number, name: string) => admin<Record<string, unknown>>("DELETE", `/orgs/${org}/secrets/${seg(name)}`),

  destinations: (org: number, query: Query = {}) => admin<Paged & { destinations: Destination[] }>("GET", `/orgs/${org}/siem`, { query }),
  addDestination: (org: number, body: { kind: string; url: string; token?: string; index?: string }) =>
    admin<{ destination: Destination }>("POST", `/orgs/${org}/siem`, { body }),
  removeDestination: (org: number, id: number) => admin<Record<string, unknown>>("DELETE", `/orgs/${org}/siem/${id}`),
  testDestination: (org: number, id: number) =>
    admin<{ test: { delivered: boolean; event_id: number } }>("POST", `/orgs/${org}/siem/${id}/test`),
  deadLetters: (org: number, id: number) => admin<{ dead_letters: DeadLetter[] }>("GET", `/orgs/${org}/siem/${id}/dead-letters`),
  retryDeadLetters: (org: number, id: number, ids?: string[]) =>
    admin<{ retried: number; not_found: string[] }>("POST", `/orgs/${org}/siem/${id}/dead-letters/retry`, { body: ids ? { ids } : {} }),
  webhooks: (org: number, query: Query = {}) => admin<Paged & { webhooks: Webhook[] }>("GET", `/orgs/${org}/webhooks`, { query }),
  addWebhook: (org: number, body: { url: string; secret: string }) =>
    admin<{ webhook: Webhook }>("POST", `/orgs/${org}/webhooks`, { body }),
  removeWebhook: (org: number, id: number) => admin<Record<string, unknown>>("DELETE", `/orgs/${org}/webhooks/${id}`),
  deliveries: (org: number, id: number) => admin<{ deliveries: Delivery[] }>("GET", `/orgs/${org}/webhooks/${id}/deliveries`),

  notes: (org: number, domain: string, findingKey: string, query: Query = {}) =>
    admin<Paged & { notes: { id: number; time: string; who: string; body: string }[] }>(
      "GET",
      `/orgs/${org}/assignments/${seg(domain)}/${seg(findingKey)}/notes`,
      { query },
    ),
  addNote: (org: number, domain: string, findingKey: string, who: string, body: string) =>
    admin<{ note: { id: number } }>("POST", `/orgs/${org}/assignments/${seg(domain)}/${seg(findingKey)}/notes`, { body: { who, body } }),

  services: () => admin<{ services: Service[] }>("GET", "/status/services"),
  putService: (key: string, body: { name: string; url: string | null }) =>
    admin<{ service: Service }>("PUT", `/status/services/${seg(key)}`, { body }),
  incidents: () => admin<{ incidents: Incident[] }>("GET", "/status/incidents", { query: { limit: 50 } }),
  createIncident: (body: { title: string; impact: string; affects: string[]; status: string; body: string }) =>
    admin<{ incident: Incident }>("POST", "/status/incidents", { body }),
  updateIncident: (id: number, body: { status: string; body: string }) =>
    admin<{ incident: Incident }>("POST", `/status/incidents/${id}/updates`, { body }),
  /** Any of the fields; a resolved incident may be corrected too. */
  patchIncident: (id: number, body: { postmortem?: string | null; title?: string; impact?: string; affects?: string[] }) =>
    admin<{ incident: Incident }>("PATCH", `/status/incidents/${id}`, { body }),
  maintenance: () => admin<{ maintenance: Maintenance[] }>("GET", "/status/maintenance", { query: { limit: 50 } }),
  createMaintenance: (body: { title: string; body: string; affects: string[]; starts_at: string; ends_at: string }) =>
    admin<{ maintenance: Maintenance }>("POST", "/status/maintenance", { body }),
  /** Any of the fields; a cancelled window, or one that is over, is refused (409 conflict). */
  patchMaintenance: (id: number, body: Partial<{ title: string; body: string; affects: string[]; starts_at: string; ends_at: string }>) =>
    admin<{ maintenance: Maintenance }>("PATCH", `/status/maintenance/${id}`, { body }),
  cancelMaintenance: (id: number) => admin<{ maintenance: Maintenance }>("POST", `/status/maintenance/${id}/cancel`),

  // The member's own sessions and passkeys (session mode): the accounts branch's /admin/v1/auth/.
  sessions: () =>
    admin<{ sessions: { id: number; method: string; user_agent: string; created_at: string; last_seen_at: string; current: boolean }[] }>(
      "GET",
      "/auth/sessions",
    ),
  revokeSession: (id: number) => admin<Record<string, unknown>>("DELETE", `/auth/sessions/${id}`),
  passkeys: () =>
    admin<{ passkeys: { id: number; name: string; created_at: string; last_used_at: string | null }[] }>("GET", "/auth/passkeys"),
  removePasskey: (id: number) => admin<Record<string, unknown>>("DELETE", `/auth/passkeys/${id}`),
};

// ---- the public security-data endpoints, with the server key ----

async function keyed<T>(
  endpoint: "scan" | "assignments" | "activity",
  method: "GET" | "POST",
  params: Query,
  lockDomain = true,
): Promise<Answer<T>> {
  const held = serverKey();
  if (!held) return { ok: false, status: 0, reason: "missing_key", message: sentenceFor("missing_key") };
  const all: Query = { ...(lockDomain && held.domain ? { domain: held.domain } : {}), ...params, key: held.key };
  const url = `/api/v1/${endpoint}.php`;
  if (method === "GET")
    return send<T>(`${url}${queryString(all)}`, { method, credentials: "omit", headers: { accept: "application/json" } });
  const body: Record<string, string> = {};
  for (const [name, value] of Object.entries(all)) if (value !== undefined && value !== null && value !== "") body[name] = String(value);
  return send<T>(url, {
    method,
    credentials: "omit",
    headers: { "content-type": "application/json", accept: "application/json" },
    body: JSON.stringify(body),
  });
}

export const data = {
  /** Every verified domain with its latest grades (a cheap read); scan.php wants one verified domain named. */
  grades: (anyVerified: string) =>
    keyed<{ domains: { domain: string; web: string | null; dns: string | null; active: string | null }[] }>(
      "scan",
      "GET",
      { list: 1, domain: anyVerified },
      false,
    ),
  /** The stored scan (GET: the contract reads with GET, so the key is in the query). */
  scan: (domain: string) => keyed<ScanResult>("scan", "GET", { domain }, false),
  history: (domain: string) =>
    keyed<{ history: { web: HistoryPoint[]; dns: HistoryPoint[]; active: HistoryPoint[] } }>("scan", "GET", { domain, history: 1 }, false),
  runScan: (domain: string) => keyed<ScanResult>("scan", "POST", { domain }, false),
  assignments: (query: Query) => keyed<{ count: number; assignments: Assignment[] }>("assignments", "GET", query),
  story: (forDomain: string, findingKey: string) =>
    keyed<{
      assignment: Assignment;
      history: { time: string; who: string; what: string }[];
      notes: { time: string; who: string; body: string }[];
    }>("assignments", "GET", { for_domain: forDomain, finding_key: findingKey, history: 1 }),
  assign: (body: { for_domain: string; finding_key: string; owner?: string; status?: string; due?: string }) =>
    keyed<{ assignment: Assignment }>("assignments", "POST", body),
  recheck: (forDomain: string, findingKey: string) =>
    keyed<{ assignment?: Assignment; passed: boolean; check_status: string }>("assignments", "POST", {
      for_domain: forDomain,
      finding_key: findingKey,
      recheck: 1,
    }),
  activity: (query: Query) => keyed<Paged & { activity: ActivityEntry[] }>("activity", "POST", query),
};
