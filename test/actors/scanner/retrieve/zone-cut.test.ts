import { describe, expect, test } from "vitest";
import type { DnsQuery } from "../../../../shared/platform/net/outbound/dns-client.js";
import { noData, type DnsAnswer } from "../../../../shared/platform/net/outbound/evidence.js";
import { findZoneCut, MAX_ZONE_WALK, zoneFromAnswer } from "../../../../actors/scanner/retrieve/zone-cut.js";
import { answer, nxdomain, timedOut } from "../builders.js";

const soaAt = (name: string): DnsAnswer => answer(name, "SOA", [{ type: "SOA", name, primary: `ns1.${name}`, serial: 1 }]);

describe("zoneFromAnswer", () => {
  test("an SOA owned by the name makes it an apex", () => {
    expect(zoneFromAnswer("a.example.com", soaAt("a.example.com"))).toBe("a.example.com");
  });
  test("a negative answer names its zone by the authority SOA", () => {
    expect(zoneFromAnswer("www.a.example.com", { ...noData("www.a.example.com", "SOA"), authoritySoa: "a.example.com" })).toBe(
      "a.example.com",
    );
    expect(zoneFromAnswer("x.example.com", { ...nxdomain("x.example.com", "SOA"), authoritySoa: "example.com" })).toBe("example.com");
  });
  test("an alias is never an apex, and the SOA after it is the target's", () => {
    expect(
      zoneFromAnswer("www.example.com", { ...soaAt("cdn.example.net"), aliases: ["cdn.example.net"], authoritySoa: "example.net" }),
    ).toBeNull();
  });
  test("an authority SOA that does not enclose the name is ignored", () => {
    expect(zoneFromAnswer("www.example.com", { ...noData("www.example.com", "SOA"), authoritySoa: "other.org" })).toBeNull();
  });
});

describe("findZoneCut", () => {
  const asked: string[] = [];
  const fake =
    (answers: Record<string, DnsAnswer>): DnsQuery =>
    async (name, type) => {
      asked.push(`${name}/${type}`);
      return answers[name] ?? noData(name, type);
    };
  test("walks up when answers carry no authority SOA (servers that omit it)", async () => {
    asked.length = 0;
    const cut = await findZoneCut("www.child.example.com", fake({ "child.example.com": soaAt("child.example.com") }));
    expect([cut.zone, cut.source]).toEqual(["child.example.com", "soa"]);
    expect(asked).toEqual(["www.child.example.com/SOA", "child.example.com/SOA"]);
  });
  test("falls back to the public suffix list when nothing answers", async () => {
    const cut = await findZoneCut("www.child.example.com", async (name, type) => timedOut(name, type));
    expect([cut.zone, cut.source]).toEqual(["example.com", "public-suffix"]);
    expect(cut.own.answer.status).toBe("timeout");
  });
  test("a SERVFAIL is asked again with CD, and that answer names the zone", async () => {
    const query: DnsQuery = async (name, type, flags) =>
      flags?.checkingDisabled ? soaAt(name) : { ...noData(name, type), status: "servfail", rcode: 2 };
    const cut = await findZoneCut("bogus.example.com", query);
    expect(cut.zone).toBe("bogus.example.com");
    expect(cut.own.answer.status).toBe("servfail");
    expect(cut.own.unchecked?.status).toBe("noerror");
  });

  const servfail: DnsQuery = async (name, type) => {
    asked.push(`${name}/${type}`);
    return { ...noData(name, type), status: "servfail", rcode: 2 };
  };
  test("a SERVFAIL walk stops at the registrable domain, never asking a public suffix", async () => {
    asked.length = 0;
    const cut = await findZoneCut("x.y.example.co.uk", servfail);
    expect([cut.zone, cut.source]).toEqual(["example.co.uk", "public-suffix"]);
    // Each name twice: with DO, then with CD after the SERVFAIL.
    expect([...new Set(asked)]).toEqual(["x.y.example.co.uk/SOA", "y.example.co.uk/SOA", "example.co.uk/SOA"]);
    expect(asked).toHaveLength(6);
  });
  test("a SERVFAIL walk takes at most MAX_ZONE_WALK steps above the domain, however long the name", async () => {
    asked.length = 0;
    const long = `${"a.".repeat(100)}example.com`;
    const cut = await findZoneCut(long, servfail);
    expect([cut.zone, cut.source]).toEqual(["example.com", "public-suffix"]);
    expect(new Set(asked).size).toBe(1 + MAX_ZONE_WALK);
    expect(asked.length).toBe(2 * (1 + MAX_ZONE_WALK));
  });
});
