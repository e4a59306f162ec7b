import { createServer, connect, type Server, type Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestGateway, waitFor, type TestGateway } from "../../helpers/gateway.js";
import { clientSetup, type MadeKey } from "./verify-fixtures.js";

/**
 * Redis goes away under a running gateway: the gateway reaches Redis through a TCP proxy
 * the test can cut. Callers must see a fault (5xx, no `authorized` field), quickly, never a
 * refusal, and correct answers again once Redis is back.
 */
let proxy: Server;
let port = 0;
let up = true;
const sockets = new Set<Socket>();
let gw: TestGateway;
let key: MadeKey;

function startProxy(listenPort: number): Promise<Server> {
  const server = createServer((client) => {
    if (!up) {
      client.destroy();
      return;
    }
    const upstream = connect(6379, "127.0.0.1");
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on("close", () => sockets.delete(s));
      s.on("error", () => {});
    }
    client.pipe(upstream).pipe(client);
  });
  return new Promise((resolve) => server.listen(listenPort, "127.0.0.1", () => resolve(server)));
}

beforeAll(async () => {
  proxy = await startProxy(0);
  const address = proxy.address();
  port = typeof address === "object" && address ? address.port : 0;
  gw = await startTestGateway("redisdown", { REDIS_URL: `redis://127.0.0.1:${port}` });
  key = await clientSetup(gw);
});

afterAll(async () => {
  up = true;
  await gw?.stop();
  proxy?.close();
});

const call = () => gw.call("/api/v1/verify.php", { body: { key: key.key, domain: "example.com" } });

describe("verify with Redis down", () => {
  it("answers a fault quickly, never a refusal, and recovers when Redis is back", async () => {
    expect((await call()).body.authorized).toBe(true);

    up = false;
    for (const s of sockets) s.destroy();
    const started = Date.now();
    const down = await call();
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(down.status).toBeGreaterThanOrEqual(500);
    expect(down.body).not.toHaveProperty("authorized");
    expect(down.body.ok).toBe(false);

    up = true;
    const back = await waitFor(
      async () => {
        const res = await call();
        return res.status === 200 ? res : null;
      },
      15_000,
      200,
    );
    expect(back.body.authorized).toBe(true);
  }, 40_000);
});
