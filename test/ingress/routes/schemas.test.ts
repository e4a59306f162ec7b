import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestGateway, type TestGateway } from "../../helpers/gateway.js";

let gw: TestGateway;
beforeAll(async () => {
  gw = await startTestGateway("schemas");
});
afterAll(async () => {
  await gw?.stop();
});

describe("public parameters are checked against their schemas", () => {
  it.each(["verify", "content", "secret", "botcheck", "scan"])(
    "%s.php refuses a structured or oversized key with 400 bad_request",
    async (name) => {
      const bodies: Record<string, unknown>[] = [{ key: { nested: true } }, { key: ["a"] }, { key: "k".repeat(257) }];
      // botcheck takes its domain from the page's Origin, not from a parameter.
      if (name !== "botcheck") bodies.push({ key: "ak_live_x", domain: "d".repeat(2049) });
      for (const body of bodies) {
        const res = await gw.call(`/api/v1/${name}.php`, { method: "POST", body });
        expect(res.status, `${name} ${JSON.stringify(body).slice(0, 40)}`).toBe(400);
        expect(res.body.reason).toBe("bad_request");
      }
    },
  );

  it("accepts numbers and booleans where forms would carry strings, and ignores unknown parameters", async () => {
    const res = await gw.call("/api/v1/verify.php", {
      method: "POST",
      body: { key: "ak_live_unknown", nonce: 12345, extra: { any: "thing" } },
    });
    expect(res.status).toBe(401);
    expect(res.body.reason).toBe("invalid_key");
  });
});
