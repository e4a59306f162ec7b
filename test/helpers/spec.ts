import { existsSync, readFileSync } from "node:fs";
import { sourcePath } from "../../shared/paths.js";

/**
 * The contracts: the shared spec beside the checkout when there is one (the source of
 * truth), else the copy kept in test/fixtures/spec (a fresh clone elsewhere, e.g. CI).
 */
export function readSpec(name: "interface.md" | "operator-api.md"): string {
  const shared = sourcePath("..", "shared", "spec", name);
  return readFileSync(existsSync(shared) ? shared : sourcePath("test", "fixtures", "spec", name), "utf8");
}
