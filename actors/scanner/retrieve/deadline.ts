/**
 * The overall deadline of one scan's retrieval. Every DNS query and HTTP request has its own
 * time-out, but a scan is many of them and some run in sequence (the zone walk, the SPF
 * rounds, a redirect chain): a zone that answers each query slowly would hold a scan slot for
 * minutes. Past the deadline no DNS query is sent and each one in flight answers `timeout` at
 * once (its socket ends at its own time-out), so every step still waiting records a time-out
 * and the scan completes with what it has. HTTP requests need an address first, so they stop
 * with DNS; one already connected ends at its own time-out.
 */
import { type DnsQuery, normalizeName } from "../../../shared/platform/net/outbound/dns-client.js";
import { type DnsAnswer, noData, type RecordType } from "../../../shared/platform/net/outbound/evidence.js";

/** How long a scan (or a re-check) may retrieve. scan.php's caller waits 25 s; a monitor scan has nobody waiting. */
export const SCAN_DEADLINE_MS = 60_000;

/** The deadline passed before any DNS server answered: there is nothing to grade (the scan answers `scan_failed`). */
export class ScanDeadlineExceeded extends Error {
  override readonly name = "ScanDeadlineExceeded";
  constructor(readonly deadlineMs: number) {
    super(`nothing was retrieved within the scan deadline of ${deadlineMs} ms`);
  }
}

export interface RetrievalDeadline {
  /** `query` behind the deadline. */
  guard(query: DnsQuery): DnsQuery;
  passed(): boolean;
  /** Whether a DNS server answered anything (any status but `timeout` and `error`) before the deadline. */
  answeredAny(): boolean;
  /** Stops the timer once retrieval is over. */
  clear(): void;
}

export function retrievalDeadline(deadlineMs: number): RetrievalDeadline {
  let passed = false;
  let answered = false;
  // One callback per query in flight, called when the deadline passes: no listener on a shared signal per query.
  const waiting = new Set<() => void>();
  const timer = setTimeout(() => {
    passed = true;
    for (const cut of waiting) cut();
    waiting.clear();
  }, deadlineMs);
  timer.unref();
  const cutAnswer = (name: string, type: RecordType): DnsAnswer => ({
    ...noData(normalizeName(name), type),
    status: "timeout",
    rcode: null,
    error: `the scan's deadline of ${deadlineMs} ms passed`,
  });
  return {
    guard: (query) => (name, type, flags) => {
      if (passed) return Promise.resolve(cutAnswer(name, type));
      return new Promise<DnsAnswer>((resolve, reject) => {
        const cut = () => resolve(cutAnswer(name, type));
        waiting.add(cut);
        query(name, type, flags).then(
          (answer) => {
            waiting.delete(cut);
            if (passed) return;
            if (answer.status !== "timeout" && answer.status !== "error") answered = true;
            resolve(answer);
          },
          (error: unknown) => {
            waiting.delete(cut);
            reject(error);
          },
        );
      });
    },
    passed: () => passed,
    answeredAny: () => answered,
    clear: () => clearTimeout(timer),
  };
}
