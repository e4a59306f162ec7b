/**
 * What a finding stores is bounded whatever the scanned site sends (bounds.ts): lists
 * name their first items and how many more, text is cut with a marker.
 */
import { describe, expect, test } from "vitest";
import {
  boundEvidence,
  boundDetail,
  clip,
  DETAIL_MAX_CHARS,
  EVIDENCE_LINE_MAX_CHARS,
  EVIDENCE_MAX_CHARS,
  EVIDENCE_MAX_LINES,
  LIST_MAX_ITEMS,
} from "../../../actors/scanner/bounds.js";
import { evaluate } from "../../../actors/scanner/finding.js";
import { csp } from "../../../actors/scanner/checks/csp.js";
import { referrerPolicy } from "../../../actors/scanner/checks/referrer-policy.js";
import { sri } from "../../../actors/scanner/checks/sri.js";
import { webWithPage } from "./builders.js";

const HTML = [["content-type", "text/html"]] as const;

describe("findings of a page built to be large", () => {
  test("SRI names the first scripts and how many more, in detail and evidence", () => {
    const body = Array.from({ length: 5_000 }, (_, i) => `<script src="https://cdn${i}.example.net/lib.js"></script>`).join("");
    const f = evaluate(sri, webWithPage(HTML, { body }));
    expect(f.result).toBe("sri-missing");
    expect(f.detail).toContain("https://cdn9.example.net/lib.js … and 4990 more.");
    expect(f.detail).not.toContain("cdn10.");
    const lines = f.evidence.split("\n");
    expect(lines).toHaveLength(LIST_MAX_ITEMS + 1);
    expect(lines.at(-1)).toBe("… and 4990 more");
  });

  test("10,000 <meta> policies: evidence keeps whole lines up to its bounds", () => {
    const body = `<html>${`<meta http-equiv="Content-Security-Policy" content="default-src 'self'">`.repeat(10_000)}`;
    const f = evaluate(csp, webWithPage(HTML, { body }));
    expect(f.result).toBe("csp-ok");
    const lines = f.evidence.split("\n");
    expect(lines.length).toBeLessThanOrEqual(EVIDENCE_MAX_LINES + 1);
    expect(lines.at(-1)).toMatch(/^… and \d+ more lines$/);
    expect(f.evidence.length).toBeLessThanOrEqual(EVIDENCE_MAX_CHARS);
  });

  test("one enormous referrer value: detail and evidence are clipped with a marker", () => {
    const huge = "x".repeat(300_000);
    const f = evaluate(referrerPolicy, webWithPage([...HTML, ["referrer-policy", huge]]));
    expect(f.result).toBe("referrer-invalid");
    expect(f.detail.length).toBeLessThanOrEqual(DETAIL_MAX_CHARS);
    expect(f.detail).toMatch(/… \(\d+ more characters\)$/);
    expect(f.evidence.length).toBeLessThanOrEqual(EVIDENCE_LINE_MAX_CHARS);
  });
});

describe("the bounds", () => {
  test("short text passes unchanged", () => {
    expect(boundDetail("Effective policy: no-referrer.")).toBe("Effective policy: no-referrer.");
    expect(boundEvidence("a: 1\nb: 2")).toBe("a: 1\nb: 2");
  });

  test("NUL, which PostgreSQL refuses in text, is shown as U+FFFD", () => {
    expect(boundDetail("a\u0000b")).toBe("a\uFFFDb");
    expect(boundEvidence("<script src=\u0000>")).toBe("<script src=\uFFFD>");
  });

  test("a cut never splits a surrogate pair", () => {
    const text = "😀".repeat(100);
    const cut = clip(text, 61);
    expect(cut.length).toBeLessThanOrEqual(61);
    expect(cut.startsWith("😀".repeat(10))).toBe(true);
    expect(cut).toMatch(/^(😀)+… \(\d+ more characters\)$/);
  });

  test("evidence of many lines keeps the first and counts the rest", () => {
    const bounded = boundEvidence(Array.from({ length: 1_000 }, (_, i) => `line ${i}`).join("\n"));
    expect(bounded.split("\n")).toHaveLength(EVIDENCE_MAX_LINES + 1);
    expect(bounded.endsWith(`… and ${1_000 - EVIDENCE_MAX_LINES} more lines`)).toBe(true);
  });
});
