/**
 * Every reason a bot-check answer can carry beyond the enforcement chain's own
 * (`invalid_key`, `domain_mismatch`, ...). `stage` says which action produces it (a grant is
 * also refused for the assess reasons its own headers earn: the grant request is assessed again).
 * Names are part of the interface: never rename or reuse one.
 */
export const BOTCHECK_REASONS = {
  bot_ua: {
    stage: "assess",
    meaning: "User agent of a known crawler, bot or HTTP library (isbot list).",
  },
  headless: {
    stage: "assess",
    meaning: "A headless browser: HeadlessChrome in the user agent or client hints, or headless traits in the page signals.",
  },
  automation: {
    stage: "assess, grant",
    meaning:
      "The page reported a driven browser: navigator.webdriver, automation globals, inhumanly fast input; or a grant's interaction evidence contradicts itself.",
  },
  missing_headers: {
    stage: "assess",
    meaning: "Headers every real browser sends are absent (User-Agent, Accept/Accept-Language, Sec-Fetch-*/Sec-CH-UA).",
  },
  inconsistent_client: {
    stage: "assess",
    meaning: "Headers and signals contradict the claimed browser or device (client hints, platform, touch, languages, header order).",
  },
  device_not_allowed: {
    stage: "assess",
    meaning: "The visitor's device class (desktop, tablet, mobile) is switched off for the key.",
  },
  expired_challenge: {
    stage: "grant",
    meaning: "The challenge nonce is older than two minutes, already used, or unknown.",
  },
  hold_too_short: {
    stage: "grant",
    meaning:
      "held_ms, or the time since the challenge was issued, is below the key's hold time; or the proof-of-work is missing or short of the difficulty.",
  },
  invalid_challenge: {
    stage: "grant",
    meaning: "The nonce is malformed, or was issued for another key, another user agent or another network.",
  },
} as const;

type Reasons = typeof BOTCHECK_REASONS;

export type BotcheckReason = keyof Reasons;
export type AssessReason = { [K in BotcheckReason]: Reasons[K]["stage"] extends `assess${string}` ? K : never }[BotcheckReason];
export type GrantReason = { [K in BotcheckReason]: Reasons[K]["stage"] extends `${string}grant` ? K : never }[BotcheckReason];
