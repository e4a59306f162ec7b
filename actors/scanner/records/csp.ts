/**
 * Content-Security-Policy parsing (CSP Level 3, 2.2). A header may carry several
 * policies separated by commas and several headers may be sent; each is enforced, so
 * the checks judge them one by one and keep the strictest.
 */
export type CspPolicy = ReadonlyMap<string, readonly string[]>;

export function parseCspPolicies(headerValues: readonly string[]): CspPolicy[] {
  return headerValues
    .flatMap((value) => value.split(","))
    .map(parseCspPolicy)
    .filter((p) => p.size > 0);
}

export function parseCspPolicy(text: string): CspPolicy {
  const directives = new Map<string, readonly string[]>();
  for (const raw of text.split(";")) {
    const [name, ...sources] = raw.trim().split(/\s+/);
    if (!name) continue;
    const key = name.toLowerCase();
    // CSP 3 2.2.1: a repeated directive is ignored, the first one wins.
    if (!directives.has(key))
      directives.set(
        key,
        sources.map((s) => (s.startsWith("'") ? s.toLowerCase() : s)),
      );
  }
  return directives;
}

/** The sources that govern a fetch directive, falling back as CSP 3 6.8 describes. */
export function effectiveSources(policy: CspPolicy, directive: string, fallbacks: readonly string[]): readonly string[] | null {
  for (const name of [directive, ...fallbacks]) {
    const sources = policy.get(name);
    if (sources) return sources;
  }
  return null;
}

export function scriptSources(policy: CspPolicy): readonly string[] | null {
  return effectiveSources(policy, "script-src", ["default-src"]);
}

export function hasNonceOrHash(sources: readonly string[]): boolean {
  return sources.some((s) => /^'(nonce-|sha256-|sha384-|sha512-)/.test(s));
}

/** Sources that let any host (or any host over a scheme) supply scripts. */
export function broadSources(sources: readonly string[]): string[] {
  return sources.filter((s) => s === "*" || /^(https?|data|blob|ftp|wss?):$/i.test(s) || /^(https?:\/\/)?\*$/i.test(s));
}
