import { createSignalsParser, type SignalsParse } from "../../../shared/botcheck/index.js";
import { deriveKey } from "../../../shared/crypto/seal.js";
import type { IngressDeps } from "../../deps.js";

/**
 * What botcheck.php keeps between calls, one per ingress (keyed by its deps), built on
 * the first call: the compiled `signals` schema and the pass-token secret, derived from
 * the master secret (so every process of a deployment shares it without storing it,
 * and rotating GATEWAY_SECRET ends every outstanding token).
 */
export interface BotcheckState {
  parseSignals(raw: unknown): SignalsParse;
  tokenSecret: Buffer;
}

const states = new WeakMap<IngressDeps, BotcheckState>();

export function botcheckState(deps: IngressDeps): BotcheckState {
  let state = states.get(deps);
  if (!state) {
    state = { parseSignals: createSignalsParser(), tokenSecret: deriveKey(deps.masterSecret, "botcheck-token") };
    states.set(deps, state);
  }
  return state;
}
