import { memoize } from "../../../shared/platform/memo.js";
import { hostOf } from "../../../shared/verify/index.js";

/**
 * The host of the page a bot check comes from, for the key's domain lock: the Origin
 * header (sent by the browser with every cross-origin fetch), else the Referer's host.
 * The opaque origin `null` names no page. The `domain` parameter is not used: the page
 * script does not choose which site it protects.
 */
export function pageHost(headers: Readonly<Record<string, string>>): string | undefined {
  const origin = headers.origin?.trim();
  if (origin) return origin === "null" ? undefined : hostOfUrl(origin);
  const referer = headers.referer?.trim();
  return referer ? hostOfUrl(referer) : undefined;
}

/** Remembered per header value (bounded, memo.ts): parsing a URL was a twentieth of an assessment. */
const hostOfUrl = memoize(hostOfUrlNow);

function hostOfUrlNow(value: string): string | undefined {
  try {
    const url = new URL(value);
    if (url.protocol !== "http:" && url.protocol !== "https:") return undefined;
    return hostOf(url.hostname) ?? (url.hostname.toLowerCase() || undefined);
  } catch {
    return undefined;
  }
}
