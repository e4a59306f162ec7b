import { MAX_USER_AGENT } from "./evidence.js";
import { botMatch } from "./ua.js";
import { clientHintPlatform, type Evidence, primaryLanguage } from "./evidence.js";
import type { AssessReason } from "./reasons.js";

/** A rule of this weight refuses on its own; lighter rules add up to `REFUSE_AT`. */
export const DECISIVE = 100;
/** A score at or above this refuses with the reason of the heaviest rule that fired. */
export const REFUSE_AT = 100;
/** A visitor with a valid token is let through only while the score stays below this. */
export const ALLOW_BELOW = 40;

export interface Rule {
  id: string;
  reason: AssessReason;
  weight: number;
  /** What the rule looks for, in words (logged with the clue, listed in the README). */
  description: string;
  /** A short detail for the log when the rule fires, null when it does not. */
  check(e: Evidence): string | null;
}

const header = (e: Evidence, name: string): string | undefined => e.headers[name];
const present = (e: Evidence, name: string): boolean => (e.headers[name] ?? "") !== "";
const when = (fired: boolean, detail: string): string | null => (fired ? detail : null);
const isChromium90 = (e: Evidence): boolean => e.engine === "blink" && (e.engineMajor ?? 0) >= 90 && !e.webView;
const BRANDS_HEADLESS = /HeadlessChrome/i;

/**
 * The rules, in precedence order: when several decisive rules fire, the first one gives
 * the reason. Signal rules only ever look at fields that are present.
 */
export const RULES: readonly Rule[] = [
  // automation: the page itself says it is driven
  {
    id: "webdriver",
    reason: "automation",
    weight: DECISIVE,
    description: "navigator.webdriver is true (Selenium, Playwright, Puppeteer, WebDriver BiDi).",
    check: (e) => when(e.signals?.webdriver === true, "navigator.webdriver=true"),
  },
  {
    id: "automation_globals",
    reason: "automation",
    weight: DECISIVE,
    description: "The page found globals left by automation tools (e.g. callPhantom, __nightmare, cdc_ arrays).",
    check: (e) => {
      const found = e.signals?.automation_globals ?? [];
      return when(found.length > 0, found.slice(0, 4).join(","));
    },
  },
  // headless: a browser without a screen, by its own admission
  {
    id: "headless_ua",
    reason: "headless",
    weight: DECISIVE,
    description: "The user agent names a headless browser (HeadlessChrome, PhantomJS, SlimerJS).",
    check: (e) => /Headless|PhantomJS|SlimerJS/i.exec(e.userAgent)?.[0] ?? null,
  },
  {
    id: "headless_brand",
    reason: "headless",
    weight: DECISIVE,
    description: "Sec-CH-UA or navigator.userAgentData brands list HeadlessChrome.",
    check: (e) => {
      const fromHeader = BRANDS_HEADLESS.test(header(e, "sec-ch-ua") ?? "");
      const fromPage = (e.signals?.user_agent_data_brands ?? []).some((brand) => BRANDS_HEADLESS.test(brand));
      return when(fromHeader || fromPage, fromHeader ? "sec-ch-ua" : "user_agent_data_brands");
    },
  },
  // bot_ua: says what it is
  {
    id: "overlong_user_agent",
    reason: "bot_ua",
    weight: DECISIVE,
    description: `A user agent over ${MAX_USER_AGENT} characters: no browser sends one.`,
    check: (e) => when(e.userAgent.length > MAX_USER_AGENT, "user-agent"),
  },
  {
    id: "known_bot_ua",
    reason: "bot_ua",
    weight: DECISIVE,
    description:
      "isbot recognises the user agent: crawlers (Googlebot, Bingbot), tools and HTTP libraries (curl, python-requests, Go, axios).",
    check: (e) => botMatch(e.userAgent),
  },
  // missing_headers: what every browser sends
  {
    id: "no_user_agent",
    reason: "missing_headers",
    weight: DECISIVE,
    description: "No User-Agent header.",
    check: (e) => when(e.userAgent.trim() === "", "user-agent"),
  },
  {
    id: "no_accept_headers",
    reason: "missing_headers",
    weight: DECISIVE,
    description: "Neither Accept nor Accept-Language: every browser sends both.",
    check: (e) => when(!present(e, "accept") && !present(e, "accept-language"), "accept,accept-language"),
  },
  {
    id: "chromium_without_fetch_metadata",
    reason: "missing_headers",
    weight: DECISIVE,
    description: "Claims Chrome/Chromium 90 or later (not an Android WebView) but sent no Sec-CH-UA* and no Sec-Fetch-* header.",
    check: (e) => when(isChromium90(e) && !e.hasClientHints && !e.hasSecFetch, `chrome/${e.engineMajor}`),
  },
  // device_not_allowed: the key's device settings
  {
    id: "device_not_allowed",
    reason: "device_not_allowed",
    weight: DECISIVE,
    description: "The device class (desktop, tablet, mobile) is switched off in the key's settings.",
    check: (e) => {
      const allowed = { desktop: e.config.allow_desktop, tablet: e.config.allow_tablet, mobile: e.config.allow_mobile };
      return when(!allowed[e.device], e.device);
    },
  },
  // scored clues: none refuses alone
  {
    id: "no_accept_language",
    reason: "missing_headers",
    weight: 40,
    description: "No Accept-Language header.",
    check: (e) => when(!present(e, "accept-language"), "accept-language"),
  },
  {
    id: "fetch_metadata_missing",
    reason: "missing_headers",
    weight: 60,
    description: "Claims Firefox 90+ or Safari/iOS 17+ but sent no Sec-Fetch-* header.",
    check: (e) => {
      const major = e.engineMajor ?? 0;
      const expects = (e.engine === "gecko" && major >= 90) || (e.engine === "webkit" && major >= 17);
      return when(expects && !e.hasSecFetch, `${e.engine}/${major}`);
    },
  },
  {
    id: "client_hints_missing",
    reason: "inconsistent_client",
    weight: 30,
    description: "Claims Chrome 90+ and sent Sec-Fetch-* but no Sec-CH-UA.",
    check: (e) => when(isChromium90(e) && e.hasSecFetch && !e.hasClientHints, "sec-ch-ua"),
  },
  {
    id: "client_hints_on_non_chromium",
    reason: "inconsistent_client",
    weight: 50,
    description: "Sent Sec-CH-UA client hints while the user agent claims a browser that has none (Firefox, Safari).",
    check: (e) => when((e.engine === "gecko" || e.engine === "webkit") && e.hasClientHints, e.engine),
  },
  {
    id: "client_hints_mobile_mismatch",
    reason: "inconsistent_client",
    weight: 30,
    description: "Sec-CH-UA-Mobile contradicts the user agent (?1 on a desktop UA, ?0 on a phone UA).",
    check: (e) => {
      const mobile = header(e, "sec-ch-ua-mobile")?.trim();
      const fired = (mobile === "?1" && e.device === "desktop") || (mobile === "?0" && e.device === "mobile");
      return when(fired, `${mobile} vs ${e.device}`);
    },
  },
  {
    id: "client_hints_platform_mismatch",
    reason: "inconsistent_client",
    weight: 30,
    description:
      "Sec-CH-UA-Platform names another platform than the user agent (Android with a Linux UA is Chrome's desktop mode and passes).",
    check: (e) => {
      const hinted = clientHintPlatform(header(e, "sec-ch-ua-platform"));
      if (hinted === undefined || e.uaPlatform === undefined || hinted === e.uaPlatform) return null;
      if (hinted === "android" && e.uaPlatform === "linux") return null;
      return `${hinted} vs ${e.uaPlatform}`;
    },
  },
  {
    id: "header_order_library",
    reason: "inconsistent_client",
    weight: 20,
    description: "Accept-Encoding arrived before Accept: the order of HTTP libraries, not of browsers.",
    check: (e) => {
      const encoding = e.headerOrder.indexOf("accept-encoding");
      const accept = e.headerOrder.indexOf("accept");
      return when(encoding >= 0 && accept >= 0 && encoding < accept, "accept-encoding<accept");
    },
  },
  {
    id: "no_signals",
    reason: "automation",
    weight: 20,
    description: "No usable signals object: the page script did not run (a client without JavaScript) or sent garbage.",
    check: (e) => when(e.signals === undefined, "signals"),
  },
  {
    id: "brands_on_non_chromium",
    reason: "inconsistent_client",
    weight: 50,
    description: "navigator.userAgentData has brands while the user agent claims Firefox or Safari (a Chromium with a forged UA).",
    check: (e) => {
      const brands = e.signals?.user_agent_data_brands ?? [];
      return when((e.engine === "gecko" || e.engine === "webkit") && brands.length > 0, e.engine);
    },
  },
  {
    id: "ua_data_mobile_mismatch",
    reason: "inconsistent_client",
    weight: 30,
    description: "navigator.userAgentData.mobile contradicts the user agent's device class.",
    check: (e) => {
      const mobile = e.signals?.user_agent_data_mobile;
      const fired = (mobile === true && e.device === "desktop") || (mobile === false && e.device === "mobile");
      return when(fired, `mobile=${mobile} vs ${e.device}`);
    },
  },
  {
    id: "chrome_object_missing",
    reason: "headless",
    weight: 40,
    description: "Claims Chrome 90+ but window.chrome is absent (old headless mode, some drivers).",
    check: (e) => when(isChromium90(e) && e.signals?.chrome_object === false, "window.chrome"),
  },
  {
    id: "permissions_inconsistent",
    reason: "headless",
    weight: 50,
    description: "Notification.permission and navigator.permissions disagree, as in headless Chrome.",
    check: (e) => when(e.signals?.permissions_inconsistent === true, "notifications"),
  },
  {
    id: "no_plugins_desktop",
    reason: "headless",
    weight: 30,
    description: "A desktop Chrome or Firefox with zero navigator.plugins (both list the PDF viewer).",
    check: (e) => {
      const desktopBrowser = e.device === "desktop" && (isChromium90(e) || e.engine === "gecko");
      return when(desktopBrowser && e.signals?.plugins === 0, "plugins=0");
    },
  },
  {
    id: "no_languages",
    reason: "headless",
    weight: 40,
    description: "navigator.languages is empty.",
    check: (e) => when(e.signals?.languages?.length === 0, "languages=[]"),
  },
  {
    id: "languages_disagree",
    reason: "inconsistent_client",
    weight: 20,
    description: "The first of navigator.languages and the first Accept-Language entry name different languages.",
    check: (e) => {
      const page = primaryLanguage(e.signals?.languages?.[0]);
      const sent = primaryLanguage(header(e, "accept-language"));
      return when(page !== undefined && sent !== undefined && page !== sent, `${page} vs ${sent}`);
    },
  },
  {
    id: "screen_empty",
    reason: "headless",
    weight: 50,
    description: "Screen width, height or colour depth reported as 0.",
    check: (e) => {
      const s = e.signals?.screen;
      return when(s?.width === 0 || s?.height === 0 || s?.color_depth === 0, "screen=0");
    },
  },
  {
    id: "touch_missing_on_mobile",
    reason: "inconsistent_client",
    weight: 40,
    description: "A phone or tablet user agent on a device with no touch points (a desktop posing as mobile).",
    check: (e) => when(e.device !== "desktop" && e.signals?.touch_points === 0, `${e.device} touch=0`),
  },
  {
    id: "instant_interaction",
    reason: "automation",
    weight: 30,
    description: "The first click, key or touch came less than 100 ms after navigation start.",
    check: (e) => {
      const first = e.signals?.timing?.first_interaction_ms;
      return when(first !== undefined && first < 100, `first_interaction_ms=${first}`);
    },
  },
];
