import { availableParallelism } from "node:os";
import { isIP } from "node:net";

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
  readonly redisUrl: string;
  readonly redisPrefix: string;
  readonly databaseUrl: string;
  readonly adminToken: string | null;
  readonly siteUrl: string;
  /** Raw master secret bytes, or null when unset (a development secret is then stored in PostgreSQL). */
  readonly gatewaySecret: Buffer | null;
  readonly testClock: boolean;
  readonly dnsResolver: { host: string; port: number } | null;
  readonly scanAllowPrivate: boolean;
  readonly scanHttpPort: number;
  readonly scanHttpsPort: number;
  readonly scanCaFile: string | null;
  readonly smtpUrl: string | null;
  readonly geoipDb: string | null;
  /** `production` issues `ak_live_`/`sk_live_` keys; anything else `ak_test_`/`sk_test_`. */
  readonly environment: "production" | "test";
  readonly logLevel: string;
  /** Ingress processes the supervisor runs on the one port (uWS listens with SO_REUSEPORT). */
  readonly ingressProcesses: number;
}

/** One row per variable: the README's configuration table mirrors this list. */
export const ENVIRONMENT = [
  { name: "PORT", default: "8080", secret: false, meaning: "Ingress port; 0 picks a free one." },
  { name: "HOST", default: "127.0.0.1", secret: false, meaning: "Ingress bind address." },
  { name: "REDIS_URL", default: "redis://127.0.0.1:6379", secret: true, meaning: "Redis 6.2+." },
  { name: "REDIS_PREFIX", default: "gw:", secret: false, meaning: "Prefix of every Redis key and stream." },
  { name: "DATABASE_URL", default: "postgres://127.0.0.1:5432/gateway", secret: true, meaning: "PostgreSQL 14+." },
  { name: "ADMIN_TOKEN", default: "", secret: true, meaning: "Bearer token of the admin API." },
  { name: "SITE_URL", default: "http://HOST:PORT", secret: false, meaning: "Public site root." },
  { name: "GATEWAY_SECRET", default: "", secret: true, meaning: "Master secret, 32+ bytes hex or base64." },
  { name: "GATEWAY_TEST_CLOCK", default: "", secret: false, meaning: "1 enables the test clock." },
  { name: "DNS_RESOLVER", default: "", secret: false, meaning: "host:port of the DNS server to ask." },
  { name: "SCAN_ALLOW_PRIVATE", default: "", secret: false, meaning: "1 lets scans reach private addresses." },
  { name: "SCAN_HTTP_PORT", default: "80", secret: false, meaning: "Port of the web scan over HTTP." },
  { name: "SCAN_HTTPS_PORT", default: "443", secret: false, meaning: "Port of the web scan over HTTPS." },
  { name: "SCAN_CA_FILE", default: "", secret: false, meaning: "Extra PEM CA bundle for scans and probes." },
  { name: "SMTP_URL", default: "", secret: true, meaning: "smtp://host:port for e-mail." },
  { name: "GEOIP_DB", default: "", secret: false, meaning: "Path of an MMDB country database." },
  { name: "GATEWAY_ENV", default: "production", secret: false, meaning: "production or test (key prefixes)." },
  { name: "LOG_LEVEL", default: "info", secret: false, meaning: "pino log level." },
  { name: "INGRESS_PROCESSES", default: "cores (at most 8)", secret: false, meaning: "Ingress processes npm start runs." },
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

/** Accepts 64+ hex characters or base64 of 32+ bytes. */
export function parseSecret(name: string, raw: string): Buffer {
  const trimmed = raw.trim();
  const bytes = /^[0-9a-fA-F]+$/.test(trimmed) && trimmed.length % 2 === 0
    ? Buffer.from(trimmed, "hex")
    : /^[A-Za-z0-9+/_-]+={0,2}$/.test(trimmed)
      ? Buffer.from(trimmed, "base64")
      : null;
  if (bytes === null || bytes.length < 32) {
    throw new ConfigError(name, "expected at least 32 bytes, hex or base64 encoded");
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

export function loadConfig(env: Env): Config {
  const host = text(env, "HOST", "127.0.0.1");
  const portNumber = port(env, "PORT", 8080);
  const prefix = text(env, "REDIS_PREFIX", "gw:");
  if (/[{}\s]/.test(prefix)) throw new ConfigError("REDIS_PREFIX", "must not contain braces or spaces");
  const siteUrl = optional(env, "SITE_URL");
  if (siteUrl !== null) url(env, "SITE_URL", "", ["http:", "https:"]);
  const secret = optional(env, "GATEWAY_SECRET");
  const environment = text(env, "GATEWAY_ENV", "production");
  if (environment !== "production" && environment !== "test") {
    throw new ConfigError("GATEWAY_ENV", "expected production or test");
  }
  const level = text(env, "LOG_LEVEL", "info");
  if (!["fatal", "error", "warn", "info", "debug", "trace", "silent"].includes(level)) {
    throw new ConfigError("LOG_LEVEL", `unknown level ${JSON.stringify(level)}`);
  }
  const smtp = optional(env, "SMTP_URL");
  if (smtp !== null) url(env, "SMTP_URL", "", ["smtp:", "smtps:"]);
  return Object.freeze({
    port: portNumber,
    host,
    redisUrl: url(env, "REDIS_URL", "redis://127.0.0.1:6379", ["redis:", "rediss:"]),
    redisPrefix: prefix,
    databaseUrl: url(env, "DATABASE_URL", "postgres://127.0.0.1:5432/gateway", ["postgres:", "postgresql:"]),
    adminToken: optional(env, "ADMIN_TOKEN"),
    siteUrl: (siteUrl ?? `http://${host.includes(":") ? `[${host}]` : host}:${portNumber}`).replace(/\/+$/, ""),
    gatewaySecret: secret === null ? null : parseSecret("GATEWAY_SECRET", secret),
    testClock: flag(env, "GATEWAY_TEST_CLOCK"),
    dnsResolver: hostPort(env, "DNS_RESOLVER"),
    scanAllowPrivate: flag(env, "SCAN_ALLOW_PRIVATE"),
    scanHttpPort: port(env, "SCAN_HTTP_PORT", 80),
    scanHttpsPort: port(env, "SCAN_HTTPS_PORT", 443),
    scanCaFile: optional(env, "SCAN_CA_FILE"),
    smtpUrl: smtp,
    geoipDb: optional(env, "GEOIP_DB"),
    environment,
    logLevel: level,
    ingressProcesses: count(env, "INGRESS_PROCESSES", Math.min(availableParallelism(), 8), 64),
  });
}
