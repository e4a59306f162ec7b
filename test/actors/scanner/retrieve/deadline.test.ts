/**
 * A scan's retrieval is bounded as a whole, against a loopback DNS server that answers
 * SERVFAIL slowly (or never): the zone walk is capped, the scan completes with what it has
 * when its deadline passes, and fails only when nothing was retrieved at all.
 */
import { Packet } from "dns2";
import type { DnsHandler } from "dns2";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { Helpers } from "../../../../actors/runtime/index.js";
import { scanHandler } from "../../../../actors/scanner/job/handler.js";
import { retrievalDeadline, ScanDeadlineExceeded } from "../../../../actors/scanner/retrieve/deadline.js";
import { retrieveDns } from "../../../../actors/scanner/retrieve/dns-evidence.js";
import { MAX_ZONE_WALK } from "../../../../actors/scanner/retrieve/zone-cut.js";
import { runScan } from "../../../../actors/scanner/scan.js";
import { startLoopbackDns } from "../../../../ops/local-servers.js";
import { manualClock } from "../../../../shared/platform/clock.js";
import type { Pool } from "../../../../shared/platform/db/pool.js";
import { silentLogger } from "../../../../shared/platform/log.js";
import { outboundPolicy } from "../../../../shared/platform/net/address-policy.js";
import { createDnsClient, type DnsQuery } from "../../../../shared/platform/net/outbound/dns-client.js";
import { defaultScanOptions, type ScanOptions } from "../../../../shared/platform/net/outbound/options.js";
import type { ScanReply } from "../../../../shared/scans/index.js";
import { NOW } from "../builders.js";

interface SlowDns {
  readonly port: number;
  /** Questions received, `name/TYPE`. */
  readonly asked: string[];
  close(): Promise<void>;
}

/** Answers every question with SERVFAIL after `delayMs`, or never when `silent`. */
async function startSlowDns(mode: { delayMs: number } | "silent"): Promise<SlowDns> {
  const asked: string[] = [];
  const timers = new Set<NodeJS.Timeout>();
  const handler: DnsHandler = (request, send) => {
    const question = request.questions[0];
    const type = Object.entries(Packet.TYPE).find(([, code]) => code === question?.type)?.[0] ?? String(question?.type);
    asked.push(`${question?.name.toLowerCase()}/${type}`);
    if (mode === "silent") return;
    const response = Packet.createResponseFromRequest(request);
    response.header.rcode = 2;
    const timer = setTimeout(() => {
      timers.delete(timer);
      send(response).catch(() => {});
    }, mode.delayMs);
    timers.add(timer);
  };
  const { port, close } = await startLoopbackDns(handler);
  return {
    port,
    asked,
    close: async () => {
      for (const timer of timers) clearTimeout(timer);
      await close();
    },
  };
}

/** 14 labels below the registrable domain: an uncapped walk would ask 15 names. */
const LONG_NAME = "a.b.c.d.e.f.g.h.i.j.k.l.m.n.example.com";
const soaAsked = (dns: SlowDns) => dns.asked.filter((q) => q.endsWith("/SOA"));

let slow: SlowDns;
let silent: SlowDns;
const options = (dns: SlowDns, timeoutMs: number): ScanOptions =>
  defaultScanOptions({ resolver: { host: "127.0.0.1", port: dns.port }, outbound: outboundPolicy("scan", "none"), timeoutMs });

beforeAll(async () => {
  [slow, silent] = await Promise.all([startSlowDns({ delayMs: 25 }), startSlowDns("silent")]);
});
afterAll(async () => {
  await Promise.all([slow?.close(), silent?.close()]);
});

describe("zone walk under a server that answers SERVFAIL", () => {
  test("asks at most MAX_ZONE_WALK names above the domain, each with DO and then CD, and never above the registrable domain", async () => {
    slow.asked.length = 0;
    const evidence = await retrieveDns(
      LONG_NAME,
      options(slow, 2_000),
      NOW,
      createDnsClient({ host: "127.0.0.1", port: slow.port }, 2_000),
    );
    expect([evidence.zone, evidence.zoneSource]).toEqual(["example.com", "public-suffix"]);
    const soa = soaAsked(slow);
    expect(new Set(soa).size).toBe(1 + MAX_ZONE_WALK);
    expect(soa).toHaveLength(2 * (1 + MAX_ZONE_WALK));
    expect(soa).not.toContain("com/SOA");
  });
});

describe("the scan's deadline", () => {
  test("a scan past its deadline completes with what it has; the lookups still outstanding are recorded as time-outs", async () => {
    slow.asked.length = 0;
    const result = await runScan(LONG_NAME, options(slow, 2_000), NOW, { deadlineMs: 150 });
    // 25 ms per answer, one after the other: the walk was cut well before its 22 SOA queries.
    expect(soaAsked(slow).length).toBeLessThan(2 * (1 + MAX_ZONE_WALK));
    expect(result.dns.findings.length).toBeGreaterThan(0);
    const ns = result.dns.findings.find((f) => f.id === "dns:ns");
    expect(`${ns?.detail}\n${ns?.evidence}`).toContain("deadline of 150 ms passed");
  });

  test("a DNS query after the deadline is not sent, one in flight answers at once", async () => {
    silent.asked.length = 0;
    const deadline = retrievalDeadline(50);
    const query: DnsQuery = deadline.guard(createDnsClient({ host: "127.0.0.1", port: silent.port }, 60_000));
    const inFlight = await query("a.example.com", "A");
    expect(inFlight).toMatchObject({ status: "timeout", error: "the scan's deadline of 50 ms passed" });
    expect(await query("b.example.com", "A")).toMatchObject({ status: "timeout" });
    expect(silent.asked).toEqual(["a.example.com/A"]);
    expect(deadline.answeredAny()).toBe(false);
  });

  test("nothing retrieved by the deadline fails the scan: the handler answers scan_failed", async () => {
    await expect(runScan("quiet.example.com", options(silent, 60_000), NOW, { deadlineMs: 100 })).rejects.toBeInstanceOf(
      ScanDeadlineExceeded,
    );
    const replies: ScanReply[] = [];
    const helpers = {
      clock: manualClock(NOW),
      logger: silentLogger(),
      reply: async (reply: ScanReply) => void replies.push(reply),
    } as unknown as Helpers<Pool>;
    const handler = scanHandler(
      (domain, scanOptions, nowMs) => runScan(domain, scanOptions, nowMs, { deadlineMs: 100 }),
      options(silent, 60_000),
    );
    await handler({ job_id: "j1", org_id: 1, domain: "quiet.example.com", trigger: "api" }, helpers);
    expect(replies).toEqual([{ ok: false, error: "scan_failed" }]);
  });
});
