/**
 * The prober reads no stream: it is a timer actor on the shared clock (actors/runtime/every.ts).
 * What it hands from one step to the next is the outcome of one check.
 */
export interface ProbeOutcome {
  readonly ok: boolean;
  /** Final HTTP status after redirects; null when no answer came. */
  readonly statusCode: number | null;
  /** Wall time of the whole check (all redirect hops, body read); null when it never answered. */
  readonly latencyMs: number | null;
  /** Why a check failed, in words (time-out, refused by the SSRF guard, status 503, certificate). */
  readonly error: string | null;
}
