import { describe, expect, it } from "vitest";
import { REASONS, isReason } from "../../../shared/platform/reasons.js";
import { BOTCHECK_REASONS } from "../../../shared/botcheck/reasons.js";
import { readSpec } from "../../helpers/spec.js";

/** Rows `| status | reason(s) | condition |` of a markdown table, reasons in backticks or bare. */
function tableRows(section: string): { status: string; reasons: string[] }[] {
  const rows: { status: string; reasons: string[] }[] = [];
  for (const line of section.split("\n")) {
    const cells = line.split("|").map((c) => c.trim());
    if (cells.length < 4 || !/^(\d{3}|not shown)$/.test(cells[1])) continue;
    const reasons = cells[2]
      .split(",")
      .map((r) => r.replace(/`/g, "").trim())
      .filter((r) => /^[a-z_]+$/.test(r));
    rows.push({ status: cells[1], reasons });
  }
  return rows;
}

describe("the reasons table covers the contracts", () => {
  const spec = readSpec("interface.md");
  const section7 = spec.slice(spec.indexOf("## 7. Errors"), spec.indexOf("## 8. Limits"));
  const rows = tableRows(section7);

  it("reads the tables of interface.md section 7", () => {
    expect(rows.length).toBeGreaterThan(20);
  });

  it("has every reason of section 7 with the status the contract gives", () => {
    for (const row of rows) {
      for (const reason of row.reasons) {
        expect(isReason(reason), `${reason} is missing from shared/reasons.ts`).toBe(true);
        if (row.status !== "not shown" && isReason(reason)) expect(REASONS[reason].status, reason).toBe(Number(row.status));
      }
    }
  });

  it("counts refusals against the allowance except the six of section 8", () => {
    const section8 = spec.slice(spec.indexOf("## 8. Limits"), spec.indexOf("## 9. Versioning"));
    const sentence = /except refusals ([^.]+)\./.exec(section8)?.[1] ?? "";
    const excluded = [...sentence.matchAll(/`([a-z_]+)`/g)].map((m) => m[1]);
    expect(excluded).toHaveLength(6);
    const enforcement = rows.slice(0, rows.findIndex((r) => r.reasons.includes("origin_mismatch")) + 1).flatMap((r) => r.reasons);
    for (const reason of enforcement) {
      if (!isReason(reason)) continue;
      const expected = !excluded.includes(reason) && reason !== "missing_key" && reason !== "invalid_key";
      expect(REASONS[reason].counts, reason).toBe(expected);
    }
  });

  it("has the reasons operator-api.md names", () => {
    const operator = readSpec("operator-api.md");
    for (const reason of ["unauthorized", "admin_disabled", "not_found", "conflict", "key_limit_reached"]) {
      expect(operator).toContain(reason);
      expect(isReason(reason), reason).toBe(true);
    }
    expect(REASONS.unauthorized.status).toBe(401);
    expect(REASONS.admin_disabled.status).toBe(503);
    expect(REASONS.conflict.status).toBe(409);
    expect(REASONS.key_limit_reached.status).toBe(409);
  });

  it("has the reasons of operator-api.md section 5 (accounts) with their statuses", () => {
    const operator = readSpec("operator-api.md");
    const section5 = operator.slice(operator.indexOf("## 5. Accounts"));
    for (const [reason, status] of [
      ["forbidden", 403],
      ["insufficient_scope", 403],
      ["not_found", 404],
    ] as const) {
      expect(section5).toContain(`${status} \`${reason}\``);
      expect(isReason(reason), reason).toBe(true);
      if (isReason(reason)) expect(REASONS[reason].status, reason).toBe(status);
    }
  });

  it("holds every bot-check reason, so the status comes from one table", () => {
    for (const reason of Object.keys(BOTCHECK_REASONS)) expect(isReason(reason), reason).toBe(true);
  });
});
