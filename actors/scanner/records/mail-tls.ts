/**
 * MTA-STS (RFC 8461) and SMTP TLS Reporting (RFC 8460) record formats, and DKIM key
 * records (RFC 6376 3.6.1). All are tag lists in TXT; the MTA-STS policy is a small
 * `key: value` file served over HTTPS.
 */
import { parseTags } from "./tags.js";

export interface ParsedMtaStsTxt {
  readonly id: string | null;
  readonly errors: readonly string[];
}

export function isMtaStsTxt(text: string): boolean {
  return /^v\s*=\s*STSv1\s*(;|$)/.test(text);
}

export function parseMtaStsTxt(text: string): ParsedMtaStsTxt {
  const { tags, order, errors: tagErrors } = parseTags(text, { lowerCaseNames: false });
  const errors = [...tagErrors];
  if (order[0] !== "v" || tags.get("v") !== "STSv1") errors.push("v=STSv1 must be the first tag");
  const id = tags.get("id") ?? null;
  if (id === null) errors.push("the required id= tag is missing");
  else if (!/^[A-Za-z0-9]{1,32}$/.test(id)) errors.push(`id=${id} is not 1-32 letters and digits`);
  return { id, errors };
}

export type MtaStsMode = "enforce" | "testing" | "none";

export interface ParsedMtaStsPolicy {
  readonly mode: MtaStsMode | null;
  readonly mx: readonly string[];
  readonly maxAge: number | null;
  readonly errors: readonly string[];
}

export function parseMtaStsPolicy(body: string): ParsedMtaStsPolicy {
  const errors: string[] = [];
  const fields = new Map<string, string>();
  const mx: string[] = [];
  for (const line of body.split(/\r?\n/)) {
    if (line.trim() === "") continue;
    // Split at the colon and trim, not /^(\w+):\s*(.*?)\s*$/: that pattern backtracks over
    // a run of spaces inside the value, quadratic in a line the domain's owner writes.
    const colon = line.indexOf(":");
    const key = colon > 0 ? line.slice(0, colon) : "";
    if (!/^[A-Za-z0-9_]+$/.test(key)) {
      errors.push(`"${line}" is not key: value`);
      continue;
    }
    const value = line.slice(colon + 1).trim();
    if (key === "mx") mx.push(value.toLowerCase());
    else fields.set(key, value);
  }
  if (fields.get("version") !== "STSv1") errors.push("version: STSv1 is missing");
  const rawMode = fields.get("mode");
  const mode = rawMode === "enforce" || rawMode === "testing" || rawMode === "none" ? rawMode : null;
  if (mode === null) errors.push(rawMode === undefined ? "mode is missing" : `mode: ${rawMode} is not enforce, testing or none`);
  const rawAge = fields.get("max_age");
  // RFC 8461 3.2: max_age is at most 31557600 seconds (one year).
  const maxAge = rawAge !== undefined && /^\d{1,10}$/.test(rawAge) && Number(rawAge) <= 31_557_600 ? Number(rawAge) : null;
  if (maxAge === null) errors.push(rawAge === undefined ? "max_age is missing" : `max_age: ${rawAge} is not 0-31557600`);
  if (mode !== "none" && mx.length === 0) errors.push("no mx: line");
  return { mode, mx, maxAge, errors };
}

/** RFC 8461 4.1: an exact host name, or `*.` matching exactly one leftmost label. */
export function mxMatchesPattern(host: string, pattern: string): boolean {
  const h = host.toLowerCase().replace(/\.$/, "");
  const p = pattern.toLowerCase().replace(/\.$/, "");
  if (p.startsWith("*.")) {
    const suffix = p.slice(1);
    return h.endsWith(suffix) && !h.slice(0, -suffix.length).includes(".") && h.length > suffix.length;
  }
  return h === p;
}

export interface ParsedTlsRpt {
  readonly rua: readonly string[];
  readonly errors: readonly string[];
}

export function isTlsRptRecord(text: string): boolean {
  return /^v\s*=\s*TLSRPTv1\s*(;|$)/.test(text);
}

export function parseTlsRpt(text: string): ParsedTlsRpt {
  const { tags, order, errors: tagErrors } = parseTags(text, { lowerCaseNames: false });
  const errors = [...tagErrors];
  if (order[0] !== "v" || tags.get("v") !== "TLSRPTv1") errors.push("v=TLSRPTv1 must be the first tag");
  const raw = tags.get("rua");
  const rua =
    raw === undefined
      ? []
      : raw
          .split(",")
          .map((u) => u.trim())
          .filter((u) => u !== "");
  if (rua.length === 0) errors.push("the required rua= tag is missing");
  for (const uri of rua) {
    if (!/^mailto:[^@\s]+@[^@\s]+$/i.test(uri) && !/^https:\/\/\S+$/i.test(uri)) errors.push(`rua entry "${uri}" is not mailto: or https:`);
  }
  return { rua, errors };
}

export interface ParsedDkim {
  /** Empty string: the key was revoked (RFC 6376 3.6.1). */
  readonly publicKey: string | null;
  readonly keyType: string;
  readonly errors: readonly string[];
}

/** A TXT at a selector looks like a DKIM key when it has a v=DKIM1 or a p= tag. */
export function isDkimRecord(text: string): boolean {
  return /^\s*v\s*=\s*DKIM1\s*(;|$)/i.test(text) || /(^|;)\s*p\s*=/i.test(text);
}

export function parseDkim(text: string): ParsedDkim {
  const { tags, order, errors: tagErrors } = parseTags(text);
  const errors = [...tagErrors];
  if (tags.has("v") && (order[0] !== "v" || tags.get("v") !== "DKIM1")) errors.push("v= must be first and DKIM1");
  const publicKey = tags.has("p") ? (tags.get("p") ?? "").replace(/\s+/g, "") : null;
  if (publicKey === null) errors.push("the required p= tag is missing");
  else if (publicKey !== "" && !/^[A-Za-z0-9+/]+={0,2}$/.test(publicKey)) errors.push("p= is not base64");
  const keyType = (tags.get("k") ?? "rsa").toLowerCase();
  if (keyType !== "rsa" && keyType !== "ed25519") errors.push(`k=${keyType} is not rsa or ed25519`);
  return { publicKey, keyType, errors };
}
