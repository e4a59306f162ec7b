import type { Reason } from "../platform/reasons.js";

/** A rule's answer: a refusal is a value, never an exception. */
export type Verdict = { ok: true } | { ok: false; reason: Reason };

export const PASS: Verdict = Object.freeze({ ok: true });

export function refuse(reason: Reason): Verdict {
  return { ok: false, reason };
}

/** Finds the country of an address; null when it cannot be placed. */
export type CountryOf = (address: string) => string | null;

/** What one verify call asks, already read from the request. */
export interface Ask {
  /** `domain` parameter as sent (undefined when absent or empty). */
  domain: string | undefined;
  /** `scope` parameter (undefined = no scope check). */
  scope: string | undefined;
  /** `ip` parameter: the visitor's address, when a server asks on its behalf. */
  visitorIp: string | undefined;
  /** The connecting address. */
  remoteAddress: string;
  /** Clock milliseconds of the call. */
  now: number;
}
