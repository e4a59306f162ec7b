/**
 * The TypeScript type a JSON schema describes, so a message's schema (written `as const`) is
 * its one source and the type cannot drift from what ajv checks:
 *
 *   export const scanJobSchema = { type: "object", ... } as const;
 *   export type ScanJob = FromSchema<typeof scanJobSchema>;
 *
 * It reads the keywords our contracts use: `type` (one or a list), `enum`, `const`, `oneOf`,
 * `anyOf`, `items`, `properties` with `required`. An object without `additionalProperties:
 * false` may carry other fields: its type names the listed ones, and TypeScript's object
 * types are open to the rest. Keywords that only narrow a value (`minimum`, `pattern`,
 * `format`, lengths) leave its type as it is.
 */
export type FromSchema<S> = S extends { const: infer C }
  ? C
  : S extends { enum: readonly (infer E)[] }
    ? E
    : S extends { oneOf: readonly (infer U)[] }
      ? Each<U>
      : S extends { anyOf: readonly (infer U)[] }
        ? Each<U>
        : S extends { type: readonly (infer T)[] }
          ? OfType<S, T>
          : S extends { type: infer T }
            ? OfType<S, T>
            : unknown;

type Each<U> = U extends unknown ? FromSchema<U> : never;

type OfType<S, T> = T extends "string"
  ? string
  : T extends "integer" | "number"
    ? number
    : T extends "boolean"
      ? boolean
      : T extends "null"
        ? null
        : T extends "array"
          ? S extends { items: infer I }
            ? FromSchema<I>[]
            : unknown[]
          : T extends "object"
            ? ObjectOf<S>
            : never;

type Required<S> = S extends { required: readonly (infer R)[] } ? R : never;

type Flatten<T> = { [K in keyof T]: T[K] } & {};

type ObjectOf<S> = S extends { properties: infer P }
  ? Flatten<
      { -readonly [K in keyof P as K extends Required<S> ? K : never]: FromSchema<P[K]> } & {
        -readonly [K in keyof P as K extends Required<S> ? never : K]?: FromSchema<P[K]>;
      }
    >
  : { [field: string]: unknown };

/**
 * True when A and B accept the same values. For a hand-written type kept for its field
 * comments: `true satisfies SameType<UsageBatch, FromSchema<typeof usageBatchSchema>>`
 * fails to compile when the two drift apart.
 */
export type SameType<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
