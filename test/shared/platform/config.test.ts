import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { ConfigError, defaultIngressProcesses, ENVIRONMENT, loadConfig, parseSecret } from "../../../shared/platform/config.js";
import { parseClusterUrl } from "../../../shared/platform/redis/client.js";
import { readSpec } from "../../helpers/spec.js";

/** The variable names of the environment table in operator-api.md section 1. */
function contractVariables(): string[] {
  const spec = readSpec("operator-api.md");
  const section = spec.slice(spec.indexOf("### Environment"), spec.indexOf("### Health and metrics"));
  const names = new Set<string>();
  for (const line of section.split("\n")) {
    const first = line.split("|")[1] ?? "";
    for (const match of first.matchAll(/`([A-Z][A-Z0-9_]+)`/g)) names.add(match[1]);
  }
  return [...names];
}

function configError(env: Record<string, string>): ConfigError {
  try {
    loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error(`no ConfigError for ${JSON.stringify(env)}`);
}

describe("loadConfig", () => {
  it("knows every variable of the operator contract", () => {
    const contract = contractVariables();
    expect(contract.length).toBe(16);
    const known = ENVIRONMENT.map((v) => v.name as string);
    for (const name of contract) expect(known, name).toContain(name);
  });

  it("gives every variable its contract default on an empty environment", () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      port: 8080,
      host: "127.0.0.1",
      redisUrl: "redis://127.0.0.1:6379",
      redisPrefix: "gw:",
      databaseUrl: "postgres://127.0.0.1:5432/gateway",
      adminToken: null,
      siteUrl: "http://127.0.0.1:8080",
      gatewaySecret: null,
      testClock: false,
      dnsResolver: null,
      scanAllowPrivate: false,
      probeAllowPrivate: false,
      outboundAllowCidrs: [],
      scanHttpPort: 80,
      scanHttpsPort: 443,
      scanCaFile: null,
      smtpUrl: null,
      geoipDb: null,
      environment: "production",
      logLevel: "info",
    });
    expect(Object.isFrozen(config)).toBe(true);
  });

  it("runs actors at nice 10 unless ACTOR_NICE says otherwise (0 keeps the ingress's priority)", () => {
    expect(loadConfig({}).actorNice).toBe(10);
    expect(loadConfig({ ACTOR_NICE: "0" }).actorNice).toBe(0);
    expect(loadConfig({ ACTOR_NICE: "19" }).actorNice).toBe(19);
  });

  it("treats an empty value as unset", () => {
    const config = loadConfig({ PORT: "", ADMIN_TOKEN: "", GATEWAY_TEST_CLOCK: "", DNS_RESOLVER: "", REDIS_PREFIX: "" });
    expect(config).toMatchObject({ port: 8080, adminToken: null, testClock: false, dnsResolver: null, redisPrefix: "gw:" });
  });

  it("reads every variable when set", () => {
    const secret = "4b50212fb4c42cc04e686dcf25bf2a072d4d4c52c97a8c521c9331d147f18940";
    const config = loadConfig({
      PORT: "0",
      HOST: "::1",
      REDIS_URL: "rediss://cache.internal:6380/2",
      REDIS_PREFIX: "prod:",
      DATABASE_URL: "postgresql://gw@db.internal/gateway",
      ADMIN_TOKEN: "tok",
      GATEWAY_SECRET: secret,
      GATEWAY_TEST_CLOCK: "1",
      DNS_RESOLVER: "127.0.0.1:5353",
      SCAN_ALLOW_PRIVATE: "1",
      PROBE_ALLOW_PRIVATE: "1",
      OUTBOUND_ALLOW_CIDRS: "10.20.0.0/16, fd00:1::/64,192.168.7.9",
      SCAN_HTTP_PORT: "8081",
      SCAN_HTTPS_PORT: "8443",
      SCAN_CA_FILE: "/tmp/ca.pem",
      SMTP_URL: "smtp://mail.internal:25",
      GEOIP_DB: "/tmp/geo.mmdb",
    });
    expect(config).toMatchObject({
      port: 0,
      host: "::1",
      redisUrl: "rediss://cache.internal:6380/2",
      redisPrefix: "prod:",
      databaseUrl: "postgresql://gw@db.internal/gateway",
      adminToken: "tok",
      siteUrl: "http://[::1]:0",
      testClock: true,
      dnsResolver: { host: "127.0.0.1", port: 5353 },
      scanAllowPrivate: true,
      probeAllowPrivate: true,
      outboundAllowCidrs: ["10.20.0.0/16", "fd00:1::/64", "192.168.7.9"],
      scanHttpPort: 8081,
      scanHttpsPort: 8443,
      scanCaFile: "/tmp/ca.pem",
      smtpUrl: "smtp://mail.internal:25",
      geoipDb: "/tmp/geo.mmdb",
    });
    expect(config.gatewaySecret?.toString("hex")).toBe(secret);
  });

  it("takes SITE_URL without its trailing slash, and derives it from HOST and PORT otherwise", () => {
    expect(loadConfig({ SITE_URL: "https://gw.example.com/" }).siteUrl).toBe("https://gw.example.com");
    expect(loadConfig({ HOST: "0.0.0.0", PORT: "9000" }).siteUrl).toBe("http://0.0.0.0:9000");
  });

  it.each([
    ["127.0.0.1:53", { host: "127.0.0.1", port: 53 }],
    ["ns.example.net:5353", { host: "ns.example.net", port: 5353 }],
    ["[::1]:5300", { host: "::1", port: 5300 }],
    ["10.0.0.2", { host: "10.0.0.2", port: 53 }],
    ["::1", { host: "::1", port: 53 }],
  ])("reads DNS_RESOLVER=%s", (raw, expected) => {
    expect(loadConfig({ DNS_RESOLVER: raw }).dnsResolver).toEqual(expected);
  });

  it("accepts a master secret as hex or base64 of 32+ random bytes", () => {
    expect(parseSecret("S", "4b50212fb4c42cc04e686dcf25bf2a072d4d4c52c97a8c521c9331d147f18940").length).toBe(32);
    expect(parseSecret("S", "LhWubCh6g41USAGT4KcR5rogrj6InveljiUuOPsUXvQ=").length).toBe(32);
    expect(parseSecret("S", "lQdpTmHpq76CpIZ9v_HTwDIJm9lSAgbG0jsKPoZlnVsrE4wesb3T08e9HQjeGeeD").length).toBe(48);
    // What `openssl rand -hex 32` and `-base64 32` give, drawn many times: never refused.
    for (let i = 0; i < 2000; i++) {
      const bytes = randomBytes(32);
      expect(parseSecret("S", bytes.toString("hex")).equals(bytes)).toBe(true);
      expect(parseSecret("S", bytes.toString("base64")).equals(bytes)).toBe(true);
    }
  });

  it.each([
    ["64 zeros", "0".repeat(64)],
    ["one byte repeated", "ab".repeat(32)],
    ["a short pattern repeated", "deadbeef".repeat(8)],
    ["16 random bytes twice", "9f1c2e7a55b0d3486ec1a2f0b7d94e13".repeat(2)],
    ["a counting sequence", Buffer.from(Array.from({ length: 32 }, (_, i) => i)).toString("hex")],
    ["a counting sequence in steps of 7", Buffer.from(Array.from({ length: 40 }, (_, i) => (i * 7) % 256)).toString("base64")],
    ["base64 of zeros", Buffer.alloc(32).toString("base64")],
    ["a 44-letter passphrase", "correcthorsebatterystaplecorrecthorsebattery"],
    ["a 44-letter pangram passphrase", "thequickbrownfoxjumpsoverthelazydogsixtimesx"],
    ["a passphrase with a digit", "Correcthorsebatterystaple1Correcthorsebatter"],
  ])("refuses a low-entropy GATEWAY_SECRET (%s) at start, naming the variable and not the value", (_, value) => {
    const error = configError({ GATEWAY_SECRET: value });
    expect(error.variable).toBe("GATEWAY_SECRET");
    expect(error.message).toMatch(/^GATEWAY_SECRET: not a random secret \(.+\): use 32 random bytes/);
    expect(error.message).not.toContain(value);
  });

  it("names a Redis Cluster by REDIS_CLUSTER or by REDIS_URL's redis+cluster:// form, never both", () => {
    expect(loadConfig({ REDIS_CLUSTER: "10.0.0.1:7000,10.0.0.2:7000" }).redisUrl).toBe("redis+cluster://10.0.0.1:7000,10.0.0.2:7000");
    // REDIS_URL at its default counts as unset.
    expect(loadConfig({ REDIS_CLUSTER: "h:7000", REDIS_URL: "redis://127.0.0.1:6379" }).redisUrl).toBe("redis+cluster://h:7000");
    expect(loadConfig({ REDIS_URL: "redis+cluster://ops:s3cret@h1:7000,h2:7001" }).redisUrl).toBe(
      "redis+cluster://ops:s3cret@h1:7000,h2:7001",
    );
    const both = configError({ REDIS_CLUSTER: "h:7000", REDIS_URL: "redis://cache:6379" });
    expect(both.variable).toBe("REDIS_CLUSTER");
    expect(both.message).toContain("REDIS_URL");
    expect(configError({ REDIS_CLUSTER: "h" }).variable).toBe("REDIS_CLUSTER");
    expect(configError({ REDIS_CLUSTER: "user:pw@h:7000" }).message).not.toContain("pw");
    const malformed = configError({ REDIS_URL: "redis+cluster://ops:s3cret@h1:7000,h2" });
    expect(malformed.variable).toBe("REDIS_URL");
    expect(malformed.message).not.toContain("s3cret");
  });

  it("parses the seed nodes and credentials of a cluster URL", () => {
    expect(parseClusterUrl("redis://h:6379")).toBeNull();
    expect(parseClusterUrl("redis+cluster://u:p%40ss@h1:7000,[::1]:7001/")).toEqual({
      username: "u",
      password: "p@ss",
      nodes: [
        { host: "h1", port: 7000 },
        { host: "::1", port: 7001 },
      ],
    });
    expect(() => parseClusterUrl("redis+cluster://h1:0")).toThrow();
    expect(() => parseClusterUrl("redis+cluster://")).toThrow();
  });

  it.each([
    ["PORT", "abc"],
    ["PORT", "65536"],
    ["PORT", "-1"],
    ["PORT", "80.5"],
    ["REDIS_URL", "ftp://x"],
    ["REDIS_URL", "not a url"],
    ["DATABASE_URL", "mysql://db/gateway"],
    ["SITE_URL", "gw.example.com"],
    ["SITE_URL", "ftp://gw.example.com"],
    ["REDIS_PREFIX", "{gw}:"],
    ["REDIS_PREFIX", "g w:"],
    ["GATEWAY_SECRET", "too-short"],
    ["GATEWAY_SECRET", "ab".repeat(31)],
    ["GATEWAY_SECRET", Buffer.alloc(31).toString("base64")],
    ["GATEWAY_SECRET", "not*base64*or*hex*".repeat(4)],
    ["GATEWAY_TEST_CLOCK", "maybe"],
    ["GATEWAY_TEST_CLOCK", "yes"],
    ["SCAN_ALLOW_PRIVATE", "2"],
    ["PROBE_ALLOW_PRIVATE", "yes"],
    ["OUTBOUND_ALLOW_CIDRS", "10.0.0.0/33"],
    ["OUTBOUND_ALLOW_CIDRS", "intranet"],
    ["DNS_RESOLVER", "bad"],
    ["DNS_RESOLVER", "127.0.0.1:"],
    ["DNS_RESOLVER", "127.0.0.1:0"],
    ["DNS_RESOLVER", "127.0.0.1:99999"],
    ["DNS_RESOLVER", "[nope]:53"],
    ["DNS_RESOLVER", "host name:53"],
    ["SCAN_HTTP_PORT", "http"],
    ["SCAN_HTTPS_PORT", "70000"],
    ["SMTP_URL", "http://mail"],
    ["GATEWAY_ENV", "staging"],
    ["LOG_LEVEL", "loud"],
    ["ACTOR_NICE", "20"],
    ["ACTOR_NICE", "-5"],
  ])("refuses %s=%j with a ConfigError naming it", (name, value) => {
    const error = configError({ [name]: value });
    expect(error.variable).toBe(name);
    expect(error.message.startsWith(`${name}:`)).toBe(true);
  });

  it("takes SCAN_ALLOW_PRIVATE only outside production or with the test clock (tests)", () => {
    const error = configError({ SCAN_ALLOW_PRIVATE: "1" });
    expect(error.variable).toBe("SCAN_ALLOW_PRIVATE");
    expect(error.message).toContain("tests only");
    expect(configError({ SCAN_ALLOW_PRIVATE: "1", GATEWAY_ENV: "production", OUTBOUND_ALLOW_CIDRS: "10.0.0.0/8" }).variable).toBe(
      "SCAN_ALLOW_PRIVATE",
    );
    expect(loadConfig({ SCAN_ALLOW_PRIVATE: "1", GATEWAY_TEST_CLOCK: "1" }).scanAllowPrivate).toBe(true);
    expect(loadConfig({ SCAN_ALLOW_PRIVATE: "1", GATEWAY_ENV: "test" }).scanAllowPrivate).toBe(true);
    // The operator's settings for the prober and for customer destinations are production settings.
    expect(loadConfig({ PROBE_ALLOW_PRIVATE: "1", OUTBOUND_ALLOW_CIDRS: "10.0.0.0/8" })).toMatchObject({
      probeAllowPrivate: true,
      outboundAllowCidrs: ["10.0.0.0/8"],
    });
  });

  it("never echoes a bad secret in the error", () => {
    const error = configError({ GATEWAY_SECRET: "hunter2-hunter2" });
    expect(error.message).not.toContain("hunter2");
  });
});

describe("loadConfig secrets", () => {
  it("does not echo a malformed secret URL (it may hold a password)", () => {
    const error = configError({ DATABASE_URL: "postgres://gw:s3cret@db:5432:5432/x" });
    expect(error.variable).toBe("DATABASE_URL");
    expect(error.message).not.toContain("s3cret");
  });
});

describe("INGRESS_PROCESSES default", () => {
  it("is one process below 4 cores, one per core from 4, at most 8", () => {
    expect([1, 2, 3, 4, 6, 8, 16].map(defaultIngressProcesses)).toEqual([1, 1, 1, 4, 6, 8, 8]);
  });
});
