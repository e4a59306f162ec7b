import * as content from "../admin/content.js";
import * as domains from "../admin/domains.js";
import * as keyRotation from "../admin/key-rotation.js";
import * as keys from "../admin/keys.js";
import * as members from "../admin/members.js";
import * as notes from "../admin/notes.js";
import * as orgs from "../admin/orgs.js";
import * as risks from "../admin/risks.js";
import * as scans from "../admin/scans.js";
import * as siem from "../admin/siem.js";
import * as maintenance from "../admin/status-maintenance.js";
import * as status from "../admin/status.js";
import * as tokens from "../admin/tokens.js";
import * as webhooks from "../admin/webhooks.js";
import { ORG_USAGE_MAX_DAYS } from "../admin/usage.js";
import { PAGE_DEFAULT_LIMIT, PAGE_MAX, PAGE_MAX_LIMIT } from "../paging.js";
import * as params from "../routes/schemas.js";
import { INSTALLATION_STATUSES } from "../../shared/verify/index.js";
import { PUBLIC_ANSWERS, type Schema } from "./shapes.js";

/**
 * Where each route's input schema comes from: the objects the routes validate with. A
 * route that checks its body by hand (no schema) is described here from the contract,
 * next to its entry. test/ingress/openapi.test.ts fails when a write route of the admin
 * table has no entry, or an entry names a route that no longer exists.
 */

/** Admin request bodies by `METHOD path` (paths as in admin/routes.ts). */
export const ADMIN_BODIES: Record<string, Schema> = {
  // The test clock checks advance_s by hand (system.ts moveClock): described from operator-api.md section 4.
  "POST /clock": {
    type: "object",
    required: ["advance_s"],
    properties: { advance_s: { type: "number", minimum: 0, maximum: 315_360_000 } },
  },
  "POST /orgs": orgs.createOrgBody.schema,
  "PATCH /orgs/:org": orgs.patchOrgBody.schema,
  "POST /orgs/:org/members": orgs.memberBody.schema,
  "PATCH /orgs/:org/members/:id": members.roleBody.schema,
  "POST /orgs/:org/tokens": tokens.tokenBody.schema,
  "POST /orgs/:org/domains": domains.domainBody.schema,
  "POST /orgs/:org/keys": keys.createBody.schema,
  "PATCH /keys/:id": keys.patchBody.schema,
  "PUT /orgs/:org/content/:content_key": content.contentBody.schema,
  "PUT /orgs/:org/secrets/:name": content.secretBody.schema,
  "POST /orgs/:org/risks": risks.riskBody.schema,
  "POST /orgs/:org/scans": scans.runBody.schema,
  "POST /orgs/:org/webhooks": webhooks.webhookBody.schema,
  "POST /orgs/:org/assignments/:domain/:finding_key/notes": notes.noteBody.schema,
  "POST /keys/:id/rotate": keyRotation.rotateBody.schema,
  "POST /orgs/:org/siem": siem.destinationBody.schema,
  "POST /orgs/:org/siem/:id/dead-letters/retry": siem.retryBody.schema,
  "PUT /status/services/:service": status.serviceBody.schema,
  "POST /status/incidents": status.incidentBody.schema,
  "PATCH /status/incidents/:id": status.patchBody.schema,
  "POST /status/incidents/:id/updates": status.updateBody.schema,
  "POST /status/maintenance": maintenance.createBody.schema,
  "PATCH /status/maintenance/:id": maintenance.patchBody.schema,
};

/** Admin write routes that take no body (an action on the path's resource). */
export const ADMIN_BODILESS = new Set([
  "POST /orgs/:org/domains/:domain/verify",
  "POST /keys/:id/suspend",
  "POST /keys/:id/resume",
  "POST /keys/:id/revoke",
  "POST /keys/:id/installations/:install/approve",
  "POST /keys/:id/installations/:install/block",
  "POST /orgs/:org/siem/:id/test",
  "POST /status/maintenance/:id/cancel",
]);

const paging: Record<string, Schema> = {
  limit: { type: "integer", minimum: 1, maximum: PAGE_MAX_LIMIT, default: PAGE_DEFAULT_LIMIT },
  page: { type: "integer", minimum: 1, maximum: PAGE_MAX, default: 1 },
};
const dates = (from: string): Record<string, Schema> => ({
  from: { type: "string", format: "date", description: from },
  to: { type: "string", format: "date", description: "The last day (UTC), included; default today." },
});

/**
 * Query parameters of admin reads by `METHOD path`, none required. These routes check them
 * by hand (ingress/paging.ts, admin/usage.ts): described here from those checks.
 */
export const ADMIN_QUERIES: Record<string, Record<string, Schema>> = {
  "GET /keys/:id/usage": dates("The first day (UTC), included; default 29 days before today."),
  "GET /orgs/:org/usage": dates(
    `The first day (UTC), included; default 29 days before today. Not after \`to\`; from \`from\` to \`to\` at most ${ORG_USAGE_MAX_DAYS} days.`,
  ),
  "GET /orgs/:org/installations": { status: { enum: INSTALLATION_STATUSES }, ...paging },
  "GET /keys/:id/installations": paging,
  "GET /orgs/:org/siem": paging,
  "GET /orgs/:org/webhooks": paging,
  "GET /orgs/:org/assignments/:domain/:finding_key/notes": paging,
};

export interface PublicEndpoint {
  name: string;
  path: string;
  methods: readonly ("GET" | "POST" | "HEAD")[];
  tag: string;
  summary: string;
  params?: Schema;
  answer: { kind: "json"; schema: Schema } | { kind: "text"; type: string };
  extraStatuses?: number[];
  /** Answers 304 to a matching If-None-Match. */
  notModified?: true;
}

const getOrPost = ["GET", "POST"] as const;

/** The public endpoints of routes/index.ts, with the parameter schemas they validate with (routes/schemas.ts). */
export const PUBLIC_ENDPOINTS: readonly PublicEndpoint[] = [
  {
    name: "verify",
    path: "/api/v1/verify.php",
    methods: ["GET", "POST", "HEAD"],
    tag: "verify",
    summary: "Verify a key (interface.md 4.1).",
    params: params.verifyParams.schema,
    answer: { kind: "json", schema: PUBLIC_ANSWERS.verify },
  },
  {
    name: "botcheck",
    path: "/api/v1/botcheck.php",
    methods: getOrPost,
    tag: "botcheck",
    summary: "Bot check and grant (interface.md 4.2).",
    params: params.botcheckParams.schema,
    answer: { kind: "json", schema: PUBLIC_ANSWERS.botcheck },
  },
  {
    name: "content",
    path: "/api/v1/content.php",
    methods: getOrPost,
    tag: "content",
    summary: "Protected content (interface.md 4.3).",
    params: params.contentParams.schema,
    answer: { kind: "json", schema: PUBLIC_ANSWERS.content },
  },
  {
    name: "secret",
    path: "/api/v1/secret.php",
    methods: ["POST"],
    tag: "secret",
    summary: "A runtime secret, server keys with an IP allowlist only (interface.md 4.4).",
    params: params.secretParams.schema,
    answer: { kind: "json", schema: PUBLIC_ANSWERS.secret },
  },
  {
    name: "scan",
    path: "/api/v1/scan.php",
    methods: getOrPost,
    tag: "scan",
    summary: "Security scan of a domain (interface.md 4.5).",
    params: params.scanParams.schema,
    answer: { kind: "json", schema: PUBLIC_ANSWERS.scan },
    extraStatuses: [500, 502, 504],
  },
  {
    name: "events",
    path: "/api/v1/events.php",
    methods: getOrPost,
    tag: "events",
    summary: "The organization's event feed, NDJSON or syslog lines (interface.md 4.6).",
    params: params.eventsParams.schema,
    answer: { kind: "text", type: "application/x-ndjson" },
  },
  {
    name: "assignments",
    path: "/api/v1/assignments.php",
    methods: getOrPost,
    tag: "assignments",
    summary: "Finding assignments: list (GET) and change (POST) (interface.md 4.7, 4.8).",
    params: params.assignmentsParams.schema,
    answer: { kind: "json", schema: PUBLIC_ANSWERS.assignments },
  },
  {
    name: "activity",
    path: "/api/v1/activity.php",
    methods: getOrPost,
    tag: "activity",
    summary: "The team activity record (interface.md 4.9).",
    params: params.activityParams.schema,
    answer: { kind: "json", schema: PUBLIC_ANSWERS.activity },
  },
  {
    name: "keys.json",
    path: "/api/v1/keys.json",
    methods: ["GET"],
    tag: "verify",
    summary: "The public key of entitlement and lifeline tokens (JWKS).",
    answer: { kind: "json", schema: PUBLIC_ANSWERS["keys.json"] },
  },
  // The status document takes no parameters (interface.md 4.10).
  {
    name: "status",
    path: "/api/status.php",
    methods: ["GET"],
    tag: "status",
    summary: "The status document (interface.md 2.9, 4.10).",
    answer: { kind: "json", schema: PUBLIC_ANSWERS.status },
    notModified: true,
  },
  {
    name: "openapi",
    path: "/api/v1/openapi.json",
    methods: ["GET"],
    tag: "description",
    summary: "This document.",
    answer: { kind: "json", schema: PUBLIC_ANSWERS.openapi },
    notModified: true,
  },
];
