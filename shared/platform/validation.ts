import { isIP } from "node:net";
import { Ajv, type ErrorObject, type ValidateFunction } from "ajv";
import { parse as parseDomain } from "tldts";
import { isPlainMailbox } from "./mailbox.js";
import type { FromSchema } from "./schema-type.js";

/**
 * One ajv instance for every request body and stream message, with the formats the
 * contracts need. A refusal names the field: `bad_<field>` for an invalid value,
 * `missing_<field>` for an absent required one, or the format's own reason
 * (`bad_domain`, `bad_cidr`, `bad_country`) as operator-api.md section 2 shows.
 */

const regionNames = new Intl.DisplayNames(["en"], { type: "region", fallback: "code" });

/** Region codes CLDR names that are not ISO 3166-1 countries (groupings, unknown, pseudo). */
const NOT_COUNTRIES = new Set(["AC", "CP", "CQ", "DG", "EA", "EU", "EZ", "IC", "QO", "TA", "UN", "XA", "XB", "ZZ"]);

/**
 * An ISO 3166-1 alpha-2 code in current use (plus XK, which GeoIP databases use for
 * Kosovo). Retired codes (DD, SU, YU, UK, ...) are refused: the country database never
 * answers them, so a rule naming one would silently never match.
 */
export function isCountryCode(value: string): boolean {
  return (
    /^[A-Z]{2}$/.test(value) &&
    regionNames.of(value) !== value &&
    !NOT_COUNTRIES.has(value) &&
    new Intl.Locale(`und-${value}`).region === value
  );
}

/** `::a.b.c.d`, IPv4-compatible IPv6 (deprecated by RFC 4291): ipaddr.js reads it as `::ffff:a.b.c.d`. */
const IPV4_COMPATIBLE = /^::\d+\.\d+\.\d+\.\d+$/;

/**
 * An address written in a standard form only: IPv4 as four decimal parts without leading
 * zeros (`10.1.2.3`; never `167838211`, `0xa.1.2.3`, `012.1.2.3` or `10.1.3`, which
 * ipaddr.js and inet_aton read as addresses too), IPv6 as RFC 4291 text, an embedded IPv4
 * part held to the same rule, no zone index (`%eth0`), no IPv4-compatible `::a.b.c.d`.
 * Node's isIP is that rule; the rest is checked here.
 */
export function isAddressText(text: string): boolean {
  return isIP(text) !== 0 && !text.includes("%") && !IPV4_COMPATIBLE.test(text);
}

/** An address (isAddressText) or a CIDR block of one, with a prefix length in decimal. */
export function isCidrOrAddress(value: string): boolean {
  const [address, bits, extra] = value.split("/");
  if (extra !== undefined || !isAddressText(address)) return false;
  if (bits === undefined) return true;
  return /^(?:0|[1-9]\d{0,2})$/.test(bits) && Number(bits) <= (isIP(address) === 4 ? 32 : 128);
}

/** A host name with a public suffix (or a .test/.example style name for fixtures), no scheme, no port. */
export function normalizeDomain(value: string): string | null {
  const name = value.trim().toLowerCase().replace(/\.$/, "");
  if (name.length === 0 || name.length > 253) return null;
  if (!/^(?=.{1,253}$)([a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9])?)(\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)+$/.test(name)) return null;
  const parsed = parseDomain(name, { allowPrivateDomains: true });
  if (parsed.isIp) return null;
  return name;
}

export const ajv = new Ajv({ allErrors: false, coerceTypes: false, useDefaults: true, removeAdditional: false, allowUnionTypes: true });
ajv.addFormat("domain", { type: "string", validate: (v: string) => normalizeDomain(v) !== null });
ajv.addFormat("cidr", { type: "string", validate: isCidrOrAddress });
ajv.addFormat("country", { type: "string", validate: isCountryCode });

/**
 * A real calendar date `YYYY-MM-DD`. Date.parse alone is not enough: it rolls 2024-02-30
 * over to March 1st, and accepts year 0000, which PostgreSQL refuses (a 500, not a 400).
 */
export function isIsoDate(value: string): boolean {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(value) || value < "0001-01-01") return false;
  const parsed = Date.parse(`${value}T00:00:00Z`);
  return !Number.isNaN(parsed) && new Date(parsed).toISOString().slice(0, 10) === value;
}

/** 1970 to 9999: an offset must not push a time into year 0 or 10000, which PostgreSQL refuses. */
const inTimeRange = (ms: number) => ms >= 0 && ms < Date.UTC(10000, 0, 1);

ajv.addFormat("date-time", {
  type: "string",
  validate: (v: string) =>
    /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?$/.test(v) &&
    isIsoDate(v.slice(0, 10)) &&
    inTimeRange(Date.parse(v.includes("T") ? v : v.replace(" ", "T"))),
});
ajv.addFormat("date", { type: "string", validate: isIsoDate });
/**
 * A member's address is the mailer's own rule (platform/mailbox.ts): an address the API takes is
 * one the mailer will send to, never refused only when its invitation goes out.
 */
ajv.addFormat("email", { type: "string", validate: isPlainMailbox });
ajv.addFormat("http-url", {
  type: "string",
  validate: (v: string) => {
    try {
      const u = new URL(v);
      return u.protocol === "http:" || u.protocol === "https:";
    } catch {
      return false;
    }
  },
});

const FORMAT_REASONS: Record<string, string> = {
  domain: "bad_domain",
  cidr: "bad_cidr",
  country: "bad_country",
};

function fieldOf(error: ErrorObject): string {
  if (error.keyword === "required") return String((error.params as { missingProperty: string }).missingProperty);
  const first = error.instancePath.split("/").filter(Boolean)[0];
  if (error.keyword === "additionalProperties") {
    return String((error.params as { additionalProperty: string }).additionalProperty);
  }
  return first ?? "body";
}

export function reasonOf(error: ErrorObject, overrides: Record<string, string> = {}): string {
  const field = fieldOf(error);
  if (error.keyword === "required") return `missing_${field}`;
  if (error.keyword === "format") {
    const format = String((error.params as { format: string }).format);
    if (Object.hasOwn(FORMAT_REASONS, format)) return FORMAT_REASONS[format];
  }
  // hasOwn: a field named `__proto__` or `constructor` must not find Object.prototype's.
  return Object.hasOwn(overrides, field) ? overrides[field] : `bad_${field}`;
}

export type Validated<T> = { ok: true; value: T } | { ok: false; reason: string; detail: string };

/** A body check that keeps its JSON schema, so the OpenAPI documents (ingress/openapi/) describe what is checked. */
export type Validator<T> = ((data: unknown) => Validated<T>) & { readonly schema: object };

export function validator<T>(schema: object, overrides: Record<string, string> = {}): Validator<T> {
  const validate: ValidateFunction = ajv.compile(schema);
  const check = (data: unknown): Validated<T> => {
    if (validate(data)) return { ok: true, value: data as T };
    const error = validate.errors?.[0];
    if (!error) return { ok: false, reason: "bad_request", detail: "invalid" };
    return { ok: false, reason: reasonOf(error, overrides), detail: `${error.instancePath || "/"} ${error.message ?? ""}`.trim() };
  };
  return Object.assign(check, { schema });
}

const guards = new WeakMap<object, ValidateFunction>();

/**
 * ajv's check of `schema`, compiled once per schema object, as a guard for the type the
 * schema describes (schema-type.ts): what passes is typed by the schema itself.
 */
export function guardOf<S extends object>(schema: S): ValidateFunction<FromSchema<S>> {
  let guard = guards.get(schema);
  if (guard === undefined) guards.set(schema, (guard = ajv.compile(schema)));
  return guard as ValidateFunction<FromSchema<S>>;
}

const MAX_DEPTH = 32;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Text PostgreSQL can store: no NUL (text and jsonb refuse it), no lone UTF-16 surrogate (jsonb refuses it). */
export function isStorableText(value: string): boolean {
  return !value.includes("\u0000") && !LONE_SURROGATE.test(value);
}

/**
 * The first top-level field of a parsed JSON body whose value (or a key inside it) cannot
 * be stored, or is nested deeper than PostgreSQL's jsonb and JSON.stringify handle
 * comfortably; null when the whole body is fine. Schemas check shapes; this checks what
 * a schema cannot say, so that such input is a 400 naming the field, never a 500.
 */
export function unstorableField(body: Record<string, unknown>): string | null {
  const fine = (value: unknown, depth: number): boolean => {
    if (typeof value === "string") return isStorableText(value);
    if (value === null || typeof value !== "object") return true;
    if (depth >= MAX_DEPTH) return false;
    if (Array.isArray(value)) return value.every((item) => fine(item, depth + 1));
    return Object.entries(value).every(([key, item]) => isStorableText(key) && fine(item, depth + 1));
  };
  for (const [field, value] of Object.entries(body)) {
    if (!isStorableText(field) || !fine(value, 1)) return field;
  }
  return null;
}
