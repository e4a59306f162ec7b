import tls from "node:tls";

/**
 * The certificate authorities an outbound TLS connection trusts: Node's bundled roots, plus
 * the operator's extra CA (SCAN_CA_FILE, e.g. a private test CA) when one is set. Passing
 * `ca` to Node replaces the roots rather than adding to them, so the extra CA alone would
 * refuse every public receiver (a webhook or SIEM collector with an ordinary certificate).
 * Undefined: Node's defaults.
 */
export function trustedCas(caPem: string | null | undefined): string[] | undefined {
  return caPem ? [...tls.rootCertificates, caPem] : undefined;
}
