import { describe, expect, it } from "vitest";
import { createBatcher } from "../../../actors/siem/batcher.js";
import { ownerOf } from "../../../actors/siem/leases.js";
import { compareEntryIds, hasGap, previousEntryId, type StreamPosition } from "../../../actors/siem/replay.js";
import { DEFAULT_RETRY, jitteredBackoff } from "../../../actors/siem/retry.js";
import { idempotencyKey } from "../../../actors/siem/transport/index.js";
import { parseTarget } from "../../../shared/events/siem-target.js";
import { octetFrame } from "../../../shared/events/syslog.js";

describe("SIEM retry policy", () => {
  it("doubles from the base, caps, and keeps half of each delay fixed", () => {
    const policy = { maxAttempts: 15, backoffBaseMs: 1_000, backoffMaxMs: 300_000 };
    expect([1, 2, 3, 9].map((a) => jitteredBackoff(policy, a, () => 0))).toEqual([500, 1_000, 2_000, 128_000]);
    expect([1, 2, 3, 9].map((a) => jitteredBackoff(policy, a, () => 0.999999))).toEqual([1_000, 2_000, 4_000, 256_000]);
    expect(jitteredBackoff(policy, 14, () => 0.5)).toBe(225_000);
    const total = Array.from({ length: DEFAULT_RETRY.maxAttempts - 1 }, (_, i) => jitteredBackoff(DEFAULT_RETRY, i + 1, () => 1));
    expect(total.reduce((a, b) => a + b, 0)).toBe(2_011_000);
  });
});

describe("batcher", () => {
  it("sends a full batch at once and a partial one after the linger; every waiter gets its batch's outcome", async () => {
    const sent: number[][] = [];
    let fail = false;
    const batcher = createBatcher<number>({
      size: 3,
      lingerMs: 10,
      send: async (items) => {
        sent.push(items);
        if (fail) throw new Error("down");
      },
    });
    await Promise.all([1, 2, 3, 4].map((n) => batcher.submit(n)));
    expect(sent).toEqual([[1, 2, 3], [4]]);
    fail = true;
    const results = await Promise.allSettled([5, 6].map((n) => batcher.submit(n)));
    expect(results.map((r) => r.status)).toEqual(["rejected", "rejected"]);
    expect(sent[2]).toEqual([5, 6]);
  });
});

describe("destination URLs and framing", () => {
  it("completes HEC and _bulk paths and syslog ports", () => {
    expect(parseTarget("splunk_hec", "https://splunk.example")).toMatchObject({
      ok: true,
      target: { port: 443, path: "/services/collector/event" },
    });
    expect(parseTarget("splunk_hec", "http://splunk.example:8088/services/collector?channel=x")).toMatchObject({
      ok: true,
      target: { path: "/services/collector?channel=x" },
    });
    expect(parseTarget("elastic_bulk", "http://es.example:9200/")).toMatchObject({ ok: true, target: { path: "/_bulk" } });
    expect(parseTarget("elastic_bulk", "http://es.example:9200/logs/_bulk")).toMatchObject({ ok: true, target: { path: "/logs/_bulk" } });
    expect(parseTarget("syslog_tcp", "tls://siem.example")).toMatchObject({ ok: true, target: { protocol: "tls", port: 6514 } });
    expect(parseTarget("syslog_tcp", "syslog+tls://siem.example:1514")).toMatchObject({
      ok: true,
      target: { protocol: "tls", port: 1514 },
    });
    expect(parseTarget("syslog_tcp", "syslog://siem.example")).toMatchObject({ ok: true, target: { protocol: "tcp", port: 514 } });
    expect(parseTarget("syslog_tcp", "tcp://[2001:db8::1]:601")).toMatchObject({ ok: true, target: { host: "2001:db8::1", port: 601 } });
  });

  it("reads a syslog host as an http host is read: the address a legacy form denotes, lower case, IDNA", () => {
    const hostOf = (url: string) => {
      const parsed = parseTarget("syslog_tcp", url);
      return parsed.ok ? parsed.target.host : parsed.detail;
    };
    for (const url of ["tcp://0x7f.1", "tcp://2130706433", "tcp://127.1", "tcp://127.0.0.1.", "syslog://0177.0.0.1:514"]) {
      expect([url, hostOf(url)]).toEqual([url, "127.0.0.1"]);
    }
    expect(hostOf("tls://[::ffff:127.0.0.1]:6514")).toBe("::ffff:7f00:1");
    expect(hostOf("syslog://Collector.Example.COM")).toBe("collector.example.com");
    expect(hostOf("syslog://bücher.example")).toBe("xn--bcher-kva.example");
    expect(hostOf("tcp://a%40b")).toBe("the URL's host is not a host name or an address");
  });

  it("counts octets, not characters (RFC 6587)", () => {
    expect(octetFrame("é")).toBe("2 é");
  });

  it("the idempotency key is the batch's ids, whatever their order", () => {
    const a = [
      { id: 2, type: "t", time: "", domain: "" },
      { id: 1, type: "t", time: "", domain: "" },
    ];
    expect(idempotencyKey(7, a)).toBe(idempotencyKey(7, [...a].reverse()));
    expect(idempotencyKey(7, a)).not.toBe(idempotencyKey(8, a));
  });
});

describe("destination balance (rendezvous hashing)", () => {
  const ids = Array.from({ length: 3_000 }, (_, i) => i + 1);
  const count = (members: string[]) => {
    const counts = new Map<string, number>(members.map((m) => [m, 0]));
    for (const id of ids) {
      const owner = ownerOf(id, members) as string;
      counts.set(owner, (counts.get(owner) ?? 0) + 1);
    }
    return counts;
  };

  it("gives each of N members about 1/N", () => {
    for (const members of [
      ["a", "b"],
      ["host-1", "host-2", "host-3"],
      ["p1", "p2", "p3", "p4", "p5"],
    ]) {
      for (const n of count(members).values()) {
        expect(n / ids.length).toBeGreaterThan(0.8 / members.length);
        expect(n / ids.length).toBeLessThan(1.2 / members.length);
      }
    }
    expect(ownerOf(1, [])).toBeNull();
  });

  it("moves only the leaving member's destinations, and a joining member takes only its own", () => {
    const three = ["a", "b", "c"];
    const two = ["a", "c"];
    for (const id of ids) {
      const before = ownerOf(id, three);
      const after = ownerOf(id, two);
      if (before !== "b") expect(after).toBe(before);
      expect(ownerOf(id, [...three].reverse())).toBe(before);
    }
  });
});

describe("replay gap", () => {
  const at = (fields: Partial<StreamPosition>): StreamPosition => ({
    lastDeliveredId: "100-3",
    entriesRead: 10,
    lag: null,
    entriesAdded: 310,
    length: 100,
    lastGeneratedId: "900-0",
    firstEntryId: "500-0",
    firstEventId: 7,
    ...fields,
  });

  it("orders entry ids numerically and steps one below", () => {
    expect(compareEntryIds("10-0", "9-5")).toBe(1);
    expect(compareEntryIds("9-10", "9-9")).toBe(1);
    expect(compareEntryIds("5-1", "5-1")).toBe(0);
    expect(previousEntryId("5-1")).toBe("5-0");
    expect(compareEntryIds(previousEntryId("5-0"), "5-0")).toBe(-1);
    expect(compareEntryIds(previousEntryId("5-0"), "4-999999")).toBe(1);
  });

  it("is a gap when entries after the group's cursor were trimmed unread", () => {
    expect(hasGap(at({}))).toBe(true);
    // Everything added after the cursor is still there.
    expect(hasGap(at({ entriesRead: 210 }))).toBe(false);
    // The cursor is inside what the stream holds.
    expect(hasGap(at({ lastDeliveredId: "500-0" }))).toBe(false);
    expect(hasGap(at({ entriesRead: null }))).toBe(true);
    // Without entries-read, Redis's lag: a group made at 0 that has not read yet.
    expect(hasGap(at({ entriesRead: null, lag: 100 }))).toBe(false);
    expect(hasGap(at({ entriesRead: null, lag: 300 }))).toBe(true);
    expect(hasGap(at({ firstEntryId: null, firstEventId: null, length: 0, entriesRead: 310 }))).toBe(false);
    expect(hasGap(at({ firstEntryId: null, firstEventId: null, length: 0 }))).toBe(true);
  });
});
