import { readFileSync } from "node:fs";
import type { Context } from "../../context.js";
import { outboundPolicy, outboundPolicyOf, type OutboundPolicy } from "../address-policy.js";

/**
 * What a scan may reach and how long it may wait. Built once from the configuration
 * (`DNS_RESOLVER`, `SCAN_ALLOW_PRIVATE`, `SCAN_HTTP_PORT`, `SCAN_HTTPS_PORT`,
 * `SCAN_CA_FILE` read by the caller) and passed down; the scanner reads no environment.
 * The status prober retrieves with the same options under its own address policy.
 */
export interface ScanOptions {
  /** DNS server to ask; null means the system resolvers of `node:dns` `getServers()`. */
  readonly resolver: { readonly host: string; readonly port: number } | null;
  /** Which addresses the requests may reach: the `scan` policy (no private space outside tests), or the prober's. */
  readonly outbound: OutboundPolicy;
  /** Port used for `http:` URLs without an explicit port (80 in production). */
  readonly httpPort: number;
  /** Port used for `https:` URLs without an explicit port (443 in production). */
  readonly httpsPort: number;
  /** Extra PEM CA bundle trusted next to the system store (contents, not a path). */
  readonly caPem: string | null;
  /** Time-out of each DNS query and each HTTP request. */
  readonly timeoutMs: number;
}

export const DEFAULT_TIMEOUT_MS = 5_000;

export function defaultScanOptions(overrides: Partial<ScanOptions> = {}): ScanOptions {
  return {
    resolver: null,
    outbound: outboundPolicy("scan", "none"),
    httpPort: 80,
    httpsPort: 443,
    caPem: null,
    timeoutMs: DEFAULT_TIMEOUT_MS,
    ...overrides,
  };
}

/** Scan options from the configuration, read once at start (the scanner's, and the prober's base). */
export function scanOptionsOf(config: Context["config"]): ScanOptions {
  return defaultScanOptions({
    resolver: config.dnsResolver,
    outbound: outboundPolicyOf("scan", config),
    httpPort: config.scanHttpPort,
    httpsPort: config.scanHttpsPort,
    caPem: config.scanCaFile ? readFileSync(config.scanCaFile, "utf8") : null,
  });
}
