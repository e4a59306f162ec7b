/**
 * Errors a handler throws say whether trying again can help. The runtime reads only
 * that: a PermanentError goes to the dead-letter stream at once, anything else (a
 * RetryableError or an unknown error: a bug or a fault we cannot classify) is retried
 * with backoff until the attempts run out. Unknown errors default to retryable because
 * the common unknown is infrastructure (a dropped connection, a timeout), and a retry
 * costs little while a wrongly dead-lettered message needs an operator.
 */

/** Retrying cannot help: bad data, a refused request, a missing record. */
export class PermanentError extends Error {
  override readonly name = "PermanentError";
  readonly retryable = false;
}

/** Retrying may help: a dependency is down or slow. `retryAfterMs` overrides the backoff. */
export class RetryableError extends Error {
  override readonly name = "RetryableError";
  readonly retryable = true;
  constructor(
    message: string,
    readonly retryAfterMs?: number,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

export function isRetryable(error: unknown): boolean {
  return !(error instanceof PermanentError);
}

/** The delay a RetryableError asks for, if any. */
export function retryAfter(error: unknown): number | undefined {
  return error instanceof RetryableError ? error.retryAfterMs : undefined;
}

/** A one-line description for logs and dead letters (never a stack: dead letters are read by operators). */
export function describeError(error: unknown): string {
  if (error instanceof Error) return `${error.name}: ${error.message}`;
  return `non-error thrown: ${String(error)}`;
}
