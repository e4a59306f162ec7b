import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * The project root, found by walking up from this file to package.json. The same code
 * runs from source (vitest) and from dist/ (npm start), and data files (SQL migrations,
 * Lua scripts) stay in the source tree, so both read them from here.
 */
function findRoot(start: string): string {
  let dir = start;
  for (;;) {
    if (existsSync(join(dir, "package.json")) && existsSync(join(dir, "shared"))) return dir;
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`package.json not found above ${start}`);
    dir = parent;
  }
}

export const projectRoot = findRoot(dirname(fileURLToPath(import.meta.url)));

export const sourcePath = (...parts: string[]) => join(projectRoot, ...parts);
