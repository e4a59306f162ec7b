import { isbotMatch } from "isbot";
import { UAParser } from "ua-parser-js";

/**
 * Parsing a user agent (ua-parser-js, isbot) costs more than the rest of an assessment;
 * visitors of a site share a few hundred user agents, so the results are memoized per
 * string in a bounded map, cleared when full; a string longer than MAX_KEPT is parsed and
 * never held (evidence.ts bounds what reaches here). Parsed results are treated as read-only.
 */
const MAX_ENTRIES = 5_000;
const MAX_KEPT = 1024;
const parsed = new Map<string, UAParser.IResult>();
const bots = new Map<string, string | null>();

export function parseUserAgent(userAgent: string): UAParser.IResult {
  let result = parsed.get(userAgent);
  if (result === undefined) {
    result = UAParser(userAgent);
    if (userAgent.length > MAX_KEPT) return result;
    if (parsed.size >= MAX_ENTRIES) parsed.clear();
    parsed.set(userAgent, result);
  }
  return result;
}

/** The isbot pattern the user agent matches, or null. */
export function botMatch(userAgent: string): string | null {
  let match = bots.get(userAgent);
  if (match === undefined) {
    match = isbotMatch(userAgent);
    if (userAgent.length > MAX_KEPT) return match;
    if (bots.size >= MAX_ENTRIES) bots.clear();
    bots.set(userAgent, match);
  }
  return match;
}
