import { existsSync, readFileSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { projectRoot } from "../../shared/platform/paths.js";
import { readSpec, SPEC_NAMES } from "../helpers/spec.js";

/**
 * docs/spec holds copies of the contracts, whose originals are in `shared/spec` beside the
 * checkout (beside the main checkout, for a git worktree). Where the originals are present
 * (not in a clone elsewhere, e.g. CI) the copies must be the same text, so the tests that
 * read them never check against an old contract.
 */
function originals(): string | undefined {
  const checkouts = [projectRoot];
  const git = join(projectRoot, ".git");
  if (existsSync(git) && statSync(git).isFile()) {
    // A worktree's .git file: `gitdir: <main>/.git/worktrees/<name>`.
    const gitdir = /^gitdir:\s*(.+)$/m.exec(readFileSync(git, "utf8"))?.[1]?.trim();
    if (gitdir) checkouts.push(dirname(dirname(dirname(gitdir))));
  }
  return checkouts.map((checkout) => join(checkout, "..", "shared", "spec")).find((dir) => existsSync(dir));
}

const dir = originals();

describe.each(SPEC_NAMES)("docs/spec/%s", (name) => {
  it.runIf(dir !== undefined)("is the same text as the shared original", () => {
    const original = join(dir ?? "", name);
    expect(readSpec(name) === readFileSync(original, "utf8"), `copy ${original} to docs/spec/${name}`).toBe(true);
  });
});
