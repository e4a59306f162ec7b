import type { AssessInput, BotcheckConfig } from "../../../shared/botcheck/evidence.js";
import type { Signals } from "../../../shared/botcheck/signals.js";

export const UA = {
  chromeWindows: "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36",
  chromeAndroid: "Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Mobile Safari/537.36",
  headlessChrome: "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/126.0.0.0 Safari/537.36",
  firefoxWindows: "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:127.0) Gecko/20100101 Firefox/127.0",
  safariMac: "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Safari/605.1.15",
  iPhone:
    "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1",
  iPad: "Mozilla/5.0 (iPad; CPU OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1",
  androidTablet: "Mozilla/5.0 (Linux; Android 13; SM-X200) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36",
  curl: "curl/8.5.0",
  pythonRequests: "python-requests/2.31.0",
  googlebot: "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
  googlebotSmartphone:
    "Mozilla/5.0 (Linux; Android 6.0.1; Nexus 5X Build/MMB29P) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.6478.126 Mobile Safari/537.36 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
} as const;

type Headers = Record<string, string>;

/** A Chrome 126 desktop `fetch()` POST from a page on another origin, in Chrome's order. */
export function chromeDesktopHeaders(): Headers {
  return {
    "content-length": "412",
    "sec-ch-ua-platform": '"Windows"',
    "user-agent": UA.chromeWindows,
    "sec-ch-ua": '"Not/A)Brand";v="8", "Chromium";v="126", "Google Chrome";v="126"',
    "content-type": "application/json",
    "sec-ch-ua-mobile": "?0",
    accept: "*/*",
    origin: "https://shop.example",
    "sec-fetch-site": "cross-site",
    "sec-fetch-mode": "cors",
    "sec-fetch-dest": "empty",
    referer: "https://shop.example/",
    "accept-encoding": "gzip, deflate, br, zstd",
    "accept-language": "en-US,en;q=0.9",
    priority: "u=1, i",
  };
}

export function chromeAndroidHeaders(): Headers {
  return {
    ...chromeDesktopHeaders(),
    "user-agent": UA.chromeAndroid,
    "sec-ch-ua-platform": '"Android"',
    "sec-ch-ua-mobile": "?1",
  };
}

/** Safari 17 (macOS or iOS) `fetch()`: no client hints, Sec-Fetch-* since 16.4. */
export function safariHeaders(userAgent: string): Headers {
  return {
    accept: "*/*",
    "sec-fetch-site": "cross-site",
    "accept-language": "en-GB,en;q=0.9",
    "accept-encoding": "gzip, deflate, br",
    "sec-fetch-mode": "cors",
    origin: "https://shop.example",
    "user-agent": userAgent,
    referer: "https://shop.example/",
    "sec-fetch-dest": "empty",
    "content-type": "application/json",
  };
}

export function firefoxHeaders(): Headers {
  return {
    "user-agent": UA.firefoxWindows,
    accept: "*/*",
    "accept-language": "en-US,en;q=0.5",
    "accept-encoding": "gzip, deflate, br, zstd",
    referer: "https://shop.example/",
    "content-type": "application/json",
    origin: "https://shop.example",
    "sec-fetch-dest": "empty",
    "sec-fetch-mode": "cors",
    "sec-fetch-site": "cross-site",
  };
}

/** What the curl command line tool sends by default. */
export function curlHeaders(): Headers {
  return { host: "api.example", "user-agent": UA.curl, accept: "*/*" };
}

/** What python-requests sends by default. */
export function pythonRequestsHeaders(userAgent: string = UA.pythonRequests): Headers {
  return { "user-agent": userAgent, "accept-encoding": "gzip, deflate", accept: "*/*", connection: "keep-alive" };
}

export function chromeDesktopSignals(): Signals {
  return {
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
    device_memory: 8,
    timing: { dom_content_loaded_ms: 412.5, first_interaction_ms: 1830 },
    pointer_moves: 14,
    keypresses: 0,
  };
}

export function phoneSignals(): Signals {
  return {
    ...chromeDesktopSignals(),
    user_agent_data_mobile: true,
    plugins: 0,
    screen: { width: 412, height: 915, color_depth: 24, pixel_ratio: 2.625 },
    touch_points: 5,
  };
}

export function safariSignals(): Signals {
  const { user_agent_data_brands: _brands, user_agent_data_mobile: _mobile, chrome_object: _chrome, ...rest } = chromeDesktopSignals();
  return { ...rest, languages: ["en-GB"], plugins: 5 };
}

export const ALL_DEVICES: BotcheckConfig = { hold_ms: 1500, allow_desktop: true, allow_tablet: true, allow_mobile: true };

/** An assess input; `headerOrder` follows the headers' insertion order unless given. */
export function request(headers: Headers, overrides: Partial<AssessInput> = {}): AssessInput {
  return {
    headers,
    headerOrder: Object.keys(headers),
    signals: undefined,
    config: ALL_DEVICES,
    tokenValid: false,
    ...overrides,
  };
}
