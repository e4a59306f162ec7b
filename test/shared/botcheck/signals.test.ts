import { describe, expect, it } from "vitest";
import { createSignalsParser, SIGNALS_MAX_ITEMS, SIGNALS_MAX_STRING } from "../../../shared/botcheck/signals.js";
import { chromeDesktopSignals } from "./fixtures.js";

const parse = createSignalsParser();

describe("signals parser", () => {
  it("accepts the full set of fields", () => {
    expect(parse(chromeDesktopSignals())).toEqual({ ok: true, signals: chromeDesktopSignals() });
  });

  it("accepts an empty object: every field is optional", () => {
    expect(parse({})).toEqual({ ok: true, signals: {} });
  });

  it("accepts a JSON string (form encoding)", () => {
    expect(parse(JSON.stringify({ webdriver: true }))).toEqual({ ok: true, signals: { webdriver: true } });
  });

  it("drops unknown fields, at the top and nested, without touching the input", () => {
    const raw = { webdriver: false, future_field: 1, screen: { width: 10, orientation: "landscape" } };
    expect(parse(raw)).toEqual({ ok: true, signals: { webdriver: false, screen: { width: 10 } } });
    expect(raw.future_field).toBe(1);
    expect(raw.screen.orientation).toBe("landscape");
  });

  it.each([
    ["null", null],
    ["an array", [1, 2]],
    ["a number", 42],
    ["broken JSON", "{webdriver:"],
    ["a JSON string of an array", "[]"],
    ["an oversized JSON string", JSON.stringify({ timezone: "x".repeat(20_000) })],
    ["webdriver as a string", { webdriver: "true" }],
    ["a negative count", { plugins: -1 }],
    ["a fractional count", { touch_points: 1.5 }],
    ["a string too long", { timezone: "x".repeat(SIGNALS_MAX_STRING + 1) }],
    ["too many languages", { languages: Array.from({ length: SIGNALS_MAX_ITEMS + 1 }, () => "en") }],
    ["a language too long", { languages: ["x".repeat(SIGNALS_MAX_STRING + 1)] }],
    ["a non-string brand", { user_agent_data_brands: [1] }],
    ["screen not an object", { screen: "1920x1080" }],
    ["a negative timing", { timing: { first_interaction_ms: -5 } }],
  ])("refuses %s", (_name, raw) => {
    const result = parse(raw);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.errors.length).toBeGreaterThan(0);
  });

  it("accepts the bounds themselves", () => {
    const raw = {
      timezone: "x".repeat(SIGNALS_MAX_STRING),
      languages: Array.from({ length: SIGNALS_MAX_ITEMS }, () => "en"),
      plugins: 0,
      screen: { pixel_ratio: 2.625 },
    };
    expect(parse(raw).ok).toBe(true);
  });
});
