/**
 * How long each sign-in secret lives and how often it may be asked for
 * (docs/accounts-members.md). Every time is on the shared clock, so the test clock moves
 * them all.
 */

const MINUTE_MS = 60_000;
const HOUR_MS = 60 * MINUTE_MS;

export const LIFETIMES = {
  /** An invitation link: long enough to be read over a weekend. */
  invitationMs: 72 * HOUR_MS,
  /** A sign-in link: read at once, so short. */
  signinLinkMs: 15 * MINUTE_MS,
  /** A WebAuthn challenge, between its options call and the verify call. */
  challengeMs: 5 * MINUTE_MS,
  /** A session ends after this long without a request. */
  sessionIdleMs: 12 * HOUR_MS,
  /** And this long after its sign-in, whatever its use. */
  sessionAbsoluteMs: 7 * 24 * HOUR_MS,
  /** last_seen_at is written at most this often per session (one UPDATE, not one per request). */
  sessionTouchMs: MINUTE_MS,
  /** Adding a passkey needs a sign-in at most this old (a stolen, older cookie cannot add one). */
  freshSigninMs: 15 * MINUTE_MS,
} as const;

export interface Budget {
  /** Name in the Redis key. */
  name: string;
  limit: number;
  windowS: number;
}

/** Fixed windows on the shared clock; a call past the limit is refused 429 `signin_rate_limited`. */
export const BUDGETS = {
  /** Every sign-in ceremony call without a session (options, verify, link consume, invitation), per source. */
  ceremonyPerSource: { name: "ceremony", limit: 60, windowS: 15 * 60 },
  /** Sign-in link requests, per source. */
  linkPerSource: { name: "link-src", limit: 10, windowS: 3600 },
  /** Sign-in link requests, per e-mail address (counted whether or not it is a member's). */
  linkPerEmail: { name: "link-email", limit: 5, windowS: 3600 },
  /** Failed passkey sign-ins with one of a member's passkeys, per member e-mail. */
  failuresPerEmail: { name: "fail-email", limit: 10, windowS: 15 * 60 },
} as const satisfies Record<string, Budget>;

/** Shown in the authenticator and the browser's passkey dialog. */
export const RP_NAME = "Access gateway";
