import { dropStaleTemplates, ensureTemplate } from "./database.js";
import { ensureTestTools, MissingTools, systemHost } from "./test-tools.js";

/**
 * vitest's global setup (vitest.config.ts): builds the migrated template every test database
 * is cloned from, once per run, before any worker starts, and drops the templates of older
 * migrations. First it checks the real tools the tests drive (test-tools.ts): installed
 * when running as root with apt, else the run stops with one line naming the packages.
 */
export default async function setup(): Promise<void> {
  try {
    ensureTestTools(systemHost());
  } catch (error) {
    if (!(error instanceof MissingTools)) throw error;
    process.stderr.write(`${error.message}\n`);
    process.exit(1);
  }
  await ensureTemplate();
  await dropStaleTemplates();
}
