/**
 * The vocabulary shared by checks, grading and the scan: a check is a pure function of
 * the evidence of its section that names one of its declared results; the result
 * decides the status and summary, and the grading table decides the score modifier.
 */
import { boundDetail, boundEvidence } from "./bounds.js";

/**
 * Finding status: `pass` the control is in place; `warn` weaker than recommended;
 * `fail` missing or broken; `info` not applicable or nothing to judge.
 */
export type Status = "pass" | "warn" | "fail" | "info";
export const STATUSES: readonly Status[] = ["pass", "warn", "fail", "info"];

export type SectionName = "dns" | "web";

/** Interface section 2.6, plus `result`: the key of the check's result table that produced it. */
export interface Finding {
  readonly id: string;
  readonly group: string;
  readonly label: string;
  readonly status: Status;
  readonly summary: string;
  readonly detail: string;
  readonly evidence: string;
  readonly result: string;
}

export interface Section {
  readonly grade: string;
  readonly score: number;
  readonly fail_count: number;
  readonly warn_count: number;
  readonly findings: readonly Finding[];
}

export interface ResultSpec {
  readonly status: Status;
  readonly summary: string;
}

export interface Outcome<R extends string> {
  readonly result: R;
  /** Why, in the terms of this domain (names, values, counts). */
  readonly detail: string;
  /** The record text or header line that shows it; empty when there is nothing to show. */
  readonly evidence: string;
}

export interface Check<R extends string, E> {
  /** `<group>:<name>`, stable: stored findings and assignments refer to it. */
  readonly id: string;
  readonly group: string;
  readonly label: string;
  readonly section: SectionName;
  readonly results: Readonly<Record<R, ResultSpec>>;
  readonly run: (evidence: E) => Outcome<R>;
}

/**
 * Declares a check. `NoInfer` makes the result table the only source of the result
 * names, so a typo in `run` is a compile error rather than a new, unscored result.
 */
export function defineCheck<const R extends string, E>(check: {
  readonly id: string;
  readonly group: string;
  readonly label: string;
  readonly section: SectionName;
  readonly results: Readonly<Record<R, ResultSpec>>;
  readonly run: (evidence: E) => Outcome<NoInfer<R>>;
}): Check<R, E> {
  return check;
}

export function outcome<R extends string>(result: R, detail: string, evidence = ""): Outcome<R> {
  return { result, detail, evidence };
}

/** Runs a check; its detail and evidence are bounded (bounds.ts) whatever the site sent. */
export function evaluate<R extends string, E>(check: Check<R, E>, evidence: E): Finding {
  const out = check.run(evidence);
  const spec = check.results[out.result];
  return {
    id: check.id,
    group: check.group,
    label: check.label,
    status: spec.status,
    summary: spec.summary,
    detail: boundDetail(out.detail),
    evidence: boundEvidence(out.evidence),
    result: out.result,
  };
}
