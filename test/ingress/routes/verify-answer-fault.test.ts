import { describe, expect, it } from "vitest";
import type { IngressDeps } from "../../../ingress/deps.js";
import { verify } from "../../../ingress/routes/verify.js";
import type { HttpRequest } from "../../../ingress/types.js";
import type { Enforced } from "../../../shared/verify/index.js";

/**
 * verify makes its answer inside the enforcer's callback, which the counting batch calls for
 * every call of a script run in one loop: a fault while making one answer must become that
 * call's rejection, never an exception thrown into the batch (the batch's other calls would
 * never be answered).
 */
describe("verify's answer made in the enforcer's callback", () => {
  const request: HttpRequest = {
    method: "POST",
    path: "/api/v1/verify.php",
    query: "",
    headers: { "content-type": "application/json" },
    headerOrder: ["content-type"],
    body: Buffer.from(JSON.stringify({ key: "ak_live_abcdefghijklmnopqrstuvwxyz012345", domain: "shop.example" })),
    remoteAddress: "127.0.0.1",
    requestId: "r1",
    startedMs: 0,
  };

  it("a fault while making the answer rejects the call and does not throw into the caller of the callback", async () => {
    let resolveThrew: unknown = null;
    const deps = {
      clock: { now: () => 1_800_000_000_000 },
      enforcer: {
        judgeCall(_call: unknown, _options: unknown, resolve: (enforced: Enforced) => void) {
          // A pass whose snapshot cannot be answered from: making the answer throws.
          try {
            resolve({ ok: true, prepared: null, snapshot: null, call: null } as unknown as Enforced);
          } catch (error) {
            resolveThrew = error;
          }
        },
      },
    } as unknown as IngressDeps;
    const reply = verify(request, deps);
    expect(reply).toBeInstanceOf(Promise);
    await expect(reply).rejects.toBeInstanceOf(TypeError);
    expect(resolveThrew).toBeNull();
  });

  it("a refusal is answered from the callback", async () => {
    const deps = {
      clock: { now: () => 1_800_000_000_000 },
      enforcer: {
        judgeCall(_call: unknown, _options: unknown, resolve: (enforced: Enforced) => void) {
          resolve({ ok: false, reason: "invalid_key", prepared: null });
        },
      },
    } as unknown as IngressDeps;
    const reply = await verify(request, deps);
    expect(reply.status).toBe(401);
    expect((reply.body as { reason: string }).reason).toBe("invalid_key");
  });
});
