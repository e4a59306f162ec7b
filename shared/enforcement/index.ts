export { evaluate, RULES, type Rule, type RuleInput } from "./chain.js";
export { COUNTED_RULES, counts, scriptOutcome, type ScriptOutcome } from "./counting.js";
export { checkKeyKnown, checkKeySent } from "./existence.js";
export { allowanceCycle, effectiveEnd } from "./expiry.js";
export { hostOf } from "./domain.js";
export { createPreparer, prepare, type Prepared } from "./prepared.js";
export { scopesText } from "./scope.js";
export { PASS, type Ask, type CountryOf, type Verdict } from "./types.js";
