/**
 * Gathers exactly the `signals` of shared/botcheck/README.md, inside the bounds of its
 * schema (strings ≤ 256, arrays ≤ 64, whole counts, 0 to 2^31 − 1): a value out of bounds
 * would make the service set the whole object aside and score `no_signals`.
 */

// The one declaration of the signals is the service's (shared/botcheck/signals.ts); a type import
// costs the built script nothing.
import type { Signals } from "../../botcheck/signals.js";
import { INTERACTION_TRAIL, type InputKind, type Interaction } from "../../botcheck/interaction.js";

export type { Signals };

const MAX = 2147483647;

interface UaData {
  brands?: { brand: string }[];
  mobile?: boolean;
}

type Nav = Navigator & { userAgentData?: UaData; deviceMemory?: number };

/** Whole count within the schema, or undefined. */
const count = (value: unknown): number | undefined =>
  typeof value === "number" && Number.isFinite(value) && value >= 0 ? Math.min(Math.round(value), MAX) : undefined;
const millis = (value: unknown, max = MAX): number | undefined =>
  typeof value === "number" && Number.isFinite(value) && value >= 0 ? Math.min(value, max) : undefined;
const texts = (list: ArrayLike<unknown> | undefined): string[] | undefined => {
  if (!list) return undefined;
  const out: string[] = [];
  for (let i = 0; i < list.length && out.length < 64; i++) if (typeof list[i] === "string") out.push((list[i] as string).slice(0, 256));
  return out;
};

const GLOBALS = [
  "callPhantom",
  "_phantom",
  "__nightmare",
  "domAutomation",
  "domAutomationController",
  "__selenium_unwrapped",
  "__webdriver_evaluate",
  "__driver_evaluate",
  "__selenium_evaluate",
  "__fxdriver_evaluate",
  "__driver_unwrapped",
  "__webdriver_unwrapped",
  "__fxdriver_unwrapped",
  "__webdriver_script_fn",
  "_Selenium_IDE_Recorder",
  "_selenium",
  "calledSelenium",
  "__webdriverFunc",
  "__lastWatirAlert",
  "__pwInitScripts",
];
const PATTERN = /^(\$?cdc_|__playwright|\$wdc_)/;

function automationGlobals(): string[] {
  const found: string[] = [];
  const w = window as unknown as Record<string, unknown>;
  const d = document as unknown as Record<string, unknown>;
  for (const name of GLOBALS) if (name in w || name in d) found.push(name);
  for (const owner of [w, d]) {
    for (const name of Object.keys(owner)) if (PATTERN.test(name) && found.indexOf(name) < 0) found.push(name);
  }
  return texts(found) || [];
}

/** What happened on the page before the check: set up as soon as the script runs. */
export interface Activity {
  firstInteraction?: number;
  domContentLoaded?: number;
  pointerMoves: number;
  keypresses: number;
  /** pointerdown, touchstart and mousedown events (a press may count more than once). */
  presses: number;
  /** The last mouse and pen moves, as x, y, time triples (at most INTERACTION_TRAIL + 1 points). */
  points: number[];
  /** `points` as they were at the last pointerdown: the approach to what was pressed. */
  approach: number[];
}

export function watchActivity(): Activity {
  const activity: Activity = { pointerMoves: 0, keypresses: 0, presses: 0, points: [], approach: [] };
  const now = () => performance.now();
  const first = () => {
    activity.presses++;
    if (activity.firstInteraction === undefined) activity.firstInteraction = now();
  };
  const options = { capture: true, passive: true };
  addEventListener(
    "pointerdown",
    () => {
      first();
      activity.approach = activity.points.slice();
    },
    options,
  );
  addEventListener("touchstart", first, options);
  addEventListener("mousedown", first, options);
  addEventListener(
    "keydown",
    () => {
      if (activity.firstInteraction === undefined) activity.firstInteraction = now();
      activity.keypresses++;
    },
    options,
  );
  addEventListener(
    "pointermove",
    (event) => {
      activity.pointerMoves++;
      if (event.pointerType !== "mouse" && event.pointerType !== "pen") return;
      activity.points.push(event.clientX, event.clientY, event.timeStamp);
      if (activity.points.length > (INTERACTION_TRAIL + 1) * 3) activity.points.splice(0, 3);
    },
    options,
  );
  const nav = performance.getEntriesByType && (performance.getEntriesByType("navigation")[0] as PerformanceNavigationTiming | undefined);
  if (nav && nav.domContentLoadedEventStart > 0) activity.domContentLoaded = nav.domContentLoadedEventStart;
  else if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", () => {
      activity.domContentLoaded = now();
    });
  }
  return activity;
}

/** `Notification.permission` denied while the Permissions API says prompt: headless Chrome's tell. */
function permissionsInconsistent(): Promise<boolean | undefined> {
  const N = (window as unknown as { Notification?: { permission: string } }).Notification;
  const permissions = navigator.permissions;
  if (!N || !permissions?.query) return Promise.resolve(undefined);
  const query = permissions.query({ name: "notifications" as PermissionName }).then(
    (status) => N.permission === "denied" && status.state === "prompt",
    () => undefined,
  );
  const timeout = new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), 500));
  return Promise.race([query, timeout]);
}

export async function gatherSignals(activity: Activity): Promise<Signals> {
  const nav = navigator as Nav;
  const s: Signals = {};
  if (typeof nav.webdriver === "boolean") s.webdriver = nav.webdriver;
  s.automation_globals = automationGlobals();
  const ua = nav.userAgentData;
  if (ua?.brands) s.user_agent_data_brands = texts(ua.brands.map((b) => b?.brand));
  if (ua && typeof ua.mobile === "boolean") s.user_agent_data_mobile = ua.mobile;
  s.chrome_object =
    typeof (window as unknown as { chrome?: unknown }).chrome === "object" && (window as unknown as { chrome?: unknown }).chrome !== null;
  const inconsistent = await permissionsInconsistent();
  if (inconsistent !== undefined) s.permissions_inconsistent = inconsistent;
  if (nav.plugins) s.plugins = count(nav.plugins.length);
  if (nav.languages) s.languages = texts(nav.languages);
  if (window.screen) {
    s.screen = {
      width: count(screen.width),
      height: count(screen.height),
      color_depth: count(screen.colorDepth) !== undefined ? Math.min(count(screen.colorDepth) as number, 64) : undefined,
      pixel_ratio: millis(window.devicePixelRatio, 64),
    };
  }
  s.touch_points = count(nav.maxTouchPoints);
  try {
    const zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
    if (typeof zone === "string") s.timezone = zone.slice(0, 256);
  } catch (_) {
    /* no Intl time zone: not observed */
  }
  s.hardware_concurrency = count(nav.hardwareConcurrency);
  s.device_memory = millis(nav.deviceMemory, 1048576);
  s.timing = { dom_content_loaded_ms: millis(activity.domContentLoaded), first_interaction_ms: millis(activity.firstInteraction) };
  s.pointer_moves = count(activity.pointerMoves);
  s.keypresses = count(activity.keypresses);
  return JSON.parse(JSON.stringify(s)) as Signals; // drops the undefined fields
}

const round = (value: number, places: number): number => Math.round(value * places) / places;

/**
 * The grant's `interaction` (shared/botcheck/interaction.ts): what pressed the button, the
 * page's counts, and the shape of the approach trail (mouse and pen only).
 */
export function summarise(activity: Activity, input: InputKind, contact: number): Interaction {
  const p = input === "mouse" || input === "pen" ? activity.approach : [];
  const speeds: number[] = [];
  let path = 0;
  for (let i = 3; i < p.length; i += 3) {
    const d = Math.sqrt((p[i] - p[i - 3]) * (p[i] - p[i - 3]) + (p[i + 1] - p[i - 2]) * (p[i + 1] - p[i - 2]));
    path += d;
    speeds.push(d / Math.max(1, p[i + 2] - p[i - 1]));
  }
  const n = speeds.length;
  let mean = 0;
  let spread = 0;
  for (const v of speeds) mean += v / n;
  for (const v of speeds) spread += ((v - mean) * (v - mean)) / n;
  const last = p.length - 3;
  const span = n ? Math.sqrt((p[last] - p[0]) * (p[last] - p[0]) + (p[last + 1] - p[1]) * (p[last + 1] - p[1])) : 0;
  return {
    input,
    presses: count(activity.presses) || 0,
    keys: count(activity.keypresses) || 0,
    moves: count(activity.pointerMoves) || 0,
    trail: n,
    path_px: round(path, 10),
    span_px: Math.min(round(span, 10), round(path, 10)),
    speed_cv: mean > 0 ? round(Math.sqrt(spread) / mean, 1000) : 0,
    max_speed: round(n ? Math.max.apply(null, speeds) : 0, 1000),
    contact_px: millis(contact, 4096) || 0,
  };
}
