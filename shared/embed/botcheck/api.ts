import type { Interaction } from "../../botcheck/interaction.js";
import type { Signals } from "./signals.js";

/** One answer of botcheck.php (interface.md 2.5), as the widget reads it. */
export interface Answer {
  enforced?: boolean;
  allow?: boolean;
  challenge?: boolean;
  verified?: boolean;
  nonce?: string;
  config?: { hold_ms?: number; difficulty?: number; difficulty_without_evidence?: number };
  token?: string;
  reason?: string;
  blocked_url?: string;
}

export type Vocabulary = "assess" | "check";

/** A fault (network, 5xx, unreadable body): the service did not answer, which is no verdict. */
export class Unavailable extends Error {}

export interface Api {
  assess(signals: Signals, token: string | null): Promise<Answer>;
  grant(nonce: string, heldMs: number, proof: number, interaction: Interaction): Promise<Answer>;
}

export function createApi(endpoint: string, key: string, vocabulary: Vocabulary): Api {
  const call = async (body: Record<string, unknown>): Promise<Answer> => {
    let response: Response;
    try {
      // text/plain keeps the request "simple" (no preflight); the service reads JSON without a declared type.
      response = await fetch(endpoint, {
        method: "POST",
        mode: "cors",
        credentials: "omit",
        cache: "no-store",
        headers: { "content-type": "text/plain;charset=UTF-8" },
        body: JSON.stringify(body),
      });
    } catch (error) {
      throw new Unavailable(String(error));
    }
    // 429 (rate_limited, usage_limit_exceeded) is the key's capacity, not a verdict on this
    // visitor: like an outage, `failOpen` decides, and no visitor is sent to the blocked page.
    if (response.status >= 500 || response.status === 429) throw new Unavailable(`HTTP ${response.status}`);
    try {
      return (await response.json()) as Answer;
    } catch (_) {
      throw new Unavailable(`unreadable answer (HTTP ${response.status})`);
    }
  };
  return {
    assess: (signals, token) => {
      const body: Record<string, unknown> = { key, action: vocabulary, signals };
      if (token) body.token = token;
      return call(body);
    },
    grant: (nonce, heldMs, proof, interaction) =>
      call({ key, action: vocabulary === "check" ? "solve" : "grant", nonce, held_ms: heldMs, proof, interaction }),
  };
}
