import { describe, expect, it } from "vitest";
import { type Interaction, judgeInteraction } from "../../../shared/botcheck/interaction.js";
import { createInteractionParser } from "../../../shared/botcheck/signals.js";

/** A mouse approach as Chromium reported one of our own hands: curved, uneven, 18 segments. */
const HAND: Interaction = {
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
};
const with_ = (changes: Partial<Interaction>): Interaction => ({ ...HAND, ...changes });

describe("judgeInteraction", () => {
  it.each<[string, Interaction | undefined, string]>([
    ["a hand on a mouse", HAND, "human"],
    ["a pen's approach", with_({ input: "pen" }), "human"],
    ["a finger with a contact area", with_({ input: "touch", trail: 0, moves: 0, path_px: 0, span_px: 0, contact_px: 24 }), "human"],
    // absent: passes at the higher difficulty
    ["no summary", undefined, "absent"],
    ["a keyboard hold (Space or Enter)", with_({ input: "keyboard", keys: 3 }), "absent"],
    [
      "a keyboard hold by someone who never touched the mouse",
      { ...HAND, input: "keyboard", keys: 9, moves: 0, trail: 0, path_px: 0, span_px: 0, speed_cv: 0, max_speed: 0 },
      "absent",
    ],
    [
      "a mouse that did not move (the page loaded under it)",
      with_({ moves: 0, trail: 0, path_px: 0, span_px: 0, speed_cv: 0, max_speed: 0 }),
      "absent",
    ],
    ["a trail too short to judge", with_({ trail: 4 }), "absent"],
    ["a ruler-straight approach (synthetic, Mouse Keys)", with_({ span_px: 312.3 }), "absent"],
    ["constant speed", with_({ speed_cv: 0.01 }), "absent"],
    ["a jump (a warp, voice control)", with_({ max_speed: 45 }), "absent"],
    ["a touch without contact size", with_({ input: "touch", contact_px: 1 }), "absent"],
    // forged: refused
    ["a pointer press with no press seen", with_({ presses: 0 }), "forged"],
    ["a keyboard hold with no key seen", with_({ input: "keyboard", keys: 0 }), "forged"],
    ["a trail longer than the moves", with_({ moves: 10, trail: 18 }), "forged"],
    ["a span longer than the path", with_({ span_px: 400 }), "forged"],
    ["a path without a trail", with_({ trail: 0 }), "forged"],
  ])("%s → %s", (_name, evidence, verdict) => {
    expect(judgeInteraction(evidence)).toBe(verdict);
  });
});

describe("the interaction parameter", () => {
  const parse = createInteractionParser();

  it("reads an object or its JSON (form encoding) and drops unknown fields", () => {
    expect(parse({ ...HAND, extra: 1 })).toEqual(HAND);
    expect(parse(JSON.stringify(HAND))).toEqual(HAND);
  });

  it.each<[string, unknown]>([
    ["absent", undefined],
    ["not JSON", "{"],
    ["an array", [HAND]],
    ["a missing field", (({ trail, ...rest }) => rest)(HAND)],
    ["an unknown input", with_({ input: "gamepad" as Interaction["input"] })],
    ["a negative count", with_({ moves: -1 })],
    ["a trail over 32 segments", with_({ trail: 33 })],
    ["a fractional count", with_({ presses: 1.5 })],
    ["a JSON string over 2 KiB", JSON.stringify({ ...HAND, pad: "x".repeat(2100) })],
  ])("sets aside %s (judged as no evidence)", (_name, raw) => {
    expect(parse(raw)).toBeUndefined();
  });
});
