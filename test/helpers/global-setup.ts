import { dropStaleTemplates, ensureTemplate } from "./database.js";

/**
 * vitest's global setup (vitest.config.ts): builds the migrated template every test database
 * is cloned from, once per run, before any worker starts, and drops the templates of older
 * migrations.
 */
export default async function setup(): Promise<void> {
  await ensureTemplate();
  await dropStaleTemplates();
}
