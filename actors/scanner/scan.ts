/**
 * The scan: retrieve the evidence of both sections once (in parallel), run every check
 * of the section over it, grade. Retrieval records failures as evidence, so a scan of
 * an unreachable domain completes with findings that say so; only a bug throws (and,
 * with the scanner's worker pool, checks that exceed their time budget). Retrieval has one
 * deadline (retrieve/deadline.ts): what is still outstanding then is recorded as timed out,
 * and only a scan that got no DNS answer at all by then throws ScanDeadlineExceeded.
 */
import { domainToASCII } from "node:url";
import { normalizeDomain } from "../../shared/platform/validation.js";
import { findCheck } from "./checks/index.js";
import { type Evaluator, IN_THREAD } from "./evaluate.js";
import type { Finding, Section } from "./finding.js";
import { ALGORITHM_VERSION } from "./grading.js";
import type { ScanOptions } from "../../shared/platform/net/outbound/options.js";
import { createDnsClient, type DnsQuery } from "../../shared/platform/net/outbound/dns-client.js";
import { retrievalDeadline, SCAN_DEADLINE_MS, ScanDeadlineExceeded } from "./retrieve/deadline.js";
import { retrieveDns } from "./retrieve/dns-evidence.js";
import { retrieveWeb } from "./retrieve/web-evidence.js";

export { evaluateDns, evaluateWeb } from "./evaluate.js";

export interface ScanResult {
  readonly algorithm: string;
  readonly dns: Section;
  readonly web: Section;
  readonly durationMs: number;
}

export type DomainParse = { readonly ok: true; readonly domain: string } | { readonly ok: false; readonly reason: "invalid_domain" };

/**
 * A host name as the admin API accepts it (`normalizeDomain`, one rule for both: a
 * verified domain must be scannable, `_x.example.com` included), IDN converted to its
 * A-label form first; no IP literals, no all-numeric top label.
 */
export function parseDomain(input: string): DomainParse {
  const ascii = domainToASCII(input.trim().replace(/\.$/, "")).toLowerCase();
  const domain = ascii === "" ? null : normalizeDomain(ascii);
  const valid = domain !== null && !/^\d+$/.test(domain.slice(domain.lastIndexOf(".") + 1));
  return valid ? { ok: true, domain } : { ok: false, reason: "invalid_domain" };
}

function requireDomain(input: string): string {
  const parsed = parseDomain(input);
  // Callers validate with parseDomain first (the domain is a verified one); reaching this is a bug.
  if (!parsed.ok) throw new Error(`runScan called with an invalid domain ${JSON.stringify(input)}`);
  return parsed.domain;
}

export interface ScanDependencies {
  /** Replaces the DNS client (tests, or a caller sharing one client). */
  readonly query?: DnsQuery;
  /** Where the checks run: this thread unless given (the scanner actor gives its worker pool, offload/pool.ts). */
  readonly evaluator?: Evaluator;
  /** How long retrieval may take in all: SCAN_DEADLINE_MS unless given (tests shorten it). */
  readonly deadlineMs?: number;
}

/**
 * Runs `retrieve` with a DNS client behind the scan's deadline. Throws ScanDeadlineExceeded
 * when the deadline passed before any server answered: a grade of nothing but time-outs
 * would read as the site's.
 */
async function withinDeadline<T>(options: ScanOptions, deps: ScanDependencies, retrieve: (query: DnsQuery) => Promise<T>): Promise<T> {
  const deadlineMs = deps.deadlineMs ?? SCAN_DEADLINE_MS;
  const deadline = retrievalDeadline(deadlineMs);
  try {
    const evidence = await retrieve(deadline.guard(deps.query ?? createDnsClient(options.resolver, options.timeoutMs)));
    if (deadline.passed() && !deadline.answeredAny()) throw new ScanDeadlineExceeded(deadlineMs);
    return evidence;
  } finally {
    deadline.clear();
  }
}

/** `now` (ms since the epoch) is the instant certificate validity is judged at. */
export async function runScan(domainInput: string, options: ScanOptions, now: number, deps: ScanDependencies = {}): Promise<ScanResult> {
  const domain = requireDomain(domainInput);
  const started = performance.now();
  const [dnsEvidence, webEvidence] = await withinDeadline(options, deps, (query) =>
    Promise.all([retrieveDns(domain, options, now, query), retrieveWeb(domain, options, now, query)]),
  );
  const { dns, web } = await (deps.evaluator ?? IN_THREAD).sections(dnsEvidence, webEvidence);
  return { algorithm: ALGORITHM_VERSION, dns, web, durationMs: Math.round(performance.now() - started) };
}

export type RecheckResult = { readonly ok: true; readonly finding: Finding } | { readonly ok: false; readonly reason: "unknown_finding" };

/** Re-runs one finding: retrieves the evidence of its section only, then runs its check. */
export async function recheck(
  domainInput: string,
  findingId: string,
  options: ScanOptions,
  now: number,
  deps: ScanDependencies = {},
): Promise<RecheckResult> {
  const found = findCheck(findingId);
  if (!found) return { ok: false, reason: "unknown_finding" };
  const domain = requireDomain(domainInput);
  const evaluator = deps.evaluator ?? IN_THREAD;
  const target = await withinDeadline(options, deps, async (query) =>
    found.section === "dns"
      ? { section: "dns" as const, evidence: await retrieveDns(domain, options, now, query) }
      : { section: "web" as const, evidence: await retrieveWeb(domain, options, now, query) },
  );
  return { ok: true, finding: await evaluator.check(found.check.id, target) };
}
