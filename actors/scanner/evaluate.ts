/**
 * The checks over retrieved evidence, graded. Pure and synchronous: the scan runs them
 * in this thread (tests, the CLI) or, in the scanner actor, in its worker threads
 * (offload/), so that a page that makes a check slow costs a worker its time budget
 * instead of stalling the actor's event loop.
 */
import { DNS_CHECKS, findCheck, WEB_CHECKS, type DnsCheck, type WebCheck } from "./checks/index.js";
import { evaluate, type Finding, type Section } from "./finding.js";
import { gradeSection } from "./grading.js";
import type { DnsEvidence, WebEvidence } from "../../shared/platform/net/outbound/evidence.js";

export function evaluateDns(evidence: DnsEvidence): Section {
  const checks: readonly DnsCheck[] = DNS_CHECKS;
  return gradeSection(checks.map((check) => evaluate(check, evidence)));
}

export function evaluateWeb(evidence: WebEvidence): Section {
  const checks: readonly WebCheck[] = WEB_CHECKS;
  return gradeSection(checks.map((check) => evaluate(check, evidence)));
}

export interface Sections {
  readonly dns: Section;
  readonly web: Section;
}

/** Evidence of one section, named, so a single check is run on the evidence of its own section. */
export type SectionEvidence =
  | { readonly section: "dns"; readonly evidence: DnsEvidence }
  | { readonly section: "web"; readonly evidence: WebEvidence };

/** What a worker is asked: both sections of a scan, or one check (a re-check). */
export type EvaluationTask =
  | { readonly kind: "sections"; readonly dns: DnsEvidence; readonly web: WebEvidence }
  | { readonly kind: "check"; readonly findingId: string; readonly target: SectionEvidence };

/** One check by finding id; the caller looked the id up already, so an unknown id or a section mismatch is a bug. */
export function evaluateCheck(findingId: string, target: SectionEvidence): Finding {
  const found = findCheck(findingId);
  if (found?.section === "dns" && target.section === "dns") return evaluate(found.check, target.evidence);
  if (found?.section === "web" && target.section === "web") return evaluate(found.check, target.evidence);
  throw new Error(`no ${target.section} check ${JSON.stringify(findingId)}`);
}

export function evaluateTask(task: EvaluationTask): Sections | Finding {
  if (task.kind === "sections") return { dns: evaluateDns(task.dns), web: evaluateWeb(task.web) };
  return evaluateCheck(task.findingId, task.target);
}

/** Where a scan's checks run. */
export interface Evaluator {
  sections(dns: DnsEvidence, web: WebEvidence): Promise<Sections>;
  check(findingId: string, target: SectionEvidence): Promise<Finding>;
}

/** In the caller's thread: for tests and one-off scans, where nothing else shares the event loop. */
export const IN_THREAD: Evaluator = {
  sections: async (dns, web) => ({ dns: evaluateDns(dns), web: evaluateWeb(web) }),
  check: async (findingId, target) => evaluateCheck(findingId, target),
};
