import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { BOTCHECK_REASONS } from "../../../shared/botcheck/reasons.js";
import { RULES } from "../../../shared/botcheck/rules.js";
import { interactionSchema, signalsSchema } from "../../../shared/botcheck/signals.js";

const readme = readFileSync(new URL("../../../shared/botcheck/README.md", import.meta.url), "utf8");

/** Rows of a markdown table whose first cell is a `code` name: name → the other cells. */
function tableRows(markdown: string): Map<string, string[]> {
  const rows = new Map<string, string[]>();
  for (const line of markdown.split("\n")) {
    const match = /^\| `([^`]+)` \|(.*)\|$/.exec(line);
    if (match?.[1] && match[2] !== undefined)
      rows.set(
        match[1],
        match[2].split("|").map((cell) => cell.trim()),
      );
  }
  return rows;
}

/** The text of the `## heading` section, up to the next `## `. */
function section(heading: string): string {
  const start = readme.indexOf(`\n## ${heading}\n`);
  if (start < 0) throw new Error(`README has no section ${heading}`);
  const end = readme.indexOf("\n## ", start + 1);
  return readme.slice(start, end < 0 ? undefined : end);
}

describe("shared/botcheck/README.md", () => {
  it("lists every rule with its reason and weight", () => {
    const rows = tableRows(section("Rules and verdict"));
    for (const rule of RULES) {
      expect(rows.get(rule.id), rule.id).toEqual([rule.reason, String(rule.weight), expect.any(String)]);
    }
  });

  it("lists every reason", () => {
    const rows = tableRows(section("Reasons"));
    for (const [reason, { stage }] of Object.entries(BOTCHECK_REASONS)) {
      expect(rows.get(reason)?.[0], reason).toBe(stage);
    }
  });

  it("documents every signals field", () => {
    const rows = tableRows(section("The `signals` object"));
    const properties = Object.keys((signalsSchema.properties ?? {}) as Record<string, unknown>);
    expect(properties.length).toBeGreaterThan(10);
    for (const field of properties) expect(rows.has(field), field).toBe(true);
  });

  it("documents every interaction field", () => {
    const rows = tableRows(section("Interaction evidence"));
    const properties = Object.keys((interactionSchema.properties ?? {}) as Record<string, unknown>);
    expect(properties).toHaveLength(10);
    for (const field of properties) expect(rows.has(field), field).toBe(true);
  });
});
