import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { ADMIN_TOKEN, startTestGateway, type TestGateway } from "../../helpers/gateway.js";

/** Every answer of an admin route, whatever its status, leaves with no-store and nosniff (common.ts `guarded`). */

let gw: TestGateway;
beforeAll(async () => {
  gw = await startTestGateway("adminheaders");
});
afterAll(async () => {
  await gw?.stop();
});

const bearer = { authorization: `Bearer ${ADMIN_TOKEN}` };

function expectAdminHeaders(headers: Headers, what: string): void {
  expect(headers.get("cache-control"), what).toBe("no-store");
  expect(headers.get("x-content-type-options"), what).toBe("nosniff");
}

describe("admin answers' headers", () => {
  it("are on successes, creations and every kind of refusal", async () => {
    const cases: [string, Awaited<ReturnType<TestGateway["call"]>>, number][] = [
      ["a read", await gw.call("/admin/v1/status/services", { headers: bearer }), 200],
      [
        "a creation",
        await gw.call("/admin/v1/orgs", { method: "POST", headers: bearer, body: { name: "Headers Ltd", plan: "starter" } }),
        201,
      ],
      ["no credentials", await gw.call("/admin/v1/status/services"), 401],
      ["a body that is not JSON", await gw.call("/admin/v1/status/incidents", { method: "POST", headers: bearer, body: "[" }), 400],
      ["a field refused", await gw.call("/admin/v1/status/incidents", { method: "POST", headers: bearer, body: { title: "" } }), 400],
      ["nothing there", await gw.call("/admin/v1/orgs/987654", { headers: bearer }), 404],
    ];
    for (const [what, answer, status] of cases) {
      expect(answer.status, what).toBe(status);
      expectAdminHeaders(answer.headers, what);
    }
  });

  it("are on the 500 of a fault thrown in a handler", async () => {
    const query = vi.spyOn(gw.ingress.deps.db, "query").mockImplementation(() => {
      throw new Error("connection terminated");
    });
    let answer: Awaited<ReturnType<TestGateway["call"]>>;
    try {
      answer = await gw.call("/admin/v1/status/services", { headers: bearer });
    } finally {
      query.mockRestore();
    }
    expect(answer.status).toBe(500);
    expect(answer.body).toMatchObject({ ok: false, reason: "internal_error" });
    expectAdminHeaders(answer.headers, "a fault");
  });
});
