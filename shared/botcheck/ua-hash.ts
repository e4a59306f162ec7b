import { hash } from "node:crypto";
import { memoize } from "../platform/memo.js";

/** Bytes of SHA-256 kept to bind a token or a challenge to a user agent. */
export const UA_HASH_BYTES = 16;

/**
 * Truncated SHA-256 of the exact User-Agent header value (binding, not secrecy).
 * Remembered per user agent (they repeat): the answer is shared, never modify it.
 */
export const uaHashBytes: (userAgent: string) => Buffer = memoize((userAgent) =>
  hash("sha256", userAgent, "buffer").subarray(0, UA_HASH_BYTES),
);

/** `uaHashBytes` as 32 lower-case hex characters, the form stored with a challenge. Remembered per user agent too. */
export const uaHash: (userAgent: string) => string = memoize((userAgent) => uaHashBytes(userAgent).toString("hex"));
