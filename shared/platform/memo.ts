/**
 * A function of one string argument that remembers its recent answers: for per-call work
 * on values that repeat (a key as sent, a user agent, a connecting address). Bounded: the
 * memory is cleared when `limit` answers are held, and arguments longer than `maxLength`
 * are computed every time, never held. Answers are shared between callers: never modify one.
 */
export function memoize<T>(
  compute: (input: string) => T,
  /** `keep`: whether an answer is worth holding (e.g. not a refusal an attacker can vary at will). */
  options: { limit?: number; maxLength?: number; keep?: (value: T) => boolean } = {},
): (input: string) => T {
  const limit = options.limit ?? 10_000;
  const maxLength = options.maxLength ?? 1024;
  const keep = options.keep;
  const known = new Map<string, T>();
  // The last answer given, checked first: under load one key (or address) repeats call after
  // call, and each call's copy is a new string whose hash a Map lookup must compute, where
  // comparing it with the last one is a length check and a memcmp.
  let lastInput: string | undefined;
  let lastValue: T | undefined;
  return (input) => {
    if (input === lastInput) return lastValue as T;
    let value = known.get(input);
    if (value === undefined) {
      value = compute(input);
      if (input.length > maxLength || (keep !== undefined && !keep(value))) return value;
      if (known.size >= limit) known.clear();
      known.set(input, value);
    }
    lastInput = input;
    lastValue = value;
    return value;
  };
}
