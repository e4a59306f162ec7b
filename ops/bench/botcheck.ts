import { solveWork } from "../../shared/botcheck/index.js";
import type { Target } from "./load.js";

/**
 * botcheck.php under load: a desktop Chrome's request as the page script sends it with
 * fetch() (the header set a real browser sends, Origin of the protected site, and the
 * page's signals), for a key with bot protection on. Two visitors:
 * - a new one: no token, assessed and challenged (the answer stores a nonce in Redis);
 * - a returning one: a pass token from an earlier grant, assessed and let through.
 */

const UA = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36";

export function browserHeaders(domain: string): Record<string, string> {
  return {
    "sec-ch-ua": '"Not/A)Brand";v="8", "Chromium";v="126", "Google Chrome";v="126"',
    "sec-ch-ua-mobile": "?0",
    "sec-ch-ua-platform": '"Windows"',
    "user-agent": UA,
    accept: "*/*",
    origin: `https://${domain}`,
    "sec-fetch-site": "cross-site",
    "sec-fetch-mode": "cors",
    "sec-fetch-dest": "empty",
    referer: `https://${domain}/`,
    "accept-encoding": "gzip, deflate, br, zstd",
    "accept-language": "en-US,en;q=0.9",
  };
}

/** The page's signals of that desktop Chrome (the widget's `signals`). */
export const SIGNALS = {
  webdriver: false,
  automation_globals: [],
  user_agent_data_brands: ["Not/A)Brand", "Chromium", "Google Chrome"],
  user_agent_data_mobile: false,
  chrome_object: true,
  permissions_inconsistent: false,
  plugins: 5,
  languages: ["en-US", "en"],
  screen: { width: 1920, height: 1080, color_depth: 24, pixel_ratio: 1 },
  touch_points: 0,
  timezone: "Europe/Berlin",
  hardware_concurrency: 8,
  timing: { dom_content_loaded_ms: 420, first_interaction_ms: 1800 },
};

async function post(url: string, headers: Record<string, string>, body: unknown): Promise<Record<string, unknown>> {
  const response = await fetch(url, {
    method: "POST",
    headers: { ...headers, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  if (response.status !== 200) throw new Error(`botcheck answered ${response.status}: ${text}`);
  return JSON.parse(text) as Record<string, unknown>;
}

/** Checks both visitors are answered as expected (challenge, verified) and returns the two load targets. */
export async function botcheckTargets(gatewayUrl: string, key: string, domain: string): Promise<Target[]> {
  const url = `${gatewayUrl}/api/v1/botcheck.php`;
  const headers = browserHeaders(domain);
  const assess = { key, action: "assess", signals: SIGNALS };
  const first = await post(url, headers, assess);
  if (first.challenge !== true) throw new Error(`botcheck did not challenge a new browser: ${JSON.stringify(first)}`);
  // The returning visitor's token costs one proof at the key's difficulty, without interaction evidence.
  const nonce = String(first.nonce);
  const config = first.config as { difficulty_without_evidence: number };
  const proof = solveWork(nonce, config.difficulty_without_evidence);
  const granted = await post(url, headers, { key, action: "grant", nonce, held_ms: 1600, proof });
  if (typeof granted.token !== "string") throw new Error(`botcheck grant failed: ${JSON.stringify(granted)}`);
  const returning = { ...assess, token: granted.token };
  const back = await post(url, headers, returning);
  if (back.verified !== true) throw new Error(`botcheck did not accept its token: ${JSON.stringify(back)}`);
  return [
    { name: "botcheck new", url, body: JSON.stringify(assess), headers },
    { name: "botcheck token", url, body: JSON.stringify(returning), headers },
  ];
}
