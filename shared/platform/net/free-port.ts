import { createServer } from "node:net";

/**
 * A TCP port free on `host` right now (bind port 0, read it, close). Another process may take it
 * before the caller binds it; callers bind at once (the supervisor's shared ingress port, test
 * servers, the bench's metrics listener).
 */
export function freePort(host = "127.0.0.1"): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, host, () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}
