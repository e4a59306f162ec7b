import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestGateway, waitFor, type TestGateway } from "../../helpers/gateway.js";
import { get, openRaw, post, rawExchange } from "../../helpers/raw-http.js";
import { clientSetup, makeKey, type MadeKey } from "../routes/verify-fixtures.js";
import { freePort } from "../../../shared/platform/net/free-port.js";

/**
 * The documented deployment (docs/decisions.md, HTTP): nginx in front of the ingress with
 * the proxy settings of docs/operations.md. nginx speaks HTTP/1.0, pipelining and folded
 * headers with the callers and one request at a time over HTTP/1.1 with the ingress; the
 * ingress trusts it (TRUSTED_PROXIES) for the client address. The config below is the one
 * the docs show, with paths and ports filled in.
 */

function nginxConfig(options: { prefix: string; listen: number; upstream: number }): string {
  return `worker_processes 1;
pid ${options.prefix}/nginx.pid;
error_log ${options.prefix}/error.log warn;
events { worker_connections 512; }
http {
  access_log off;
  client_body_temp_path ${options.prefix}/body;
  proxy_temp_path ${options.prefix}/proxy;
  upstream gateway {
    server 127.0.0.1:${options.upstream};
    keepalive 32;
  }
  server {
    listen 127.0.0.1:${options.listen};
    client_max_body_size 256k;
    location / {
      proxy_pass http://gateway;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host $host;
      proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
      proxy_set_header Forwarded "";
      proxy_hide_header uWebSockets;
    }
  }
}
`;
}

let gw: TestGateway;
let nginx: ChildProcess;
let prefix: string;
let front: string;
let made: MadeKey;
beforeAll(async () => {
  gw = await startTestGateway("nginx", { TRUSTED_PROXIES: "127.0.0.1" });
  made = await clientSetup(gw);
  prefix = mkdtempSync(join(tmpdir(), "gw-nginx-"));
  const listen = await freePort();
  writeFileSync(join(prefix, "nginx.conf"), nginxConfig({ prefix, listen, upstream: gw.ingress.port }));
  nginx = spawn("nginx", ["-p", prefix, "-c", join(prefix, "nginx.conf"), "-e", join(prefix, "error.log"), "-g", "daemon off;"], {
    stdio: "ignore",
  });
  front = `http://127.0.0.1:${listen}`;
  await waitFor(
    async () => {
      try {
        return (await rawExchange(front, get("/healthz"), 1, { timeoutMs: 1000 })).responses[0]?.status === 200;
      } catch {
        return false;
      }
    },
    10_000,
    50,
  ).catch((error: unknown) => {
    throw new Error(`nginx did not come up: ${String(error)}; ${readFileSync(join(prefix, "error.log"), "utf8")}`);
  });
});
afterAll(async () => {
  nginx?.kill("SIGTERM");
  await gw?.stop();
  if (prefix) rmSync(prefix, { recursive: true, force: true });
});

const verifyBody = () => JSON.stringify({ key: made.key, domain: "example.com" });

describe("behind nginx with the documented settings", () => {
  it("pipelined requests that wait on Redis are all answered, in order, GET and POST mixed", async () => {
    const payload =
      post("/api/v1/verify.php", verifyBody()) +
      get("/nope") +
      get(`/api/v1/verify.php?key=${made.key}&domain=example.com`) +
      get("/healthz") +
      post("/api/v1/verify.php", "{}");
    const answer = await rawExchange(front, payload, 5);
    expect(answer.responses.map((r) => r.status)).toEqual([200, 404, 200, 200, 400]);
    expect(JSON.parse(answer.responses[0]?.body ?? "{}").authorized).toBe(true);
  });

  it("answers HTTP/1.0 callers", async () => {
    const answer = await rawExchange(front, "GET /healthz HTTP/1.0\r\nHost: t\r\n\r\n", 1);
    expect(answer.responses.map((r) => [r.status, r.body])).toEqual([[200, '{"ok":true}']]);
  });

  it("the proxy hides the uWebSockets header the prebuilt ingress writes on every answer", async () => {
    expect((await fetch(`${gw.url}/healthz`)).headers.get("uwebsockets")).toBe("20");
    const proxied = await fetch(`${front}/healthz`);
    expect(proxied.status).toBe(200);
    expect(proxied.headers.get("uwebsockets")).toBeNull();
  });

  it("refuses an obs-folded header with 400", async () => {
    const answer = await rawExchange(front, "GET /healthz HTTP/1.1\r\nHost: t\r\nX-Fold: a\r\n  b\r\n\r\n", 1);
    expect(answer.responses.map((r) => r.status)).toEqual([400]);
  });

  it("the ingress judges the caller nginx names, not nginx", async () => {
    const allowed = await makeKey(gw, made.orgId, { ip_allow: ["127.0.0.2"] });
    const from = async (local: string) => {
      const socket = await openRaw(front, local);
      const answer = await rawExchange(front, post("/api/v1/verify.php", JSON.stringify({ key: allowed.key, domain: "example.com" })), 1, {
        socket,
      });
      socket.destroy();
      return JSON.parse(answer.responses[0]?.body ?? "{}").reason as string;
    };
    expect(await from("127.0.0.2")).toBe("ok");
    expect(await from("127.0.0.3")).toBe("ip_not_allowed");
  });
});
