import type { DeviceClass } from "./device.js";
import { type AssessInput, gatherEvidence } from "./evidence.js";
import type { AssessReason } from "./reasons.js";
import { ALLOW_BELOW, DECISIVE, REFUSE_AT, RULES, type Rule } from "./rules.js";

/** A rule that fired, for the log. */
export interface Clue {
  id: string;
  reason: AssessReason;
  weight: number;
  detail: string;
}

export type Verdict = { verdict: "allow"; verified: true } | { verdict: "refuse"; reason: AssessReason } | { verdict: "challenge" };

export type Assessment = Verdict & {
  /** Sum of the weights of the rules that fired. */
  score: number;
  clues: Clue[];
  device: DeviceClass;
};

/**
 * Decides from the request's headers and the page's signals:
 * 1. a decisive rule fired → refuse with the reason of the first such rule in `RULES`;
 * 2. score ≥ REFUSE_AT → refuse with the reason of the heaviest rule that fired;
 * 3. a valid token and score < ALLOW_BELOW → allow (verified);
 * 4. otherwise → challenge.
 * Call it only when bot protection is on for the key (otherwise answer `disabledAnswer()`).
 */
export function assess(input: AssessInput, rules: readonly Rule[] = RULES): Assessment {
  const evidence = gatherEvidence(input);
  const clues: Clue[] = [];
  for (const rule of rules) {
    const detail = rule.check(evidence);
    if (detail !== null) clues.push({ id: rule.id, reason: rule.reason, weight: rule.weight, detail });
  }
  const score = clues.reduce((sum, clue) => sum + clue.weight, 0);
  return decide(clues, score, input.tokenValid, evidence.device);
}

// Each verdict written out with the assessment's fields: spreading a verdict of one of
// three shapes into a new object was most of `assess`'s own time in the profile.
function decide(clues: Clue[], score: number, tokenValid: boolean, device: DeviceClass): Assessment {
  const decisive = clues.find((clue) => clue.weight >= DECISIVE);
  if (decisive) return { verdict: "refuse", reason: decisive.reason, score, clues, device };
  if (score >= REFUSE_AT) {
    const heaviest = clues.reduce((top, clue) => (clue.weight > top.weight ? clue : top));
    return { verdict: "refuse", reason: heaviest.reason, score, clues, device };
  }
  if (tokenValid && score < ALLOW_BELOW) return { verdict: "allow", verified: true, score, clues, device };
  return { verdict: "challenge", score, clues, device };
}
