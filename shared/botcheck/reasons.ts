/**
 * Every reason a bot-check answer can carry beyond the enforcement chain's own
 * (`invalid_key`, `domain_mismatch`, ...). `stage` says which action produces it.
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
    stage: "assess",
    meaning: "The page reported a driven browser: navigator.webdriver, automation globals, inhumanly fast input.",
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
    meaning: "held_ms, or the time since the challenge was issued, is below the key's hold time.",
  },
  invalid_challenge: {
    stage: "grant",
    meaning: "The nonce is malformed, or was issued for another key or another user agent.",
  },
} as const;

type Reasons = typeof BOTCHECK_REASONS;

export type BotcheckReason = keyof Reasons;
export type AssessReason = { [K in BotcheckReason]: Reasons[K]["stage"] extends "assess" ? K : never }[BotcheckReason];
export type GrantReason = { [K in BotcheckReason]: Reasons[K]["stage"] extends "grant" ? K : never }[BotcheckReason];
