#!/usr/bin/env node
import { createServer } from "node:http";
import uws from "uWebSockets.js";

/**
 * The baselines: a bare uWS server and a bare node:http server answering every request
 * with the same constant JSON body (same size as a verify answer). Run as a child:
 *   node dist/ops/bench/bare.js uws|http <body length>
 * Prints `listening on http://127.0.0.1:PORT`. The request body is read and dropped,
 * as verify would read it.
 */

function constantBody(length: number): string {
  const head = '{"authorized":true,"reason":"ok","pad":"';
  const tail = '"}';
  return head + "x".repeat(Math.max(0, length - head.length - tail.length)) + tail;
}

function startUws(body: string): void {
  const app = uws.App();
  app.any("/*", (res) => {
    res.onAborted(() => {});
    res.onData((_chunk, isLast) => {
      if (!isLast) return;
      res.cork(() => {
        res.writeStatus("200 OK");
        res.writeHeader("content-type", "application/json");
        res.writeHeader("access-control-allow-origin", "*");
        res.end(body);
      });
    });
  });
  app.listen("127.0.0.1", 0, (token) => {
    if (!token) throw new Error("uWS cannot listen");
    process.stdout.write(`listening on http://127.0.0.1:${uws.us_socket_local_port(token)}\n`);
  });
}

function startHttp(body: string): void {
  const server = createServer((req, res) => {
    req.on("data", () => {});
    req.on("end", () => {
      res.writeHead(200, {
        "content-type": "application/json",
        "access-control-allow-origin": "*",
        "content-length": Buffer.byteLength(body),
      });
      res.end(body);
    });
  });
  server.keepAliveTimeout = 60_000;
  server.listen(0, "127.0.0.1", () => {
    const address = server.address();
    const port = typeof address === "object" && address ? address.port : 0;
    process.stdout.write(`listening on http://127.0.0.1:${port}\n`);
  });
}

const [mode, length] = process.argv.slice(2);
const body = constantBody(Number(length) || 1500);
if (mode === "uws") startUws(body);
else if (mode === "http") startHttp(body);
else {
  process.stderr.write("usage: bare.js uws|http <body length>\n");
  process.exit(2);
}
process.on("SIGTERM", () => process.exit(0));
