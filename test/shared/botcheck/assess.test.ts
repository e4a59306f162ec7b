import { describe, expect, it } from "vitest";
import { assess } from "../../../shared/botcheck/assess.js";
import type { AssessInput } from "../../../shared/botcheck/evidence.js";
import { ALLOW_BELOW, REFUSE_AT } from "../../../shared/botcheck/rules.js";
import {
  ALL_DEVICES,
  chromeAndroidHeaders,
  chromeDesktopHeaders,
  chromeDesktopSignals,
  curlHeaders,
  firefoxHeaders,
  phoneSignals,
  pythonRequestsHeaders,
  request,
  safariHeaders,
  safariSignals,
  UA,
} from "./fixtures.js";

const without = (headers: Record<string, string>, ...names: string[]) =>
  Object.fromEntries(
    Object.entries(headers).filter(
      ([name]) => !names.includes(name) && !names.some((n) => n.endsWith("*") && name.startsWith(n.slice(0, -1))),
    ),
  );

const chrome = (overrides: Partial<AssessInput> = {}) =>
  request(chromeDesktopHeaders(), { signals: chromeDesktopSignals(), tokenValid: true, ...overrides });

describe("assess: real browsers", () => {
  const browsers: Array<[string, AssessInput, "desktop" | "tablet" | "mobile"]> = [
    ["Chrome desktop", chrome(), "desktop"],
    ["Chrome Android", request(chromeAndroidHeaders(), { signals: phoneSignals() }), "mobile"],
    ["Firefox desktop", request(firefoxHeaders(), { signals: { ...safariSignals(), languages: ["en-US", "en"] } }), "desktop"],
    ["Safari macOS", request(safariHeaders(UA.safariMac), { signals: { ...safariSignals(), plugins: 1 } }), "desktop"],
    ["Safari iPhone", request(safariHeaders(UA.iPhone), { signals: { ...safariSignals(), plugins: 0, touch_points: 5 } }), "mobile"],
    ["Safari iPad", request(safariHeaders(UA.iPad), { signals: { ...safariSignals(), touch_points: 5 } }), "tablet"],
  ];

  it.each(browsers)("%s without a token is challenged, with no clue", (_name, input, device) => {
    const result = assess({ ...input, tokenValid: false });
    expect(result).toEqual({ verdict: "challenge", score: 0, clues: [], device });
  });

  it.each(browsers)("%s with a valid token is allowed, verified", (_name, input) => {
    const result = assess({ ...input, tokenValid: true });
    expect(result.verdict).toBe("allow");
    expect(result).toMatchObject({ verdict: "allow", verified: true, score: 0 });
  });

  it("a real browser that sent no signals is still challenged, and allowed with a token", () => {
    expect(assess(chrome({ signals: undefined, tokenValid: false })).verdict).toBe("challenge");
    const withToken = assess(chrome({ signals: undefined }));
    expect(withToken.verdict).toBe("allow");
    expect(withToken.clues.map((c) => c.id)).toEqual(["no_signals"]);
  });
});

describe("assess: refusals", () => {
  const cases: Array<[string, AssessInput, string]> = [
    ["curl", request(curlHeaders()), "bot_ua"],
    ["python-requests", request(pythonRequestsHeaders()), "bot_ua"],
    ["Googlebot", request({ ...chromeDesktopHeaders(), "user-agent": UA.googlebot }), "bot_ua"],
    ["Googlebot smartphone", request({ ...chromeAndroidHeaders(), "user-agent": UA.googlebotSmartphone }), "bot_ua"],
    ["curl with a valid token and clean signals", request(curlHeaders(), { tokenValid: true, signals: chromeDesktopSignals() }), "bot_ua"],
    ["HeadlessChrome user agent", chrome({ headers: { ...chromeDesktopHeaders(), "user-agent": UA.headlessChrome } }), "headless"],
    [
      "HeadlessChrome in Sec-CH-UA",
      chrome({ headers: { ...chromeDesktopHeaders(), "sec-ch-ua": '"HeadlessChrome";v="126", "Chromium";v="126"' } }),
      "headless",
    ],
    [
      "HeadlessChrome in userAgentData brands",
      chrome({ signals: { ...chromeDesktopSignals(), user_agent_data_brands: ["HeadlessChrome", "Chromium"] } }),
      "headless",
    ],
    ["navigator.webdriver", chrome({ signals: { ...chromeDesktopSignals(), webdriver: true } }), "automation"],
    ["automation globals", chrome({ signals: { ...chromeDesktopSignals(), automation_globals: ["__nightmare"] } }), "automation"],
    ["no User-Agent", request(without(chromeDesktopHeaders(), "user-agent")), "missing_headers"],
    [
      "browser UA without Accept and Accept-Language",
      chrome({ headers: without(chromeDesktopHeaders(), "accept", "accept-language") }),
      "missing_headers",
    ],
    [
      "Chrome 126 UA without any Sec-CH-UA or Sec-Fetch header",
      chrome({ headers: without(chromeDesktopHeaders(), "sec-ch-*", "sec-fetch-*") }),
      "missing_headers",
    ],
    [
      "Chrome UA on python-requests headers",
      request(pythonRequestsHeaders(UA.chromeWindows), { signals: chromeDesktopSignals(), tokenValid: true }),
      "missing_headers",
    ],
    [
      "several headless traits add up",
      chrome({ signals: { ...chromeDesktopSignals(), permissions_inconsistent: true, screen: { width: 0, height: 0 } } }),
      "headless",
    ],
  ];

  it.each(cases)("%s → %s", (_name, input, reason) => {
    expect(assess(input)).toMatchObject({ verdict: "refuse", reason });
  });

  it("an order of reasons: automation before headless before bot_ua", () => {
    const input = chrome({
      headers: { ...chromeDesktopHeaders(), "user-agent": UA.headlessChrome },
      signals: { ...chromeDesktopSignals(), webdriver: true },
    });
    const result = assess(input);
    expect(result).toMatchObject({ verdict: "refuse", reason: "automation" });
    expect(result.clues.map((c) => c.id)).toEqual(expect.arrayContaining(["webdriver", "headless_ua", "known_bot_ua"]));
  });
});

describe("assess: device classes", () => {
  const cases: Array<[string, AssessInput, keyof typeof ALL_DEVICES]> = [
    ["a phone", request(chromeAndroidHeaders(), { signals: phoneSignals(), tokenValid: true }), "allow_mobile"],
    ["an iPad", request(safariHeaders(UA.iPad), { signals: { ...safariSignals(), touch_points: 5 }, tokenValid: true }), "allow_tablet"],
    [
      "an iPad sending a Mac user agent",
      request(safariHeaders(UA.safariMac), { signals: { ...safariSignals(), touch_points: 5 }, tokenValid: true }),
      "allow_tablet",
    ],
    ["a desktop", chrome(), "allow_desktop"],
  ];

  it.each(cases)("%s is refused when %s is off", (_name, input, setting) => {
    const result = assess({ ...input, config: { ...ALL_DEVICES, [setting]: false } });
    expect(result).toMatchObject({ verdict: "refuse", reason: "device_not_allowed" });
  });

  it.each(cases)("%s passes when only the other classes are off", (_name, input, setting) => {
    const config = { hold_ms: 1500, allow_desktop: false, allow_tablet: false, allow_mobile: false, [setting]: true };
    expect(assess({ ...input, config }).verdict).toBe("allow");
  });

  it("a bot is refused as a bot even from a disallowed device class", () => {
    const config = { ...ALL_DEVICES, allow_desktop: false };
    expect(assess(request(curlHeaders(), { config }))).toMatchObject({ verdict: "refuse", reason: "bot_ua" });
  });
});

describe("assess: scored clues", () => {
  it("one soft clue of ALLOW_BELOW or more turns a token holder into a challenge", () => {
    const result = assess(chrome({ headers: without(chromeDesktopHeaders(), "accept-language") }));
    expect(result.score).toBeGreaterThanOrEqual(ALLOW_BELOW);
    expect(result.score).toBeLessThan(REFUSE_AT);
    expect(result).toMatchObject({ verdict: "challenge" });
  });

  it("a light clue alone still lets a token holder through", () => {
    const headers = chromeDesktopHeaders();
    const order = Object.keys(headers).filter((n) => n !== "accept-encoding");
    order.splice(order.indexOf("accept"), 0, "accept-encoding");
    const result = assess(chrome({ headerOrder: order }));
    expect(result).toMatchObject({
      verdict: "allow",
      score: 20,
      clues: [{ id: "header_order_library", reason: "inconsistent_client", weight: 20 }],
    });
  });

  it("an Android WebView without fetch metadata is challenged, not refused", () => {
    const ua =
      "Mozilla/5.0 (Linux; Android 10; K; wv) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/126.0.0.0 Mobile Safari/537.36";
    const headers = { ...without(chromeAndroidHeaders(), "sec-ch-*", "sec-fetch-*"), "user-agent": ua };
    expect(assess(request(headers, { signals: phoneSignals() })).verdict).toBe("challenge");
  });

  it("Chrome before 90 is not expected to send fetch metadata", () => {
    const ua = UA.chromeWindows.replace("Chrome/126", "Chrome/89");
    const headers = { ...without(chromeDesktopHeaders(), "sec-ch-*", "sec-fetch-*"), "user-agent": ua };
    expect(assess(request(headers, { signals: chromeDesktopSignals(), tokenValid: true })).verdict).toBe("allow");
  });

  it("Chrome's desktop mode on Android (Android hint, Linux UA) is not a platform mismatch", () => {
    const ua = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36";
    const headers = { ...chromeDesktopHeaders(), "user-agent": ua, "sec-ch-ua-platform": '"Android"' };
    const result = assess(request(headers, { signals: { ...chromeDesktopSignals(), touch_points: 5 }, tokenValid: true }));
    expect(result.clues).toEqual([]);
  });
});

describe("assess: a hostile user agent", () => {
  it("refuses a user agent over 512 characters bot_ua, and reads no more than 513 of a 30 KB one", async () => {
    const { gatherEvidence } = await import("../../../shared/botcheck/evidence.js");
    // A Mac Safari prefix with touch points takes the iPad check; the rest is what once made a pattern backtrack.
    const hostile = `Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) Version/${"1.".repeat(15_000)}`;
    const input = request(safariHeaders(hostile), { signals: { ...safariSignals(), touch_points: 2 } });
    expect(gatherEvidence(input).userAgent.length).toBe(513);
    const result = assess(input);
    expect(result).toMatchObject({ verdict: "refuse", reason: "bot_ua" });
    expect(result.clues.map((c) => c.id)).toContain("overlong_user_agent");
    // 512 characters is still a user agent like any other.
    const long = `${UA.safariMac} ${"x".repeat(512 - UA.safariMac.length - 1)}`;
    expect(long).toHaveLength(512);
    expect(gatherEvidence(request(safariHeaders(long))).userAgent).toBe(long);
    expect(assess(request(safariHeaders(long), { signals: safariSignals() })).clues.map((c) => c.id)).not.toContain("overlong_user_agent");
  });
});
