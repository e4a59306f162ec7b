import { availableParallelism } from "node:os";
import { isIP } from "node:net";
import { CLUSTER_SCHEME, parseClusterUrl } from "./redis/client.js";

/**
 * Configuration is parsed once, at start, from the environment table of the
 * operator contract (operator-api.md section 1). `process.env` is read nowhere else.
 * A bad value throws a ConfigError naming the variable; the entry point prints it and exits.
 */

export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    message: string,
  ) {
    super(`${variable}: ${message}`);
    this.name = "ConfigError";
  }
}

export interface Config {
  readonly port: number;
  readonly host: string;
  /** One Redis server (`redis://`, `rediss://`), or a Redis Cluster's seed nodes (`redis+cluster://h:p,h:p`; REDIS_CLUSTER is folded in here). */
  readonly redisUrl: string;
  readonly redisPrefix: string;
  readonly databaseUrl: string;
  readonly adminToken: string | null;
  readonly siteUrl: string;
  /** Raw master secret bytes, or null when unset (a development secret is then stored in PostgreSQL). */
  readonly gatewaySecret: Buffer | null;
  readonly testClock: boolean;
  readonly dnsResolver: { host: string; port: number } | null;
  /** Scans may reach non-public addresses: tests only (refused in production without the test clock). */
  readonly scanAllowPrivate: boolean;
  /** The status prober may reach non-public addresses (the operator's own services). */
  readonly probeAllowPrivate: boolean;
  /** Non-public blocks SIEM collectors and webhooks may reach; empty: none (shared/platform/net/address-policy.ts). */
  readonly outboundAllowCidrs: readonly string[];
  readonly scanHttpPort: number;
  readonly scanHttpsPort: number;
  readonly scanCaFile: string | null;
  readonly smtpUrl: string | null;
  readonly geoipDb: string | null;
  /**
   * `production` issues `ak_live_`/`sk_live_` keys and needs GATEWAY_SECRET
   * (requireProductionSecret); `test` and `development` issue `ak_test_`/`sk_test_` and
   * may run on a development secret stored in PostgreSQL (`npm start`'s demo mode).
   */
  readonly environment: "production" | "test" | "development";
  readonly logLevel: string;
  /** Ingress processes the supervisor runs on the one port (uWS listens with SO_REUSEPORT). */
  readonly ingressProcesses: number;
  /** The status page (docs/status.md): probe interval and time-out, the slow threshold, the page's name. */
  readonly statusProbeIntervalS: number;
  readonly statusProbeTimeoutMs: number;
  readonly statusSlowMs: number;
  readonly statusPageName: string;
  /** Proxies whose forwarding header names the client (docs/security.md, item 7); empty: none. */
  readonly trustedProxies: readonly string[];
  /** Which header the trusted proxies write: `x-forwarded-for` or `forwarded`. */
  readonly trustedProxyHeader: "x-forwarded-for" | "forwarded";
  /** The IPv6 network one source of the per-source limit is (rate_per_source_per_minute): its prefix length, 32-128. */
  readonly rateSourceIpv6Prefix: number;
  /** The internal listener serving /metrics (docs/security.md, item 6); port 0 picks a free one. */
  readonly metricsHost: string;
  readonly metricsPort: number;
  /** Keys of the demo page (`{site_url}/demo`); set by `npm start` in demo mode, null otherwise. */
  readonly demoKeys: { client: string; server: string } | null;
  /** The monitor re-scans every verified domain once per this many hours. */
  readonly monitorIntervalHours: number;
  /** Overrides every actor's claim idle time (a dead consumer's entries are claimed after it); null keeps each actor's own. */
  readonly actorClaimIdleMs: number | null;
  /** The nice value (0-19) every actor but the prober lowers its CPU priority to: the ingress goes first on shared cores (ops/start.ts). */
  readonly actorNice: number;
  /** A PostgreSQL read replica for the read-only endpoints; null reads from DATABASE_URL. */
  readonly databaseReadUrl: string | null;
}

/** One row per variable: the README's configuration table mirrors this list. */
export const ENVIRONMENT = [
  { name: "PORT", default: "8080", secret: false, meaning: "Ingress port; 0 picks a free one." },
  { name: "HOST", default: "127.0.0.1", secret: false, meaning: "Ingress bind address." },
  {
    name: "REDIS_URL",
    default: "redis://127.0.0.1:6379",
    secret: true,
    meaning: "Redis 6.2+; redis+cluster://[user:password@]host:port,host:port for a Redis Cluster.",
  },
  {
    name: "REDIS_CLUSTER",
    default: "",
    secret: false,
    meaning: "host:port,host:port,...: seed nodes of a Redis Cluster (docs/operations.md); not together with REDIS_URL.",
  },
  { name: "REDIS_PREFIX", default: "gw:", secret: false, meaning: "Prefix of every Redis key and stream." },
  { name: "DATABASE_URL", default: "postgres://127.0.0.1:5432/gateway", secret: true, meaning: "PostgreSQL 14+." },
  { name: "ADMIN_TOKEN", default: "", secret: true, meaning: "Bearer token of the admin API." },
  { name: "SITE_URL", default: "http://HOST:PORT", secret: false, meaning: "Public site root." },
  {
    name: "GATEWAY_SECRET",
    default: "",
    secret: true,
    meaning: "Master secret, 32+ random bytes hex or base64 (low-entropy values refused).",
  },
  { name: "GATEWAY_TEST_CLOCK", default: "", secret: false, meaning: "1 enables the test clock." },
  { name: "DNS_RESOLVER", default: "", secret: false, meaning: "host:port of the DNS server to ask." },
  {
    name: "SCAN_ALLOW_PRIVATE",
    default: "",
    secret: false,
    meaning:
      "1 lets scans (and probes) reach private addresses: tests only, refused with GATEWAY_ENV=production unless GATEWAY_TEST_CLOCK=1.",
  },
  {
    name: "PROBE_ALLOW_PRIVATE",
    default: "",
    secret: false,
    meaning: "1 lets the status prober reach private addresses (the operator's own services).",
  },
  {
    name: "OUTBOUND_ALLOW_CIDRS",
    default: "",
    secret: false,
    meaning: "Private addresses or CIDR blocks SIEM collectors and webhooks may reach (none); metadata addresses never.",
  },
  { name: "SCAN_HTTP_PORT", default: "80", secret: false, meaning: "Port of the web scan over HTTP." },
  { name: "SCAN_HTTPS_PORT", default: "443", secret: false, meaning: "Port of the web scan over HTTPS." },
  { name: "SCAN_CA_FILE", default: "", secret: false, meaning: "Extra PEM CA bundle for scans and probes." },
  { name: "SMTP_URL", default: "", secret: true, meaning: "smtp://host:port for e-mail." },
  { name: "GEOIP_DB", default: "", secret: false, meaning: "Path of an MMDB country database." },
  {
    name: "GATEWAY_ENV",
    default: "production",
    secret: false,
    meaning: "production, test or development (key prefixes; production needs GATEWAY_SECRET).",
  },
  { name: "LOG_LEVEL", default: "info", secret: false, meaning: "pino log level." },
  {
    name: "INGRESS_PROCESSES",
    default: "1 below 4 cores, else cores (at most 8)",
    secret: false,
    meaning: "Ingress processes npm start runs.",
  },
  { name: "STATUS_PROBE_INTERVAL_S", default: "60", secret: false, meaning: "Seconds between two checks of a status service." },
  { name: "STATUS_PROBE_TIMEOUT_MS", default: "10000", secret: false, meaning: "A check without an answer by then failed." },
  { name: "STATUS_SLOW_MS", default: "2000", secret: false, meaning: "Typical latency above this makes a service degraded." },
  { name: "STATUS_PAGE_NAME", default: "Gateway status", secret: false, meaning: "Name of the public status page." },
  { name: "TRUSTED_PROXIES", default: "", secret: false, meaning: "CIDRs of proxies whose forwarding header names the client (none)." },
  { name: "METRICS_PORT", default: "9464", secret: false, meaning: "Port of the internal listener serving /metrics; 0 picks a free one." },
  {
    name: "METRICS_HOST",
    default: "127.0.0.1",
    secret: false,
    meaning: "Bind address of the metrics listener (loopback: scrape from the host or a sidecar).",
  },
  {
    name: "TRUSTED_PROXY_HEADER",
    default: "x-forwarded-for",
    secret: false,
    meaning: "x-forwarded-for or forwarded: the header those proxies write.",
  },
  {
    name: "RATE_SOURCE_IPV6_PREFIX",
    default: "64",
    secret: false,
    meaning: "Prefix length (32-128) of the IPv6 network the per-source limit counts as one source.",
  },
  { name: "DEMO_CLIENT_KEY", default: "", secret: true, meaning: "Client key of the demo page (set by npm start in demo mode)." },
  { name: "DEMO_SERVER_KEY", default: "", secret: true, meaning: "Server key of the demo page (set by npm start in demo mode)." },
  {
    name: "MONITOR_INTERVAL_HOURS",
    default: "24",
    secret: false,
    meaning: "The monitor re-scans each verified domain once per this many hours (1-720).",
  },
  {
    name: "DATABASE_READ_URL",
    default: "",
    secret: true,
    meaning:
      "PostgreSQL read replica for the read-only endpoints (events, activity, assignments and scan reads); unset reads from DATABASE_URL.",
  },
  {
    name: "ACTOR_CLAIM_IDLE_MS",
    default: "",
    secret: false,
    meaning: "Overrides every actor's claim idle time in ms (default per actor, 30 s or 60 s); tests and fast failover.",
  },
  {
    name: "ACTOR_NICE",
    default: "10",
    secret: false,
    meaning: "CPU priority (nice, 0-19) of every actor process but the prober; 0 runs them at the ingress's priority.",
  },
] as const;

type Env = Readonly<Record<string, string | undefined>>;

function text(env: Env, name: string, fallback: string): string {
  const value = env[name];
  return value === undefined || value === "" ? fallback : value;
}

function optional(env: Env, name: string): string | null {
  const value = env[name];
  return value === undefined || value === "" ? null : value;
}

function port(env: Env, name: string, fallback: number): number {
  const raw = optional(env, name);
  if (raw === null) return fallback;
  if (!/^\d{1,5}$/.test(raw) || Number(raw) > 65535) {
    throw new ConfigError(name, `expected a port number 0-65535, got ${JSON.stringify(raw)}`);
  }
  return Number(raw);
}

function count(env: Env, name: string, fallback: number, max: number): number {
  const raw = optional(env, name);
  if (raw === null) return fallback;
  if (!/^\d{1,3}$/.test(raw) || Number(raw) < 1 || Number(raw) > max) {
    throw new ConfigError(name, `expected a whole number 1-${max}, got ${JSON.stringify(raw)}`);
  }
  return Number(raw);
}

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = optional(env, name);
  if (raw === null) return fallback;
  if (!/^\d{1,9}$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    throw new ConfigError(name, `expected a whole number ${min}-${max}, got ${JSON.stringify(raw)}`);
  }
  return Number(raw);
}

function flag(env: Env, name: string): boolean {
  const raw = optional(env, name);
  if (raw === null || raw === "0") return false;
  if (raw === "1" || raw === "true") return true;
  throw new ConfigError(name, `expected 1 or 0, got ${JSON.stringify(raw)}`);
}

function url(env: Env, name: string, fallback: string, protocols: readonly string[]): string {
  const raw = text(env, name, fallback);
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    // Database and Redis URLs carry passwords: name the variable, never echo a secret one.
    const secret = ENVIRONMENT.some((v) => v.name === name && v.secret);
    throw new ConfigError(name, secret ? "not a URL" : `not a URL: ${JSON.stringify(raw)}`);
  }
  if (!protocols.includes(parsed.protocol)) {
    throw new ConfigError(name, `expected ${protocols.join(" or ")} URL, got ${parsed.protocol}`);
  }
  return raw;
}

const DEFAULT_REDIS_URL = "redis://127.0.0.1:6379";

/**
 * REDIS_URL names one server, or a cluster as `redis+cluster://`; REDIS_CLUSTER lists a
 * cluster's seed nodes and is folded into that form. Both set is a mistake to name, not
 * to guess at (REDIS_URL at its default counts as unset).
 */
function redisUrl(env: Env): string {
  const cluster = optional(env, "REDIS_CLUSTER");
  const single = optional(env, "REDIS_URL");
  if (cluster !== null) {
    if (single !== null && single !== DEFAULT_REDIS_URL) {
      throw new ConfigError(
        "REDIS_CLUSTER",
        "set REDIS_CLUSTER or REDIS_URL, not both (REDIS_URL may name the cluster itself: redis+cluster://host:port,...)",
      );
    }
    if (cluster.includes("@"))
      throw new ConfigError("REDIS_CLUSTER", "no credentials here: use REDIS_URL=redis+cluster://user:password@host:port,...");
    const url = `${CLUSTER_SCHEME}//${cluster}`;
    try {
      parseClusterUrl(url);
    } catch (error) {
      throw new ConfigError("REDIS_CLUSTER", (error as Error).message);
    }
    return url;
  }
  if (single?.startsWith(CLUSTER_SCHEME)) {
    try {
      if (parseClusterUrl(single) !== null) return single;
    } catch {
      /* reported below, without echoing a password */
    }
    throw new ConfigError("REDIS_URL", "expected redis+cluster://[user:password@]host:port,host:port,...");
  }
  return url(env, "REDIS_URL", DEFAULT_REDIS_URL, ["redis:", "rediss:", CLUSTER_SCHEME]);
}

const HEX = /^[0-9a-fA-F]+$/;
const BASE64 = /^[A-Za-z0-9+/_-]+={0,2}$/;

/**
 * The bytes of a secret written as 64+ hex characters or base64 (or base64url) of 32+
 * bytes; its form only, not its strength. For a secret that must still be read when it is
 * weak: `gateway secrets reseal --old`, which is how a weak one is replaced.
 */
export function decodeSecret(name: string, raw: string): Buffer {
  const trimmed = raw.trim();
  const bytes =
    HEX.test(trimmed) && trimmed.length % 2 === 0
      ? Buffer.from(trimmed, "hex")
      : BASE64.test(trimmed)
        ? Buffer.from(trimmed, "base64")
        : null;
  if (bytes === null || bytes.length < 32) {
    throw new ConfigError(name, "expected at least 32 bytes, hex or base64 encoded");
  }
  return bytes;
}

/**
 * Why a secret is not random bytes, or null. A length check alone passed 64 zeros and a
 * 44-letter passphrase (which is valid base64 of 33 bytes). Random 32 bytes have about 30
 * distinct values and 29 distinct steps between neighbours (never fewer than 22 in 200,000
 * draws), no period, and their base64 text about 31 distinct characters (fewer than 20 in
 * under one draw in a million); the thresholds sit far below that, so a real random secret
 * passes. The one exception: unpadded base64 of random bytes is all letters about once in
 * 7,000 draws (`openssl rand -base64 32` pads with `=`, never all letters); it is refused
 * like a passphrase, and another draw passes.
 */
export function secretWeakness(raw: string, bytes: Buffer): string | null {
  if (new Set(bytes).size < 16) return "it repeats a few byte values";
  for (let period = 1; period <= bytes.length / 2; period++) {
    let repeats = true;
    for (let i = period; i < bytes.length && repeats; i++) repeats = bytes[i] === bytes[i - period];
    if (repeats) return "it is a repeated pattern";
  }
  const steps = new Set<number>();
  for (let i = 1; i < bytes.length; i++) steps.add((bytes[i] - bytes[i - 1] + 256) % 256);
  if (steps.size < 16) return "it is a counting sequence";
  const text = raw.trim();
  if (!(HEX.test(text) && text.length % 2 === 0)) {
    if (/^[A-Za-z]+$/.test(text)) return "it is letters only, like a passphrase";
    if (new Set(text.replace(/=+$/, "")).size < 20) return "it uses few distinct characters, like a passphrase";
  }
  return null;
}

/** A master secret: 32+ bytes, hex or base64, that look random (secretWeakness). Never echoes the value. */
export function parseSecret(name: string, raw: string): Buffer {
  const bytes = decodeSecret(name, raw);
  const weakness = secretWeakness(raw, bytes);
  if (weakness !== null) {
    throw new ConfigError(name, `not a random secret (${weakness}): use 32 random bytes, e.g. \`openssl rand -hex 32\``);
  }
  return bytes;
}

/** `host:port`, `[v6]:port`, or a bare IP address (port 53). A bare name is refused: it is most likely a typo. */
function hostPort(env: Env, name: string): { host: string; port: number } | null {
  const raw = optional(env, name);
  if (raw === null) return null;
  if (isIP(raw)) return { host: raw, port: 53 };
  const match = /^(?:\[([0-9a-fA-F:.]+)\]|([A-Za-z0-9._-]+)):(\d{1,5})$/.exec(raw);
  if (match === null || (match[1] !== undefined && isIP(match[1]) !== 6)) {
    throw new ConfigError(name, `expected host:port, got ${JSON.stringify(raw)}`);
  }
  const portNumber = Number(match[3]);
  if (portNumber < 1 || portNumber > 65535) throw new ConfigError(name, "port out of range");
  return { host: match[1] ?? match[2], port: portNumber };
}

/** Comma- or space-separated addresses and CIDR blocks; a bad entry stops start-up naming it. */
function cidrList(env: Env, name: string): readonly string[] {
  const raw = optional(env, name);
  if (raw === null) return Object.freeze([]);
  const entries = raw.split(/[\s,]+/).filter((entry) => entry !== "");
  for (const entry of entries) {
    const [address, bits, extra] = entry.split("/");
    const family = isIP(address);
    const max = family === 4 ? 32 : 128;
    const bitsOk = bits === undefined || (/^\d{1,3}$/.test(bits) && Number(bits) <= max);
    if (family === 0 || !bitsOk || extra !== undefined) {
      throw new ConfigError(name, `expected addresses or CIDR blocks, got ${JSON.stringify(entry)}`);
    }
  }
  return Object.freeze(entries);
}

/**
 * A service process (ingress, actor, supervisor) refuses to start in production without
 * GATEWAY_SECRET: the fallback, a secret stored in PostgreSQL, would let anyone holding a
 * database backup unseal every secret and forge entitlements and bot-check tokens
 * (docs/security.md, item 5). Tools that only talk to the admin API (the CLI) load the
 * configuration without this check.
 */
export function requireProductionSecret(config: Pick<Config, "environment" | "gatewaySecret">): void {
  if (config.environment === "production" && config.gatewaySecret === null) {
    throw new ConfigError(
      "GATEWAY_SECRET",
      "required when GATEWAY_ENV=production (32+ random bytes, hex or base64, e.g. `openssl rand -hex 32`); for a local demo set GATEWAY_ENV=development, as `npm start` does",
    );
  }
}

function demoKeys(env: Env): Config["demoKeys"] {
  const client = optional(env, "DEMO_CLIENT_KEY");
  const server = optional(env, "DEMO_SERVER_KEY");
  if (client === null && server === null) return null;
  if (client === null || server === null)
    throw new ConfigError(client === null ? "DEMO_CLIENT_KEY" : "DEMO_SERVER_KEY", "set both demo keys or neither");
  return Object.freeze({ client, server });
}

export function loadConfig(env: Env): Config {
  const host = text(env, "HOST", "127.0.0.1");
  const portNumber = port(env, "PORT", 8080);
  const prefix = text(env, "REDIS_PREFIX", "gw:");
  if (/[{}\s]/.test(prefix)) throw new ConfigError("REDIS_PREFIX", "must not contain braces or spaces");
  const siteUrl = optional(env, "SITE_URL");
  if (siteUrl !== null) url(env, "SITE_URL", "", ["http:", "https:"]);
  const secret = optional(env, "GATEWAY_SECRET");
  const environment = text(env, "GATEWAY_ENV", "production");
  if (environment !== "production" && environment !== "test" && environment !== "development") {
    throw new ConfigError("GATEWAY_ENV", "expected production, test or development");
  }
  const level = text(env, "LOG_LEVEL", "info");
  if (!["fatal", "error", "warn", "info", "debug", "trace", "silent"].includes(level)) {
    throw new ConfigError("LOG_LEVEL", `unknown level ${JSON.stringify(level)}`);
  }
  const proxyHeader = text(env, "TRUSTED_PROXY_HEADER", "x-forwarded-for").toLowerCase();
  if (proxyHeader !== "x-forwarded-for" && proxyHeader !== "forwarded") {
    throw new ConfigError("TRUSTED_PROXY_HEADER", "expected x-forwarded-for or forwarded");
  }
  const smtp = optional(env, "SMTP_URL");
  if (smtp !== null) url(env, "SMTP_URL", "", ["smtp:", "smtps:"]);
  const testClock = flag(env, "GATEWAY_TEST_CLOCK");
  const scanAllowPrivate = flag(env, "SCAN_ALLOW_PRIVATE");
  // Scans follow names and redirects a customer controls: opening private space to them is
  // for test setups, never for a production deployment.
  if (scanAllowPrivate && environment === "production" && !testClock) {
    throw new ConfigError(
      "SCAN_ALLOW_PRIVATE",
      "tests only: refused with GATEWAY_ENV=production unless GATEWAY_TEST_CLOCK=1 (the prober has PROBE_ALLOW_PRIVATE; SIEM collectors and webhooks have OUTBOUND_ALLOW_CIDRS)",
    );
  }
  return Object.freeze({
    port: portNumber,
    host,
    redisUrl: redisUrl(env),
    redisPrefix: prefix,
    databaseUrl: url(env, "DATABASE_URL", "postgres://127.0.0.1:5432/gateway", ["postgres:", "postgresql:"]),
    adminToken: optional(env, "ADMIN_TOKEN"),
    siteUrl: (siteUrl ?? `http://${host.includes(":") ? `[${host}]` : host}:${portNumber}`).replace(/\/+$/, ""),
    gatewaySecret: secret === null ? null : parseSecret("GATEWAY_SECRET", secret),
    testClock,
    dnsResolver: hostPort(env, "DNS_RESOLVER"),
    scanAllowPrivate,
    probeAllowPrivate: flag(env, "PROBE_ALLOW_PRIVATE"),
    outboundAllowCidrs: cidrList(env, "OUTBOUND_ALLOW_CIDRS"),
    scanHttpPort: port(env, "SCAN_HTTP_PORT", 80),
    scanHttpsPort: port(env, "SCAN_HTTPS_PORT", 443),
    scanCaFile: optional(env, "SCAN_CA_FILE"),
    smtpUrl: smtp,
    geoipDb: optional(env, "GEOIP_DB"),
    environment,
    logLevel: level,
    ingressProcesses: count(env, "INGRESS_PROCESSES", defaultIngressProcesses(availableParallelism()), 64),
    statusProbeIntervalS: integer(env, "STATUS_PROBE_INTERVAL_S", 60, 10, 3600),
    statusProbeTimeoutMs: integer(env, "STATUS_PROBE_TIMEOUT_MS", 10_000, 100, 60_000),
    statusSlowMs: integer(env, "STATUS_SLOW_MS", 2000, 1, 60_000),
    statusPageName: text(env, "STATUS_PAGE_NAME", "Gateway status").slice(0, 100),
    trustedProxies: cidrList(env, "TRUSTED_PROXIES"),
    trustedProxyHeader: proxyHeader,
    // 64: DEFAULT_SOURCE_IPV6_PREFIX of shared/verify/source.ts, which says why.
    rateSourceIpv6Prefix: integer(env, "RATE_SOURCE_IPV6_PREFIX", 64, 32, 128),
    metricsHost: text(env, "METRICS_HOST", "127.0.0.1"),
    metricsPort: port(env, "METRICS_PORT", 9464),
    demoKeys: demoKeys(env),
    monitorIntervalHours: count(env, "MONITOR_INTERVAL_HOURS", 24, 720),
    databaseReadUrl: optional(env, "DATABASE_READ_URL") === null ? null : url(env, "DATABASE_READ_URL", "", ["postgres:", "postgresql:"]),
    actorClaimIdleMs: optional(env, "ACTOR_CLAIM_IDLE_MS") === null ? null : integer(env, "ACTOR_CLAIM_IDLE_MS", 30_000, 300, 3_600_000),
    actorNice: integer(env, "ACTOR_NICE", 10, 0, 19),
  });
}

/**
 * One ingress process below 4 cores: on a small machine the load balancer (or load
 * generator), Redis and the actors need the other cores, and two ingress processes on 2
 * cores measured slower than one (docs/verify.md, "INGRESS_PROCESSES"). From 4 cores,
 * one per core, at most 8.
 */
export function defaultIngressProcesses(cores: number): number {
  return cores < 4 ? 1 : Math.min(cores, 8);
}
