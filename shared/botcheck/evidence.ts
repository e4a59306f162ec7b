import { memoize } from "../platform/memo.js";
import { parseUserAgent } from "./ua.js";
import { type DeviceClass, effectiveDeviceClass } from "./device.js";
import type { Signals } from "./signals.js";

/** The key's bot-check settings (the `config` object of a challenge answer). */
export interface BotcheckConfig {
  hold_ms: number;
  allow_desktop: boolean;
  allow_tablet: boolean;
  allow_mobile: boolean;
}

export interface AssessInput {
  /** Request headers, names in lower case. */
  headers: Readonly<Record<string, string>>;
  /** Header names, lower case, in arrival order (for order clues; may be empty). */
  headerOrder: readonly string[];
  signals: Signals | undefined;
  config: BotcheckConfig;
  /** Whether the request carried a token that `verifyToken` accepted. */
  tokenValid: boolean;
}

export type Engine = "blink" | "gecko" | "webkit" | "other";
export type Platform = "windows" | "macos" | "ios" | "android" | "chromeos" | "linux";

/** Everything the rules look at, read once from the request. */
export interface Evidence {
  userAgent: string;
  headers: Readonly<Record<string, string>>;
  headerOrder: readonly string[];
  signals: Signals | undefined;
  config: BotcheckConfig;
  device: DeviceClass;
  engine: Engine;
  /** Major version of the browser the engine implies: Chrome for Blink, Firefox for Gecko, Safari/iOS for WebKit. */
  engineMajor: number | undefined;
  /** An Android WebView (in-app browser): its headers differ from Chrome's. */
  webView: boolean;
  /** Platform the user agent claims. */
  uaPlatform: Platform | undefined;
  hasSecFetch: boolean;
  hasClientHints: boolean;
}

/** What the user agent alone says: the same for every request that sends it. */
interface UaFacts {
  engine: Engine;
  engineMajor: number | undefined;
  webView: boolean;
  uaPlatform: Platform | undefined;
}

/** Remembered per user agent (bounded, memo.ts): the regular expressions ran on every assessment. */
const uaFacts = memoize((userAgent: string): UaFacts => {
  const parsed = parseUserAgent(userAgent);
  const engine = engineOf(parsed.engine.name);
  return {
    engine,
    engineMajor: engineMajorOf(engine, parsed),
    webView: parsed.browser.name === "Chrome WebView" || /; wv\)/.test(userAgent),
    uaPlatform: uaPlatformOf(userAgent),
  };
});

/**
 * The longest user agent a browser is taken to send (real ones are under ~300 characters).
 * A longer one is refused `bot_ua` (rules.ts, overlong_user_agent), and no rule or parser
 * ever reads more than its first MAX_USER_AGENT + 1 characters: the header cap allows 32 KiB,
 * and parsing that much on every call is CPU an attacker would choose.
 */
export const MAX_USER_AGENT = 512;

export function gatherEvidence(input: AssessInput): Evidence {
  const sent = input.headers["user-agent"] ?? "";
  const userAgent = sent.length > MAX_USER_AGENT ? sent.slice(0, MAX_USER_AGENT + 1) : sent;
  const facts = uaFacts(userAgent);
  const names = Object.keys(input.headers);
  return {
    userAgent,
    headers: input.headers,
    headerOrder: input.headerOrder,
    signals: input.signals,
    config: input.config,
    device: effectiveDeviceClass(userAgent, input.signals),
    engine: facts.engine,
    engineMajor: facts.engineMajor,
    webView: facts.webView,
    uaPlatform: facts.uaPlatform,
    hasSecFetch: names.some((name) => name.startsWith("sec-fetch-")),
    hasClientHints: names.some((name) => name.startsWith("sec-ch-ua")),
  };
}

function engineOf(name: string | undefined): Engine {
  if (name === "Blink") return "blink";
  if (name === "Gecko") return "gecko";
  if (name === "WebKit") return "webkit";
  return "other";
}

function engineMajorOf(engine: Engine, parsed: ReturnType<typeof parseUserAgent>): number | undefined {
  const ua = parsed.ua;
  if (engine === "blink") return majorOf(/Chrom(?:e|ium)\/(\d+)/.exec(ua)?.[1]);
  if (engine === "gecko") return majorOf(/(?:Firefox|rv:)\/?(\d+)/.exec(ua)?.[1]);
  if (engine === "webkit") {
    // Every iOS browser is WebKit and follows the iOS version; desktop Safari has Version/.
    if (parsed.os.name === "iOS") return majorOf(parsed.os.version?.split(".")[0]);
    return majorOf(/Version\/(\d+)/.exec(ua)?.[1]);
  }
  return undefined;
}

function majorOf(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const value = Number.parseInt(text, 10);
  return Number.isFinite(value) ? value : undefined;
}

/** Order matters: Android UAs say Linux, iPad and iPhone UAs say "like Mac OS X". */
const UA_PLATFORMS: ReadonlyArray<readonly [RegExp, Platform]> = [
  [/Windows NT|Windows Phone/, "windows"],
  [/Android/, "android"],
  [/CrOS/, "chromeos"],
  [/iPhone|iPad|iPod/, "ios"],
  [/Macintosh|Mac OS X/, "macos"],
  [/Linux|X11/, "linux"],
];

function uaPlatformOf(userAgent: string): Platform | undefined {
  return UA_PLATFORMS.find(([pattern]) => pattern.test(userAgent))?.[1];
}

const CH_PLATFORMS: ReadonlyMap<string, Platform> = new Map([
  ["windows", "windows"],
  ["macos", "macos"],
  ["ios", "ios"],
  ["android", "android"],
  ["chrome os", "chromeos"],
  ["chromium os", "chromeos"],
  ["linux", "linux"],
]);

const hintedPlatform = memoize((value: string) => CH_PLATFORMS.get(value.trim().replace(/^"|"$/g, "").toLowerCase()));

/** The platform of a `Sec-CH-UA-Platform` value (a quoted string), if it names a known one. Remembered per value (bounded). */
export function clientHintPlatform(value: string | undefined): Platform | undefined {
  return value === undefined ? undefined : hintedPlatform(value);
}

const primarySubtag = memoize((value: string): string | undefined => {
  const first = value.split(",")[0]?.split(";")[0]?.trim().toLowerCase();
  const primary = first?.split(/[-_]/)[0];
  return primary && primary !== "*" ? primary : undefined;
});

/**
 * The primary subtag of a language tag or of the first Accept-Language entry: "de-CH,de;q=0.9" → "de".
 * Remembered per value (bounded): a visitor's Accept-Language and languages repeat.
 */
export function primaryLanguage(value: string | undefined): string | undefined {
  return value === undefined ? undefined : primarySubtag(value);
}
