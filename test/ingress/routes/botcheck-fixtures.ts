import { expect } from "vitest";
import type { Interaction } from "../../../shared/botcheck/interaction.js";
import { solveWork } from "../../../shared/botcheck/work.js";
import type { TestGateway } from "../../helpers/gateway.js";
import { clientSetup, type MadeKey } from "./verify-fixtures.js";
import { chromeDesktopSignals } from "../../shared/botcheck/fixtures.js";

/** A desktop Chrome calling botcheck.php from https://example.com with fetch(), as captured from a real browser. */
export const CHROME_UA = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36";

export const BROWSER_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  "sec-ch-ua": '"Not/A)Brand";v="8", "Chromium";v="126", "Google Chrome";v="126"',
  "sec-ch-ua-mobile": "?0",
  "sec-ch-ua-platform": '"Windows"',
  "user-agent": CHROME_UA,
  accept: "*/*",
  origin: "https://example.com",
  "sec-fetch-site": "cross-site",
  "sec-fetch-mode": "cors",
  "sec-fetch-dest": "empty",
  referer: "https://example.com/",
  "accept-language": "en-US,en;q=0.9",
});

// The page signals of a desktop Chrome: the same fixture as the assessment's unit tests.
export const BROWSER_SIGNALS = Object.freeze(chromeDesktopSignals());

export const PHONE_UA =
  "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Mobile Safari/537.36";

export const PHONE_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  ...BROWSER_HEADERS,
  "user-agent": PHONE_UA,
  "sec-ch-ua-mobile": "?1",
  "sec-ch-ua-platform": '"Android"',
});

export const PHONE_SIGNALS = Object.freeze({
  ...BROWSER_SIGNALS,
  user_agent_data_mobile: true,
  touch_points: 5,
  plugins: 0,
  screen: { width: 412, height: 915, color_depth: 24, pixel_ratio: 2.625 },
});

/** The difficulty of the fixture's keys: low, so a test solves a proof in a millisecond; the default's own tests say so. */
export const TEST_DIFFICULTY = 8;

/** A client key on example.com with bot protection on (hold time 1.5 s, difficulty TEST_DIFFICULTY unless said otherwise). */
export function botcheckKey(gw: TestGateway, botcheck: Record<string, unknown> = {}, key: Record<string, unknown> = {}): Promise<MadeKey> {
  return clientSetup(gw, { botcheck: { enabled: true, difficulty: TEST_DIFFICULTY, ...botcheck }, ...key });
}

/** The widget's summary of a hand moving a mouse to the button (judged `human`). */
export const HAND: Readonly<Interaction> = Object.freeze({
  input: "mouse",
  presses: 1,
  keys: 0,
  moves: 42,
  trail: 18,
  path_px: 312.4,
  span_px: 281.9,
  speed_cv: 0.61,
  max_speed: 2.3,
  contact_px: 1,
});

/** What the widget adds to a grant: a proof of `bits` for the nonce and the hand's evidence. */
export function answerOf(nonce: string, bits = TEST_DIFFICULTY): { proof: number; interaction: Interaction } {
  return { proof: solveWork(nonce, bits), interaction: { ...HAND } };
}

export function botcheckCall(gw: TestGateway, params: Record<string, unknown>, headers: Record<string, string> = BROWSER_HEADERS) {
  return gw.call("/api/v1/botcheck.php", { method: "POST", body: params, headers: { ...headers } });
}

/** assess from the browser above; returns the challenge nonce. */
export async function challenge(gw: TestGateway, made: MadeKey, headers: Record<string, string> = BROWSER_HEADERS): Promise<string> {
  const answer = await botcheckCall(gw, { key: made.key, signals: BROWSER_SIGNALS }, headers);
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  expect(answer.body).toMatchObject({ enforced: true, allow: false, challenge: true });
  return answer.body.nonce as string;
}
