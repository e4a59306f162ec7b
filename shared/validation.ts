import { Ajv, type ErrorObject, type ValidateFunction } from "ajv";
import ipaddr from "ipaddr.js";
import { parse as parseDomain } from "tldts";

/**
 * One ajv instance for every request body and stream message, with the formats the
 * contracts need. A refusal names the field: `bad_<field>` for an invalid value,
 * `missing_<field>` for an absent required one, or the format's own reason
 * (`bad_domain`, `bad_cidr`, `bad_country`) as operator-api.md section 2 shows.
 */

const regionNames = new Intl.DisplayNames(["en"], { type: "region", fallback: "code" });

export function isCountryCode(value: string): boolean {
  return /^[A-Z]{2}$/.test(value) && regionNames.of(value) !== value;
}

export function isCidrOrAddress(value: string): boolean {
  try {
    if (value.includes("/")) {
      ipaddr.parseCIDR(value);
      return true;
    }
    return ipaddr.isValid(value);
  } catch {
    return false;
  }
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

export const ajv = new Ajv({ allErrors: false, coerceTypes: false, useDefaults: true, removeAdditional: false });
ajv.addFormat("domain", { type: "string", validate: (v: string) => normalizeDomain(v) !== null });
ajv.addFormat("cidr", { type: "string", validate: isCidrOrAddress });
ajv.addFormat("country", { type: "string", validate: isCountryCode });
ajv.addFormat("date-time", {
  type: "string",
  validate: (v: string) => /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?$/.test(v) && !Number.isNaN(Date.parse(v)),
});
ajv.addFormat("date", { type: "string", validate: (v: string) => /^\d{4}-\d{2}-\d{2}$/.test(v) && !Number.isNaN(Date.parse(v)) });
ajv.addFormat("email", { type: "string", validate: (v: string) => /^[^\s@]{1,64}@[^\s@]{1,253}\.[^\s@]{1,63}$/.test(v) });
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
    if (FORMAT_REASONS[format]) return FORMAT_REASONS[format];
  }
  return overrides[field] ?? `bad_${field}`;
}

export type Validated<T> = { ok: true; value: T } | { ok: false; reason: string; detail: string };

export function validator<T>(schema: object, overrides: Record<string, string> = {}): (data: unknown) => Validated<T> {
  const validate: ValidateFunction = ajv.compile(schema);
  return (data) => {
    if (validate(data)) return { ok: true, value: data as T };
    const error = validate.errors?.[0];
    if (!error) return { ok: false, reason: "bad_request", detail: "invalid" };
    return { ok: false, reason: reasonOf(error, overrides), detail: `${error.instancePath || "/"} ${error.message ?? ""}`.trim() };
  };
}
