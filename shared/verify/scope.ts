import type { KeySnapshot } from "./snapshots/types.js";
import { PASS, refuse, type Verdict } from "./types.js";

/**
 * The requested capability against the key's scopes. No `scope` parameter: no check.
 * A key with no scopes selected has full access. Several scopes may be asked at once,
 * separated by commas or spaces; the key must hold each of them. Scopes are compared
 * exactly (case-sensitive), as they were configured.
 */
export function checkScope(key: Pick<KeySnapshot, "scopes">, requested: string | undefined): Verdict {
  if (requested === undefined || key.scopes.length === 0) return PASS;
  const wanted = requested.split(/[\s,]+/).filter(Boolean);
  for (const scope of wanted) if (!key.scopes.includes(scope)) return refuse("insufficient_scope");
  return PASS;
}

/** The public form of the scopes (interface.md 2.1): a comma list or `full_access`. */
export function scopesText(scopes: readonly string[]): string {
  return scopes.length === 0 ? "full_access" : scopes.join(",");
}
