/**
 * Differential test against Mozilla's HTTP Observatory (@mdn/mdn-http-observatory, run
 * offline with its own retrieval by test/fixtures/scanner/observatory-runner.mjs) on the
 * local sites of observatory-sites.ts: the two web scores must rank the sites alike
 * (Spearman ≥ 0.9) and ≥ 80% of grades must be within one step. The table of
 * disagreements is printed; docs/scan.md explains each deliberate one.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { GRADES } from "../../../actors/scanner/grading.js";
import { defaultScanOptions } from "../../../shared/platform/net/outbound/options.js";
import { outboundPolicy } from "../../../shared/platform/net/address-policy.js";
import type { DnsQuery } from "../../../shared/platform/net/outbound/dns-client.js";
import { noData } from "../../../shared/platform/net/outbound/evidence.js";
import { retrieveWeb } from "../../../actors/scanner/retrieve/web-evidence.js";
import { evaluateWeb } from "../../../actors/scanner/scan.js";
import { OBS_SUFFIX, startObservatorySites, type ObservatorySites } from "../../fixtures/scanner/observatory-sites.js";
import { rankCorrelation } from "./spearman.js";

const run = promisify(execFile);

interface Observed {
  readonly hostname: string;
  readonly score?: number;
  readonly grade?: string;
  readonly error?: string;
  readonly tests?: Record<string, { result: string; modifier: number }>;
}

interface Row {
  readonly host: string;
  readonly ours: { score: number; grade: string; findings: string };
  readonly theirs: Observed;
}

let sites: ObservatorySites;
let dir: string;
const rows: Row[] = [];

/** Fixture names resolve to loopback; nothing else does. */
const query: DnsQuery = async (name, type) =>
  name.endsWith(OBS_SUFFIX) && type === "A"
    ? { ...noData(name, type), records: [{ type: "A", name, address: "127.0.0.1" }] }
    : noData(name, type);

beforeAll(async () => {
  sites = await startObservatorySites();
  dir = mkdtempSync(join(tmpdir(), "observatory-"));
  writeFileSync(join(dir, "ca.pem"), sites.caPem);
  const runner = join(process.cwd(), "test/fixtures/scanner/observatory-runner.mjs");
  const input = JSON.stringify({ hosts: sites.hosts, httpPort: sites.httpPort, httpsPort: sites.httpsPort });
  const options = defaultScanOptions({
    outbound: outboundPolicy("scan", "all"),
    httpPort: sites.httpPort,
    httpsPort: sites.httpsPort,
    caPem: sites.caPem,
    timeoutMs: 5000,
  });
  // A few scans at a time: two shared cores, and a time-out would be scored as a broken site.
  const ours = new Array<ReturnType<typeof evaluateWeb>>(sites.hosts.length);
  let next = 0;
  const scanOnce = async (host: string) => {
    const evidence = await retrieveWeb(host, options, Date.now(), query);
    const timedOut = [...evidence.http.hops, ...evidence.https.hops].some((hop) => /time/i.test(hop.error ?? ""));
    return { section: evaluateWeb(evidence), timedOut };
  };
  const worker = async () => {
    for (let i = next++; i < sites.hosts.length; i = next++) {
      // A loaded CI machine can time a local request out; that is not the site's grade, so ask once more.
      let scanned = await scanOnce(sites.hosts[i]);
      if (scanned.timedOut) scanned = await scanOnce(sites.hosts[i]);
      ours[i] = scanned.section;
    }
  };
  // The Observatory runs in its own process meanwhile (one site at a time).
  const [observed] = await Promise.all([
    run(process.execPath, [runner, input], { env: { ...process.env, NODE_EXTRA_CA_CERTS: join(dir, "ca.pem") }, maxBuffer: 16 << 20 }),
    worker(),
    worker(),
    worker(),
  ]);
  const theirs = new Map(
    observed.stdout
      .trim()
      .split("\n")
      .map((line) => {
        const parsed = JSON.parse(line) as Observed;
        return [parsed.hostname, parsed];
      }),
  );
  sites.hosts.forEach((host, i) => {
    const section = ours[i];
    const findings = section.findings
      .filter((f) => f.status === "fail" || f.status === "warn")
      .map((f) => f.result)
      .join(" ");
    rows.push({
      host,
      ours: { score: section.score, grade: section.grade, findings },
      theirs: theirs.get(host) ?? { hostname: host, error: "no line" },
    });
  });
}, 60_000);

afterAll(async () => {
  await sites?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const step = (grade: string) => GRADES.findIndex(([, g]) => g === grade);

describe("web grades against Mozilla's HTTP Observatory", () => {
  test("the Observatory scanned every fixture site", () => {
    expect(rows.length).toBeGreaterThanOrEqual(30);
    expect(rows.filter((r) => r.theirs.error !== undefined).map((r) => `${r.host}: ${r.theirs.error}`)).toEqual([]);
  });

  test("scores rank alike (Spearman ≥ 0.9) and ≥ 80% of grades are within one step", () => {
    const ours = rows.map((r) => r.ours.score);
    const theirs = rows.map((r) => r.theirs.score ?? 0);
    const rho = rankCorrelation(ours, theirs);
    const within = rows.filter((r) => Math.abs(step(r.ours.grade) - step(r.theirs.grade ?? "F")) <= 1).length / rows.length;
    const same = rows.filter((r) => r.ours.grade === r.theirs.grade).length;
    const lines = rows
      .filter((r) => r.ours.score !== r.theirs.score)
      .map((r) => {
        const theirTests = Object.values(r.theirs.tests ?? {})
          .filter((t) => t.modifier !== 0)
          .map((t) => `${t.result} ${t.modifier}`)
          .join(", ");
        return `| ${r.host.replace(OBS_SUFFIX, "")} | ${r.ours.score} ${r.ours.grade} | ${r.theirs.score} ${r.theirs.grade} | ${r.ours.findings} | ${theirTests} |`;
      });
    console.log(
      [
        `Observatory differential: ${rows.length} sites, Spearman ${rho.toFixed(3)}, ${(within * 100).toFixed(0)}% within one grade step, ${same} identical grades`,
        "| site | ours | Observatory | our warn/fail results | Observatory non-zero results |",
        "|---|---|---|---|---|",
        ...lines,
      ].join("\n"),
    );
    expect(rho).toBeGreaterThanOrEqual(0.9);
    expect(within).toBeGreaterThanOrEqual(0.8);
  });
});
