import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { registerPublicRoutes } from "../../../ingress/routes/index.js";
import { startTestGateway, type TestGateway } from "../../helpers/gateway.js";
import { clientSetup, usedOf } from "./verify-fixtures.js";

/**
 * HEAD on the endpoints that judge a key (docs/security.md, "Input handling"): 405 with
 * `Allow: GET, POST`, and nothing charged. The endpoints are read from the route table:
 * every path answering both GET and POST.
 */

let gw: TestGateway;
beforeAll(async () => {
  gw = await startTestGateway("head");
});
afterAll(async () => {
  await gw?.stop();
});

function gatedPaths(): string[] {
  const table: { method: string; path: string }[] = [];
  registerPublicRoutes((method, path) => table.push({ method, path }));
  const answers = (method: string, path: string) => table.some((r) => r.method === method && r.path === path);
  return [...new Set(table.map((r) => r.path))].filter((path) => answers("GET", path) && answers("POST", path));
}

describe("HEAD on an endpoint that judges a key", () => {
  it("covers every endpoint of interface.md that takes GET or POST", () => {
    const paths = gatedPaths();
    for (const name of ["verify", "content", "botcheck", "scan", "events", "activity", "assignments"]) {
      expect(paths).toContain(`/api/v1/${name}.php`);
      expect(paths).toContain(`/api/v1/${name}`);
    }
  });

  it("is 405 with Allow: GET, POST and charges nothing, while GET with the same key is charged", async () => {
    // A server key passes the kind requirement of every endpoint: a HEAD answered like GET would be charged.
    const made = await clientSetup(gw, { kind: "server" }, { plan: "enterprise" });
    const query = { key: made.key, domain: "example.com" };
    for (const path of gatedPaths()) {
      const before = await usedOf(gw, made.orgId);
      const head = await gw.call(path, { method: "HEAD", query });
      expect([path, head.status, head.headers.get("allow")]).toEqual([path, 405, "GET, POST"]);
      expect([path, await usedOf(gw, made.orgId)]).toEqual([path, before]);
      const get = await gw.call(path, { method: "GET", query });
      expect([path, get.status < 500, await usedOf(gw, made.orgId)]).toEqual([path, true, before + 1]);
    }
  });
});
