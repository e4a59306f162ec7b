import {
  assess,
  type BotcheckReason,
  CHALLENGE_TTL_S,
  type ChallengeIssue,
  challengeAnswer,
  challengeRecord,
  createNonce,
  DECISIVE,
  difficulties,
  evaluateGrant,
  grantedAnswer,
  isNonce,
  issueToken,
  judgeInteraction,
  networkHash,
  parseChallenge,
  parseProof,
  serializeChallenge,
  uaHash,
  verifiedAnswer,
  verifyToken,
} from "../../shared/botcheck/index.js";
import type { Prepared } from "../../shared/verify/index.js";
import type { IngressDeps } from "../deps.js";
import { fault } from "../reply.js";
import { readParams, str, type Params } from "../params.js";
import type { HttpReply, HttpRequest } from "../types.js";
import type { BotcheckState } from "./botcheck/state.js";
import { pageHost } from "./botcheck/page.js";
import { answerReply, disabledReply, refusalReply } from "./botcheck/reply.js";
import { passGate } from "./gate.js";
import { botcheckParams } from "./schemas.js";

/**
 * botcheck.php (interface.md 4.2, 2.5, 3.4): does this visitor look like a real browser,
 * and the hold-to-prove challenge. The key's domain lock is judged on the page the call
 * comes from (Origin, else Referer). The verdict is decided inside the gate's last check,
 * so a bot refusal is counted and recorded under its own reason like any answered call;
 * the pure rules live in shared/botcheck/ (its README is the route's recipe). docs/botcheck.md.
 */

type Action = "assess" | "grant";

const ACTIONS: ReadonlyMap<string, Action> = new Map([
  ["assess", "assess"],
  ["check", "assess"],
  ["grant", "grant"],
  ["solve", "grant"],
]);

type Decision =
  | { kind: "disabled" }
  | { kind: "verified" }
  | { kind: "challenge" }
  | { kind: "granted" }
  | { kind: "refused"; reason: BotcheckReason };

/** `held_ms` as a number (JSON) or digits (form); anything else is no hold. */
function heldMs(value: unknown): number | undefined {
  if (typeof value === "number") return Number.isFinite(value) ? value : undefined;
  if (typeof value === "string" && /^\d{1,10}(\.\d{1,6})?$/.test(value.trim())) return Number(value.trim());
  return undefined;
}

function actionOf(params: Params): Action | null {
  const raw = params.action;
  if (raw === undefined || raw === "") return "assess";
  return typeof raw === "string" ? (ACTIONS.get(raw.trim().toLowerCase()) ?? null) : null;
}

/** The verdict for a key with bot protection on; null = the gate's outcome is `ok`. */
async function judge(
  request: HttpRequest,
  deps: IngressDeps,
  state: BotcheckState,
  params: Params,
  action: Action,
  prepared: Prepared,
  consume: (nonce: string) => Promise<string | null>,
): Promise<Decision> {
  const { key } = prepared;
  const userAgent = request.headers["user-agent"] ?? "";
  const nowMs = deps.clock.now();
  if (action === "assess") {
    const parsed = params.signals === undefined ? undefined : state.parseSignals(params.signals, true);
    // A new visitor sends no token: no address to read (ingress/http.ts says why that matters).
    const token = str(params, "token");
    const tokenValid =
      token !== undefined &&
      token !== "" &&
      verifyToken(token, { keyId: key.id, userAgent, address: request.remoteAddress, nowS: Math.floor(nowMs / 1000) }, state.tokenSecret);
    const result = assess({
      headers: request.headers,
      headerOrder: request.headerOrder,
      signals: parsed?.ok ? parsed.signals : undefined,
      config: key.botcheck,
      tokenValid,
    });
    // Built only when asked for: this runs on every assessment.
    if (deps.logger.isLevelEnabled("debug")) {
      deps.logger.debug(
        { requestId: request.requestId, keyId: key.id, score: result.score, clues: result.clues, device: result.device },
        "botcheck assessment",
      );
    }
    if (result.verdict === "refuse") return { kind: "refused", reason: result.reason };
    return { kind: result.verdict === "allow" ? "verified" : "challenge" };
  }
  const nonce = params.nonce;
  if (!isNonce(nonce)) return { kind: "refused", reason: "invalid_challenge" };
  const record = parseChallenge(await consume(nonce));
  // The grant is assessed again on its own headers: a rule that refuses alone refuses it
  // too (the page's signals are the assess's business; their absence here proves nothing).
  const again = assess({
    headers: request.headers,
    headerOrder: request.headerOrder,
    signals: undefined,
    config: key.botcheck,
    tokenValid: false,
  });
  const decisive = again.clues.find((clue) => clue.weight >= DECISIVE);
  if (decisive) return { kind: "refused", reason: decisive.reason };
  const decision = evaluateGrant(record, {
    nowMs,
    heldMs: heldMs(params.held_ms),
    holdMs: key.botcheck.hold_ms,
    keyId: key.id,
    uaHash: uaHash(userAgent),
    netHash: networkHash(request.remoteAddress),
    nonce,
    proof: parseProof(params.proof),
    interaction: judgeInteraction(state.parseInteraction(params.interaction)),
  });
  return decision.ok ? { kind: "granted" } : { kind: "refused", reason: decision.reason };
}

/**
 * A fresh nonce stored for two minutes, with whom it was issued to (key, user agent,
 * network) and the difficulties its proof must reach; NX so a nonce is never issued twice.
 */
async function storeChallenge(
  deps: IngressDeps,
  keyId: string | number,
  userAgent: string,
  address: string,
  work: { difficulty: number; withoutEvidence: number },
): Promise<string> {
  // Written out, not spread: copying the issue with `...` was a sixth of a challenge's own time.
  const issue: ChallengeIssue = {
    keyId,
    nowMs: deps.clock.now(),
    userAgent,
    address,
    difficulty: work.difficulty,
    withoutEvidence: work.withoutEvidence,
  };
  const record = serializeChallenge(challengeRecord(issue));
  for (let attempt = 0; attempt < 3; attempt++) {
    const nonce = createNonce();
    if (await deps.botcheck.writeChallenge(deps.keys.challenge(nonce), record, CHALLENGE_TTL_S)) return nonce;
  }
  throw new Error("could not store a fresh challenge nonce");
}

export async function botcheck(request: HttpRequest, deps: IngressDeps): Promise<HttpReply> {
  const params = readParams(request);
  const action = params === null || !botcheckParams(params) ? null : actionOf(params);
  if (params === null || action === null) return refusalReply("bad_request", deps.clock.nowSeconds(), null);
  const state = deps.botcheck;
  const decided: { decision: Decision } = { decision: { kind: "disabled" } };
  // GETDEL once, even if the gate judges twice (a stale snapshot): one try per nonce.
  let taken: Promise<string | null> | undefined;
  const consume = (nonce: string) => (taken ??= deps.redis.getdel(deps.keys.challenge(nonce)));
  const gate = await passGate(request, deps, params, {
    endpoint: "botcheck",
    domain: pageHost(request.headers) ?? "",
    after: async (prepared) => {
      if (!prepared.key.botcheck.enabled) {
        decided.decision = { kind: "disabled" };
        return null;
      }
      decided.decision = await judge(request, deps, state, params, action, prepared, consume);
      return decided.decision.kind === "refused" ? decided.decision.reason : null;
    },
  });
  const ts = deps.clock.nowSeconds();
  if (!gate.ok) {
    if (gate.fault) return fault(request.requestId, true);
    return refusalReply(gate.reason, ts, gate.prepared?.key.botcheck.blocked_url);
  }
  const { key } = gate.prepared;
  const userAgent = request.headers["user-agent"] ?? "";
  const decision = decided.decision;
  switch (decision.kind) {
    case "disabled":
      return disabledReply();
    case "verified":
      return answerReply(verifiedAnswer(), ts);
    case "challenge": {
      const work = difficulties(key.botcheck.difficulty);
      const nonce = await storeChallenge(deps, key.id, userAgent, request.remoteAddress, work);
      return answerReply(challengeAnswer(nonce, key.botcheck, work), ts);
    }
    case "granted":
      return answerReply(
        grantedAnswer(issueToken({ keyId: key.id, userAgent, address: request.remoteAddress, nowS: ts }, state.tokenSecret)),
        ts,
      );
    case "refused":
      // The gate answers the verdict's reason; reaching here would be a bug.
      throw new Error(`botcheck refusal ${decision.reason} passed the gate`);
  }
}
