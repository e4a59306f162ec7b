/**
 * The scanner actor serves organizations in turn: ten scans of one organization whose
 * site never answers do not hold the scanner, and another organization's scan behind
 * them in the stream completes. Real Redis, PostgreSQL, fixture DNS and a local web
 * server that holds the slow organization's requests until the test lets them go.
 */
import http, { type ServerResponse } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { outboundPolicy } from "../../../../shared/platform/net/address-policy.js";
import { type ActorHandle, runActor } from "../../../../actors/runtime/index.js";
import { SCANS_PER_ORG, scannerActor } from "../../../../actors/scanner/job/index.js";
import { createCheckPool, type CheckPool } from "../../../../actors/scanner/offload/pool.js";
import { defaultScanOptions } from "../../../../shared/platform/net/outbound/options.js";
import { closeServer, listenLoopback } from "../../../../ops/local-servers.js";
import { insertOrg } from "../../../../shared/accounts/db/orgs.js";
import { publish } from "../../../../shared/platform/streams/envelope.js";
import { request } from "../../../../shared/platform/streams/request-reply.js";
import { SCAN_STREAM, type ScanJob, scanReplySchema } from "../../../../shared/scans/stream.js";
import { createTestDatabase } from "../../../helpers/database.js";
import { type FixtureDns, startDnsServer } from "../../../fixtures/scanner/dns-server.js";
import { testRedis, waitFor } from "../../runtime/support.js";

const t = testRedis("scanfair");
let db: Awaited<ReturnType<typeof createTestDatabase>>;
let dns: FixtureDns;
let pool: CheckPool;
let handle: ActorHandle;
let web: http.Server;
/** Requests for bad.test (the slow organization's site), held unanswered. */
const held: ServerResponse[] = [];
let releasing = false;

const PAGE = "<!doctype html><title>ok</title>";

beforeAll(async () => {
  db = await createTestDatabase("scanfair");
  dns = await startDnsServer();
  web = http.createServer((req, res) => {
    if ((req.headers.host ?? "").startsWith("bad.test") && !releasing) held.push(res);
    else res.writeHead(200, { "content-type": "text/html" }).end(PAGE);
  });
  const httpPort = await listenLoopback(web);
  // HTTPS goes to a port nobody listens on: refused at once, the HTTP chain is the slow part.
  const closed = http.createServer();
  const httpsPort = await listenLoopback(closed);
  await closeServer(closed);
  const options = defaultScanOptions({
    resolver: { host: dns.host, port: dns.port },
    outbound: outboundPolicy("scan", "all"),
    httpPort,
    httpsPort,
    timeoutMs: 30_000,
  });
  pool = createCheckPool({ size: 2, budgetMs: 30_000 });
  handle = await runActor(scannerActor(options, pool), { ...t.deps("scanner-1"), db: db.pool });
});

afterAll(async () => {
  releasing = true;
  for (const res of held.splice(0)) res.writeHead(200, { "content-type": "text/html" }).end(PAGE);
  await handle?.stop({ timeoutMs: 10_000 });
  await pool?.close();
  await new Promise<void>((resolve) => (web ? web.close(() => resolve()) : resolve()));
  await dns?.stop();
  await t.cleanup();
  await db?.drop();
});

const org = async (name: string) =>
  Number((await insertOrg(db.pool, { name, plan: "enterprise", fixTargetDays: 30, subscription: "active", nowMs: Date.now() })).id);
const job = (orgId: number, domain: string, n: number): ScanJob => ({
  job_id: `job-${orgId}-${n}-${domain}`,
  org_id: orgId,
  domain,
  trigger: "api",
});

describe("scanner fairness", () => {
  it("one organization's stalled scans leave room for another organization's scan", async () => {
    const [slow, other] = [await org("slow"), await org("other")];
    const stream = t.keys.stream(SCAN_STREAM);
    for (let n = 1; n <= 10; n++) await publish(t.redis, stream, job(slow, "bad.test", n));
    await waitFor(() => held.length >= SCANS_PER_ORG, "the slow organization's scans to reach its site", { timeoutMs: 20_000 });
    // Behind ten stalled scans in the stream; the scanner has eight slots.
    const reply = await request(t.redis, t.keys, stream, job(other, "good.test", 1), 20_000, scanReplySchema);
    expect(reply.ok).toBe(true);
    // Only the slow organization's share of slots ever reached its site.
    expect(held).toHaveLength(SCANS_PER_ORG);
    releasing = true;
    for (const res of held.splice(0)) res.writeHead(200, { "content-type": "text/html" }).end(PAGE);
    await waitFor(
      async () => Number((await db.pool.query("SELECT count(*) FROM scans WHERE org_id = $1", [slow])).rows[0].count) === 20,
      "all ten scans stored",
      { timeoutMs: 30_000 },
    );
  });
});
