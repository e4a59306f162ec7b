import { describe, expect, it } from "vitest";
import { assess } from "../../../shared/botcheck/assess.js";
import type { AssessInput } from "../../../shared/botcheck/evidence.js";
import { BOTCHECK_REASONS } from "../../../shared/botcheck/reasons.js";
import { DECISIVE, RULES } from "../../../shared/botcheck/rules.js";
import type { Signals } from "../../../shared/botcheck/signals.js";
import {
  ALL_DEVICES,
  chromeAndroidHeaders,
  chromeDesktopHeaders,
  chromeDesktopSignals,
  firefoxHeaders,
  phoneSignals,
  request,
  safariSignals,
  UA,
} from "./fixtures.js";

const chromeWith = (headers: Record<string, string>, signals: Signals = chromeDesktopSignals()): AssessInput =>
  request({ ...chromeDesktopHeaders(), ...headers }, { signals });
const chromeSignals = (changes: Signals): AssessInput => chromeWith({}, { ...chromeDesktopSignals(), ...changes });
const drop = (names: string[]): Record<string, string> =>
  Object.fromEntries(
    Object.entries(chromeDesktopHeaders()).filter(
      ([name]) => !names.some((n) => (n.endsWith("*") ? name.startsWith(n.slice(0, -1)) : name === n)),
    ),
  );

/** One request per rule that makes that rule fire, starting from a clean Chrome desktop. */
const FIRING: Record<string, AssessInput> = {
  webdriver: chromeSignals({ webdriver: true }),
  automation_globals: chromeSignals({ automation_globals: ["callPhantom"] }),
  headless_ua: chromeWith({ "user-agent": UA.headlessChrome }),
  headless_brand: chromeWith({ "sec-ch-ua": '"HeadlessChrome";v="126"' }),
  overlong_user_agent: chromeWith({ "user-agent": `${UA.chromeWindows} ${"1.".repeat(300)}` }),
  known_bot_ua: chromeWith({ "user-agent": UA.googlebot }),
  no_user_agent: chromeWith({ "user-agent": "" }),
  no_accept_headers: request(drop(["accept", "accept-language"]), { signals: chromeDesktopSignals() }),
  chromium_without_fetch_metadata: request(drop(["sec-ch-*", "sec-fetch-*"]), { signals: chromeDesktopSignals() }),
  device_not_allowed: request(chromeDesktopHeaders(), {
    signals: chromeDesktopSignals(),
    config: { ...ALL_DEVICES, allow_desktop: false },
  }),
  no_accept_language: request(drop(["accept-language"]), { signals: chromeDesktopSignals() }),
  fetch_metadata_missing: request(Object.fromEntries(Object.entries(firefoxHeaders()).filter(([n]) => !n.startsWith("sec-fetch-"))), {
    signals: safariSignals(),
  }),
  client_hints_missing: request(drop(["sec-ch-*"]), { signals: chromeDesktopSignals() }),
  client_hints_on_non_chromium: request({ ...firefoxHeaders(), "sec-ch-ua": '"Chromium";v="126"' }, { signals: safariSignals() }),
  client_hints_mobile_mismatch: chromeWith({ "sec-ch-ua-mobile": "?1" }),
  client_hints_platform_mismatch: chromeWith({ "sec-ch-ua-platform": '"macOS"' }),
  header_order_library: {
    ...chromeWith({}),
    headerOrder: ["user-agent", "accept-encoding", "accept", "connection"],
  },
  no_signals: request(chromeDesktopHeaders()),
  brands_on_non_chromium: request(firefoxHeaders(), { signals: { ...safariSignals(), user_agent_data_brands: ["Chromium"] } }),
  ua_data_mobile_mismatch: chromeSignals({ user_agent_data_mobile: true }),
  chrome_object_missing: chromeSignals({ chrome_object: false }),
  permissions_inconsistent: chromeSignals({ permissions_inconsistent: true }),
  no_plugins_desktop: chromeSignals({ plugins: 0 }),
  no_languages: chromeSignals({ languages: [] }),
  languages_disagree: chromeSignals({ languages: ["de-DE", "de"] }),
  screen_empty: chromeSignals({ screen: { width: 0, height: 0, color_depth: 24, pixel_ratio: 1 } }),
  touch_missing_on_mobile: request(chromeAndroidHeaders(), { signals: { ...phoneSignals(), touch_points: 0 } }),
  instant_interaction: chromeSignals({ timing: { dom_content_loaded_ms: 20, first_interaction_ms: 35 } }),
};

describe("the rule table", () => {
  it("has unique ids, known reasons, positive weights and a description", () => {
    const ids = RULES.map((r) => r.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const rule of RULES) {
      expect(BOTCHECK_REASONS[rule.reason].stage).toMatch(/^assess/);
      expect(rule.weight).toBeGreaterThan(0);
      expect(rule.weight).toBeLessThanOrEqual(DECISIVE);
      expect(rule.description.length).toBeGreaterThan(10);
    }
  });

  it("has a firing example for every rule, and no example for a rule that does not exist", () => {
    expect(Object.keys(FIRING).sort()).toEqual(RULES.map((r) => r.id).sort());
  });

  it("fires no rule on the clean baseline", () => {
    expect(assess(request(chromeDesktopHeaders(), { signals: chromeDesktopSignals() })).clues).toEqual([]);
  });

  it.each(RULES.map((r) => [r.id, r] as const))("%s fires on its example, with a detail", (id, rule) => {
    const input = FIRING[id];
    if (!input) throw new Error(`no example for ${id}`);
    const clue = assess(input).clues.find((c) => c.id === id);
    expect(clue).toMatchObject({ id, reason: rule.reason, weight: rule.weight });
    expect(clue?.detail).not.toBe("");
  });

  it("every assess reason is given by some rule", () => {
    const assessReasons = Object.entries(BOTCHECK_REASONS)
      .filter(([, r]) => r.stage.startsWith("assess"))
      .map(([name]) => name);
    expect(new Set(RULES.map((r) => r.reason))).toEqual(new Set(assessReasons));
  });
});
