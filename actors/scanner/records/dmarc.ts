/**
 * DMARC records (RFC 7489 6.3, 6.4). A record is a TXT at `_dmarc.<domain>` whose first
 * tag is `v=DMARC1`; anything else there is ignored, as receivers ignore it.
 */
import { joinTxt, parseTags } from "./tags.js";
import type { DnsAnswer } from "../../../shared/platform/net/outbound/evidence.js";

export type DmarcPolicy = "none" | "quarantine" | "reject";

export interface ParsedDmarc {
  readonly policy: DmarcPolicy | null;
  readonly subdomainPolicy: DmarcPolicy | null;
  readonly pct: number;
  readonly rua: readonly string[];
  readonly ruf: readonly string[];
  readonly errors: readonly string[];
}

const POLICIES: readonly DmarcPolicy[] = ["none", "quarantine", "reject"];

export function isDmarcRecord(text: string): boolean {
  return /^v\s*=\s*DMARC1\s*(;|$)/i.test(text);
}

export function dmarcRecords(answer: DnsAnswer): string[] {
  return answer.records.flatMap((r) => (r.type === "TXT" ? [joinTxt(r.strings)] : [])).filter(isDmarcRecord);
}

function policyOf(value: string | undefined, tag: string, errors: string[]): DmarcPolicy | null {
  if (value === undefined) return null;
  const policy = POLICIES.find((p) => p === value.toLowerCase());
  if (!policy) errors.push(`${tag}=${value} is not none, quarantine or reject`);
  return policy ?? null;
}

/** A DMARC URI list: comma separated, each `mailto:` or `https:` with an optional `!size`. */
function uris(value: string | undefined, tag: string, errors: string[]): string[] {
  if (value === undefined) return [];
  const list = value
    .split(",")
    .map((u) => u.trim())
    .filter((u) => u !== "");
  for (const uri of list) {
    const bare = uri.replace(/![0-9]+[kmgt]?$/i, "");
    if (!/^mailto:[^@\s]+@[^@\s]+$/i.test(bare) && !/^https:\/\/\S+$/i.test(bare))
      errors.push(`${tag} entry "${uri}" is not a mailto: or https: URI`);
  }
  return list;
}

export function parseDmarc(record: string): ParsedDmarc {
  const { tags, order, errors: tagErrors } = parseTags(record);
  const errors = [...tagErrors];
  if (order[0] !== "v" || tags.get("v") !== "DMARC1") errors.push("v=DMARC1 must be the first tag");
  const rawPolicy = tags.get("p");
  if (rawPolicy === undefined) errors.push("the required p= tag is missing");
  const policy = policyOf(rawPolicy, "p", errors);
  const subdomainPolicy = policyOf(tags.get("sp"), "sp", errors);
  let pct = 100;
  const rawPct = tags.get("pct");
  if (rawPct !== undefined) {
    if (/^\d{1,3}$/.test(rawPct) && Number(rawPct) <= 100) pct = Number(rawPct);
    else errors.push(`pct=${rawPct} is not an integer 0-100`);
  }
  for (const tag of ["adkim", "aspf"]) {
    const value = tags.get(tag);
    if (value !== undefined && !/^[rs]$/i.test(value)) errors.push(`${tag}=${value} is not r or s`);
  }
  const ri = tags.get("ri");
  if (ri !== undefined && !/^\d+$/.test(ri)) errors.push(`ri=${ri} is not a number of seconds`);
  const fo = tags.get("fo");
  if (fo !== undefined && !/^[01ds](:[01ds])*$/i.test(fo)) errors.push(`fo=${fo} is not a colon list of 0, 1, d, s`);
  return { policy, subdomainPolicy, pct, rua: uris(tags.get("rua"), "rua", errors), ruf: uris(tags.get("ruf"), "ruf", errors), errors };
}
