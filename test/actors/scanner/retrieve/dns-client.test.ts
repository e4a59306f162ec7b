import dgram from "node:dgram";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { createDnsClient, systemServers } from "../../../../shared/platform/net/outbound/dns-client.js";
import { type FixtureDns, startDnsServer } from "../../../fixtures/scanner/dns-server.js";

describe("dns client against the fixture server", () => {
  let dns: FixtureDns;
  beforeAll(async () => {
    dns = await startDnsServer();
  });
  afterAll(async () => {
    await dns?.stop();
  });
  const query = () => createDnsClient({ host: dns.host, port: dns.port }, 2000);

  test("A records and the AD flag of a signed zone", async () => {
    const answer = await query()("good.test", "A", { dnssecOk: true });
    expect(answer).toMatchObject({
      status: "noerror",
      authenticated: true,
      records: [{ type: "A", name: "good.test", address: "127.0.0.1" }],
    });
    expect((await query()("bad.test", "A")).authenticated).toBe(false);
  });

  test("TXT keeps the character-strings of a record apart", async () => {
    const answer = await query()("selector1._domainkey.good.test", "TXT");
    const record = answer.records[0];
    expect(record?.type === "TXT" && record.strings.length).toBe(2);
  });

  test("a name DNS cannot carry is this query's error, asked of no server, never a throw", async () => {
    const before = dns.queries.length;
    for (const [name, why] of [
      [`${"a".repeat(64)}.good.test`, "a label longer than 63 octets"],
      [`selector1._domainkey.${"abcdefghi.".repeat(24)}test`, "longer than 253 octets"],
      ["a..good.test", "an empty label"],
    ]) {
      expect(await query()(name, "TXT")).toMatchObject({ status: "error", records: [], error: `not a DNS name: ${why}` });
    }
    expect(dns.queries.length).toBe(before);
    // At the limits, still asked.
    expect((await query()(`${"a".repeat(63)}.good.test`, "A")).status).toBe("nxdomain");
  });

  test("NXDOMAIN and NODATA are answers", async () => {
    expect((await query()("nothing.test", "A")).status).toBe("nxdomain");
    expect(await query()("good.test", "AAAA")).toMatchObject({ status: "noerror", records: [] });
  });

  test("aliases the resolver followed are reported", async () => {
    const answer = await query()("mail.bad.test", "A");
    expect(answer.aliases).toEqual(["mailhost.bad.test"]);
    expect(answer.records).toHaveLength(1);
  });

  test("SERVFAIL for a bogus zone, an answer with checking disabled", async () => {
    expect((await query()("bogus.test", "SOA", { dnssecOk: true })).status).toBe("servfail");
    expect((await query()("bogus.test", "SOA", { dnssecOk: true, checkingDisabled: true })).status).toBe("noerror");
  });

  test("a truncated UDP answer is retried over TCP", async () => {
    const answer = await query()("tcp-only.test", "TXT");
    expect(answer.records).toEqual([{ type: "TXT", name: "tcp-only.test", strings: ["v=spf1 -all"] }]);
    expect(dns.queries.filter((q) => q.startsWith("tcp-only.test/")).length).toBe(2);
  });

  test("CAA, MX and NS records decode", async () => {
    expect((await query()("good.test", "CAA")).records).toContainEqual({
      type: "CAA",
      name: "good.test",
      flags: 0,
      tag: "issue",
      value: "letsencrypt.org",
    });
    expect((await query()("good.test", "MX")).records).toEqual([{ type: "MX", name: "good.test", priority: 10, exchange: "mx.good.test" }]);
    expect((await query()("good.test", "NS")).records).toHaveLength(2);
  });
});

describe("dns client failures are answers", () => {
  test("a silent server times out", async () => {
    const silent = dgram.createSocket("udp4");
    await new Promise<void>((resolve) => silent.bind(0, "127.0.0.1", resolve));
    try {
      const answer = await createDnsClient({ host: "127.0.0.1", port: silent.address().port }, 150)("good.test", "A");
      expect(answer).toMatchObject({ status: "timeout", records: [] });
      expect(answer.error).toContain("150 ms");
    } finally {
      silent.close();
    }
  });

  test("system servers parse into host and port", () => {
    for (const server of systemServers()) {
      expect(server.host.length).toBeGreaterThan(0);
      expect(Number.isInteger(server.port)).toBe(true);
    }
  });
});
