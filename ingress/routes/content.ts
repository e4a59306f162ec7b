import type { IngressDeps } from "../deps.js";
import { readParams, str } from "../params.js";
import { fault, refuse } from "../reply.js";
import type { HttpReply, HttpRequest } from "../types.js";
import { contentJson, contentReply } from "./content/body.js";
import { pageAllowed } from "./content/origin.js";
import { attesterOf, passGate } from "./gate.js";
import { VERIFY_HEADERS } from "./verify/answer.js";
import { contentParams } from "./schemas.js";
import { attestedHost } from "../../shared/client/index.js";

/**
 * content.php (interface.md 4.3): the organization's dashboard-managed content values,
 * all of them or one (`content_key`), answered from the content snapshot in Redis (the
 * admin PUT/DELETE rewrites it before answering, so a change is visible at once).
 * The verify chain and counting apply (gate.ts); then origin_mismatch (content/origin.ts)
 * and not_found. The answer carries the contract's HMAC and an Ed25519 `attestation` of
 * what it says (shared/platform/crypto/attestation.ts). docs/content.md.
 */

const HEADERS = VERIFY_HEADERS as Record<string, string>;
/** The admin API's content key names: anything else cannot exist. */
const CONTENT_KEY = /^[A-Za-z0-9_.:-]{1,128}$/;

type Entries = (readonly [string, string])[];

async function readContent(deps: IngressDeps, orgId: number, contentKey: string | undefined): Promise<Entries> {
  const hash = deps.keys.contentSnapshot(orgId);
  if (contentKey === undefined) return Object.entries(await deps.redis.hgetall(hash));
  if (!CONTENT_KEY.test(contentKey)) return [];
  const raw = await deps.redis.hget(hash, contentKey);
  return raw === null ? [] : [[contentKey, raw]];
}

export async function content(request: HttpRequest, deps: IngressDeps): Promise<HttpReply> {
  const params = readParams(request);
  if (params === null || !contentParams(params)) return refuse("bad_request", {}, HEADERS);
  // A content key is text (a number in JSON is taken as its digits); an object or array is malformed.
  if (typeof params.content_key === "object" && params.content_key !== null) return refuse("bad_request", {}, HEADERS);
  const contentKey = str(params, "content_key") || undefined;
  const read: { entries: Entries } = { entries: [] };
  const gate = await passGate(request, deps, params, {
    endpoint: "content",
    after: async (prepared) => {
      if (!pageAllowed(prepared.key.content_origin, request.headers)) return "origin_mismatch";
      read.entries = await readContent(deps, prepared.org.id, contentKey);
      return contentKey !== undefined && read.entries.length === 0 ? "not_found" : null;
    },
  });
  if (!gate.ok) return gate.fault ? fault(request.requestId, true) : refuse(gate.reason, {}, HEADERS);
  const domain = gate.ask.domain ?? "";
  const content = contentJson(read.entries);
  const ts = deps.clock.nowSeconds();
  return contentReply({
    apiKey: gate.apiKey,
    domain,
    content,
    ts,
    latencyMs: Math.floor(performance.now() - request.startedMs),
    attestation: deps.attestations.content(attesterOf(deps, gate), attestedHost(domain), contentKey ?? null, content, ts),
  });
}
