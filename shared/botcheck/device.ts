import { parseUserAgent } from "./ua.js";
import type { Signals } from "./signals.js";

export type DeviceClass = "desktop" | "tablet" | "mobile";

/**
 * The device class of a user agent (ua-parser-js). Phones and wearables are `mobile`,
 * tablets `tablet`; everything else, including TVs, consoles and an unparseable or
 * empty user agent, is `desktop`.
 */
export function deviceClass(userAgent: string): DeviceClass {
  const type = parseUserAgent(userAgent).device.type;
  if (type === "tablet") return "tablet";
  if (type === "mobile" || type === "wearable") return "mobile";
  return "desktop";
}

/**
 * The class used for the key's device settings. iPadOS Safari sends a Mac user agent
 * by default; a Mac Safari that reports more than one touch point is such an iPad.
 */
export function effectiveDeviceClass(userAgent: string, signals: Signals | undefined): DeviceClass {
  const fromUa = deviceClass(userAgent);
  const touch = signals?.touch_points ?? 0;
  if (fromUa === "desktop" && touch > 1 && looksLikeMacSafari(userAgent)) return "tablet";
  return fromUa;
}

/** Plain substring tests: no pattern here may backtrack on a long, hostile user agent. */
function looksLikeMacSafari(userAgent: string): boolean {
  return (
    userAgent.includes("Macintosh") &&
    /Version\/\d/.test(userAgent) &&
    userAgent.includes("Safari/") &&
    !userAgent.includes("Chrome/") &&
    !userAgent.includes("Firefox/")
  );
}
