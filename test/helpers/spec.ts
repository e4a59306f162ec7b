import { readFileSync } from "node:fs";
import { sourcePath } from "../../shared/platform/paths.js";

export const SPEC_NAMES = ["interface.md", "operator-api.md"] as const;
export type SpecName = (typeof SPEC_NAMES)[number];

/** The contracts, as the repository keeps them in docs/spec (held to the shared originals by test/docs/spec.test.ts). */
export function readSpec(name: SpecName): string {
  return readFileSync(sourcePath("docs", "spec", name), "utf8");
}
