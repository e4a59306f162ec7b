/**
 * The interaction evidence a grant carries (request parameter `interaction`): the widget's
 * summary of the pointer, touch and keyboard input it saw, and the one rule that judges
 * it. No imports: botcheck.js bundles `judgeInteraction` too, so the widget knows before
 * it asks which difficulty its proof must reach. The schema is in signals.ts, the policy
 * in README.md ("Interaction evidence").
 *
 * Evidence is a summary written by the client: a script that imitates the widget can
 * forge a plausible one. So evidence never lets anyone through on its own; it decides how
 * much work the proof must show (`human`: the key's difficulty; `absent`: two bits more),
 * and only a summary the widget cannot produce (`forged`) is refused.
 */

export type InputKind = "mouse" | "pen" | "touch" | "keyboard";

export interface Interaction {
  /** What pressed the button: the pointerdown's pointerType, or the keyboard. */
  input: InputKind;
  /** pointerdown, touchstart and mousedown events seen since the script loaded (the hold's own included). */
  presses: number;
  /** keydown events seen since the script loaded (a keyboard hold's own included). */
  keys: number;
  /** pointermove events (any pointer) seen since the script loaded. */
  moves: number;
  /** Segments of the approach trail: the last moves (at most INTERACTION_TRAIL) before the press. */
  trail: number;
  /** Length of the trail, CSS pixels. */
  path_px: number;
  /** Distance between the trail's first and last points, CSS pixels. */
  span_px: number;
  /** Coefficient of variation (standard deviation / mean) of the trail's segment speeds. */
  speed_cv: number;
  /** The trail's fastest segment, CSS pixels per millisecond. */
  max_speed: number;
  /** The press's contact size (larger of PointerEvent width and height), 0 when not reported. */
  contact_px: number;
}

export type InteractionVerdict = "human" | "absent" | "forged";

/** Most segments of the approach trail the widget keeps. */
export const INTERACTION_TRAIL = 32;
/** Fewer segments than this say nothing about the hand behind them. */
export const TRAIL_MIN = 5;
/** span / path at or above this: a ruler-straight approach (synthetic moves, Mouse Keys). */
export const STRAIGHT_AT = 0.999;
/** Speed variation below this: constant velocity, no hand accelerates that evenly. */
export const STEADY_BELOW = 0.05;
/** Faster than this (px/ms, 20,000 px/s) between two moves: a jump, not a motion (a warp, voice control). */
export const FASTEST = 20;
/** A finger reports a contact area; a synthetic touch reports 1 px (or nothing). */
export const CONTACT_MIN_PX = 2;

/**
 * `forged`: fields that contradict each other (a pointer press with no press seen, a
 * keyboard hold with no key, a trail longer than the moves, a span longer than the path).
 * `human`: a mouse or pen approach of at least TRAIL_MIN segments that is neither
 * ruler-straight, nor of constant speed, nor has a jump; or a touch with a contact area.
 * `absent`: everything else: no summary, a keyboard hold, a short or machine-like trail,
 * a touch without contact size. Machine-like motion is not refused: Mouse Keys, head and
 * eye pointers and voice control move that way, and they must pass.
 */
export function judgeInteraction(evidence: Interaction | undefined): InteractionVerdict {
  if (evidence === undefined) return "absent";
  const { input, presses, keys, moves, trail, path_px: path, span_px: span } = evidence;
  const pointer = input !== "keyboard";
  if ((pointer && presses < 1) || (!pointer && keys < 1)) return "forged";
  if (trail > moves || span > path + 1 || (trail === 0 && path > 0)) return "forged";
  if (input === "touch") return evidence.contact_px >= CONTACT_MIN_PX ? "human" : "absent";
  if (!pointer || trail < TRAIL_MIN || path <= 0) return "absent";
  const machine = span / path >= STRAIGHT_AT || evidence.speed_cv < STEADY_BELOW || evidence.max_speed > FASTEST;
  return machine ? "absent" : "human";
}
