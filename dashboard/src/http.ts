/**
 * One JSON request, and its answer as a value: the dashboard never throws for a refusal.
 * A refusal keeps the API's `reason` and the sentence to show (the API's own `message` or
 * `detail` when it sent one, else ours for the reason).
 */

export interface Success<T> {
  ok: true;
  status: number;
  data: T;
  headers: Headers;
}

export interface Refusal {
  ok: false;
  /** 0 when the service could not be reached. */
  status: number;
  reason: string;
  message: string;
  /** The API's `detail` or `error`, when it named what to fix. */
  detail?: string;
}

export type Answer<T> = Success<T> | Refusal;

/** Sentences for the reasons a person meets in the dashboard; the reason code is always shown beside it. */
const MESSAGES: Record<string, string> = {
  network: "The service could not be reached. Check your connection and try again.",
  unauthorized: "You are not signed in, or your credentials are no longer valid.",
  admin_disabled: "The admin API is off on this server (no ADMIN_TOKEN is set).",
  forbidden: "Your role does not allow this.",
  insufficient_scope: "This token may only read.",
  not_found: "Not found: it does not exist, or it is not your organization's.",
  conflict: "That conflicts with what exists already.",
  unknown_endpoint: "This server does not offer this yet.",
  method_not_allowed: "This server does not offer this yet.",
  key_limit_reached: "Your plan allows no more keys. Revoke one or change plan.",
  limit_reached: "This is the most the organization may hold. Remove one first.",
  bad_json: "The request was malformed.",
  bad_domain: "That is not a domain name.",
  bad_cidr: "An address or CIDR block is malformed.",
  bad_ip_allow: "An allowed address or CIDR block is malformed.",
  bad_ip_deny: "A denied address or CIDR block is malformed.",
  bad_country: "A country code is not an ISO 3166-1 alpha-2 code.",
  bad_countries_allow: "An allowed country is not an ISO 3166-1 alpha-2 code.",
  bad_countries_block: "A blocked country is not an ISO 3166-1 alpha-2 code.",
  bad_scopes: "A scope has characters other than letters, digits and _ . : -",
  bad_rate_per_minute: "The rate must be a whole number from 1 to 10,000,000.",
  bad_url: "That URL is refused.",
  bad_value: "The value does not match its type.",
  bad_content_key: "Content keys are 1 to 128 letters, digits or _ . : -",
  bad_name: "Names are 1 to 128 letters, digits or _ . : -",
  bad_expires_at: "The expiry must be in the future.",
  bad_ends_at: "The end must be after the start, and not over already.",
  bad_due: "The due date is malformed.",
  due_in_past: "The due date is in the past.",
  unknown_owner: "That e-mail is not a member's.",
  missing_key: "Connect a server key first.",
  invalid_key: "The server key is unknown or revoked.",
  server_key_required: "These pages need a server key, not a client key.",
  domain_mismatch: "The server key is locked to another domain.",
  domain_not_verified: "That domain is not verified yet.",
  no_scan: "No scan has run for this domain yet.",
  scan_rate_limited: "The hourly budget of fresh scans is spent. Try again after the reset.",
  timeout: "The service did not answer in time. Try again.",
  delivery_failed: "The test event was not delivered.",
  scan_failed: "The scan failed. Try again later.",
  usage_limit_exceeded: "The plan's allowance for this cycle is spent.",
  rate_limited: "Too many calls in one minute. Wait a moment.",
  internal_error: "The service failed (its log has the request id).",
  unavailable: "The service is unavailable for a moment. Try again.",
  csrf_rejected: "The request was refused. Reload the page and try again.",
  session_expired: "Your session has ended. Sign in again.",
  invalid_link: "This link is unknown, expired or already used. Ask for a new sign-in link.",
  invalid_passkey: "The passkey could not be verified. Try again.",
  signin_rate_limited: "Too many attempts. Wait a few minutes and try again.",
  reauthentication_required: "For your safety, sign in again before adding a passkey.",
};

export function sentenceFor(reason: string): string {
  return MESSAGES[reason] ?? "The request was refused.";
}

function text(value: unknown): string | undefined {
  return typeof value === "string" && value !== "" ? value : undefined;
}

export async function send<T>(url: string, init: RequestInit): Promise<Answer<T>> {
  let response: Response;
  try {
    response = await fetch(url, { cache: "no-store", ...init });
  } catch {
    return { ok: false, status: 0, reason: "network", message: sentenceFor("network") };
  }
  let body: Record<string, unknown> = {};
  try {
    const parsed: unknown = await response.json();
    if (parsed !== null && typeof parsed === "object" && !Array.isArray(parsed)) body = parsed as Record<string, unknown>;
  } catch {
    /* not JSON: the status says enough */
  }
  // Public endpoints answer refusals with `ok:false` (or verify's `authorized:false`) and a reason.
  if (response.ok && body.ok !== false) return { ok: true, status: response.status, data: body as T, headers: response.headers };
  const reason = text(body.reason) ?? `http_${response.status}`;
  const detail = text(body.detail) ?? text(body.error);
  return { ok: false, status: response.status, reason, message: text(body.message) ?? sentenceFor(reason), detail };
}
