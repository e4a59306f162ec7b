/**
 * Every refusal reason of the public and operator contracts, once: its HTTP status and
 * whether a refused call with one of the account's keys counts against the allowance
 * (interface.md section 8). A reason is never renamed or reused.
 */
export const REASONS = {
  // Enforcement chain (interface.md section 7).
  missing_key: { status: 400, counts: false, message: "No API key was sent." },
  invalid_key: { status: 401, counts: false, message: "The API key does not exist or was revoked." },
  key_suspended: { status: 403, counts: false, message: "The API key is paused." },
  expired: { status: 403, counts: true, message: "The API key is past its expiry." },
  ip_blocked: { status: 403, counts: true, message: "The caller's address is on the key's deny list." },
  ip_not_allowed: { status: 403, counts: true, message: "The caller's address is not in the key's allowlist." },
  geo_blocked: { status: 403, counts: true, message: "Calls from this country are blocked for the key." },
  geo_not_allowed: { status: 403, counts: true, message: "Calls from this country are not allowed for the key." },
  insufficient_scope: { status: 403, counts: true, message: "The key (or the organization token) lacks the requested scope." },
  domain_mismatch: { status: 403, counts: true, message: "The key is not bound to this domain." },
  domain_not_verified: { status: 403, counts: true, message: "Ownership of the key's domain was never proved." },
  usage_limit_exceeded: { status: 429, counts: false, message: "The plan's allowance for this cycle is spent." },
  rate_limited: { status: 429, counts: false, message: "Too many calls from this key in one minute." },
  installation_pending: { status: 403, counts: true, message: "This installation awaits the account owner's approval." },
  installation_blocked: { status: 403, counts: true, message: "This installation is blocked." },
  // Additions (docs/security.md, item 4): caps per key per UTC day.
  installation_limit_reached: {
    status: 403,
    counts: true,
    message: "Too many new installations of this key today; the owner can approve this one by its name.",
  },
  // No longer produced: a label cap folds labels into "(other)" and never refuses a call. Kept: a reason is never reused.
  endpoint_limit_reached: { status: 400, counts: false, message: "Too many distinct endpoint labels for this key today." },
  server_key_required: { status: 403, counts: false, message: "This endpoint needs a server key." },
  ip_binding_required: { status: 403, counts: false, message: "Secrets need a key with an IP allowlist." },
  origin_mismatch: { status: 403, counts: false, message: "Protected content requested from another page." },
  // Endpoint-specific.
  not_found: { status: 404, counts: true, message: "Not found." },
  no_scan: { status: 404, counts: true, message: "No scan of this domain has run yet." },
  missing_name: { status: 400, counts: true, message: "The secret name is missing." },
  unknown_secret: { status: 404, counts: true, message: "No secret of that name." },
  scan_rate_limited: { status: 429, counts: true, message: "More than 10 fresh scans this hour." },
  unknown_owner: { status: 400, counts: true, message: "The owner is not a member of the organization." },
  bad_from: { status: 400, counts: true, message: "from must be YYYY-MM-DD." },
  bad_to: { status: 400, counts: true, message: "to must be YYYY-MM-DD." },
  unknown_group: { status: 400, counts: true, message: "Unknown activity group." },
  unknown_domain: { status: 404, counts: true, message: "No scan of this domain is stored." },
  bad_finding_key: { status: 400, counts: true, message: "finding_key must be <group>:<name>." },
  unknown_status: { status: 400, counts: true, message: "status must be open, in_progress or done." },
  bad_due: { status: 400, counts: true, message: "due must be YYYY-MM-DD." },
  due_in_past: { status: 400, counts: true, message: "due must be today or later." },
  // Findings workflow (docs/findings.md).
  unknown_finding: { status: 404, counts: true, message: "The domain's latest scans never reported this finding." },
  missing_for_domain: { status: 400, counts: true, message: "for_domain is required." },
  assignment_rate_limited: { status: 429, counts: true, message: "More than 120 assignment changes this hour." },
  recheck_rate_limited: { status: 429, counts: true, message: "More than 30 re-checks this hour." },
  bad_limit: {
    status: 400,
    counts: true,
    message: "limit must be a whole number in the endpoint's range (activity.php 1-500, events.php 1-1000).",
  },
  bad_page: { status: 400, counts: true, message: "page must be a whole number from 1." },
  expired_challenge: { status: 403, counts: true, message: "The challenge expired or was already used." },
  hold_too_short: { status: 403, counts: true, message: "The hold was shorter than required." },
  bot_ua: { status: 403, counts: true, message: "The visitor's user agent is a bot." },
  missing_headers: { status: 403, counts: true, message: "The visitor's request lacks a browser's headers." },
  automation: { status: 403, counts: true, message: "The page reported browser automation." },
  device_not_allowed: { status: 403, counts: true, message: "This device class is not allowed." },
  headless: { status: 403, counts: true, message: "The visitor's browser is headless." },
  inconsistent_client: { status: 403, counts: true, message: "The visitor's headers contradict its browser or device." },
  invalid_challenge: { status: 403, counts: true, message: "The challenge is malformed or belongs to another key or browser." },
  bad_since: { status: 400, counts: true, message: "since must be a whole number (an event id)." },
  unknown_type: { status: 400, counts: true, message: "type must be one of the event types of the feed." },
  bad_format: { status: 400, counts: true, message: "format must be ndjson or syslog." },
  // Request-level (any endpoint).
  bad_request: { status: 400, counts: false, message: "The request is malformed." },
  // Judged after the key is known (verify's chain): a refusal made with the account's key, so it counts.
  bad_ip: { status: 400, counts: true, message: "The ip parameter is not an IPv4 or IPv6 address." },
  payload_too_large: { status: 413, counts: false, message: "The request body is too large." },
  method_not_allowed: { status: 405, counts: false, message: "Method not allowed." },
  unknown_endpoint: { status: 404, counts: false, message: "No such endpoint." },
  // Operator contract (operator-api.md section 2).
  unauthorized: { status: 401, counts: false, message: "Wrong, missing, expired or revoked admin credentials." },
  admin_disabled: { status: 503, counts: false, message: "ADMIN_TOKEN is not set." },
  conflict: { status: 409, counts: false, message: "Conflict." },
  key_limit_reached: { status: 409, counts: false, message: "The plan's number of keys is reached." },
  // Addition (docs/decisions.md, "Limits"): the answer names `resource` and `limit`.
  limit_reached: { status: 409, counts: false, message: "The organization holds as many of these as it may; remove one first." },
  // Accounts (operator-api.md section 5). A read-only token's write is `insufficient_scope` above.
  forbidden: {
    status: 403,
    counts: false,
    message: "The caller may not make this call (role too low, operator only, or a token minting tokens or members).",
  },
  internal_error: { status: 500, counts: false, message: "The service failed; treat it as unreachable." },
  unavailable: { status: 503, counts: false, message: "The service is starting or a dependency is down." },
  scan_failed: { status: 502, counts: false, message: "The scan could not run; try again." },
  missing_domain: { status: 400, counts: true, message: "The domain parameter is required." },
  delivery_failed: { status: 502, counts: false, message: "The SIEM destination did not take the test event." },
  // Addition (docs/events.md, "Send test event"): SIEM_TESTS_OUTSTANDING in shared/events/siem-stream.ts.
  test_rate_limited: {
    status: 429,
    counts: false,
    message: "The organization has 3 test events that no pusher has handled yet; send another once one is answered.",
  },
  timeout: { status: 504, counts: false, message: "The work did not finish in time; treat it as unreachable." },
  // Member sign-in (additions: docs/accounts-members.md).
  session_expired: { status: 401, counts: false, message: "The session expired or was revoked; sign in again." },
  csrf_rejected: {
    status: 403,
    counts: false,
    message: "A change made with a session needs the site's Origin and the session's X-CSRF-Token.",
  },
  invalid_link: { status: 400, counts: false, message: "The link is unknown, expired or already used; ask for a new one." },
  invalid_passkey: { status: 401, counts: false, message: "The passkey's answer could not be verified." },
  reauthentication_required: {
    status: 403,
    counts: false,
    message: "Adding a passkey needs a sign-in at most 15 minutes old; sign in again.",
  },
  signin_rate_limited: { status: 429, counts: false, message: "Too many sign-in attempts or link requests; try again later." },
} as const satisfies Record<string, { status: number; counts: boolean; message: string }>;

export type Reason = keyof typeof REASONS;

export function statusOf(reason: Reason): number {
  return REASONS[reason].status;
}

export function isReason(value: string): value is Reason {
  return Object.hasOwn(REASONS, value);
}
