import { isbotMatch } from "isbot";
import { UAParser } from "ua-parser-js";

/**
 * Parsing a user agent (ua-parser-js, isbot) costs more than the rest of an assessment;
 * visitors of a site share a few hundred user agents, so the results are memoized per
 * string in a bounded map, cleared when full. Parsed results are treated as read-only.
 */
const MAX_ENTRIES = 5_000;
const parsed = new Map<string, UAParser.IResult>();
const bots = new Map<string, string | null>();

export function parseUserAgent(userAgent: string): UAParser.IResult {
  let result = parsed.get(userAgent);
  if (result === undefined) {
    result = UAParser(userAgent);
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
    if (bots.size >= MAX_ENTRIES) bots.clear();
    bots.set(userAgent, match);
  }
  return match;
}
