/** True when `value` is one of `values` (an `as const` list), narrowing it to that list's type. */
export function isOneOf<T extends string>(values: readonly T[], value: unknown): value is T {
  return typeof value === "string" && (values as readonly string[]).includes(value);
}
