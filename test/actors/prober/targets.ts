import http from "node:http";
import type { AddressInfo } from "node:net";

/**
 * Local HTTP targets for the prober: `/up` answers 200 at once, `/slow` after `slowMs`,
 * `/down` 503 (or 200 once `recover()` is called), `/redirect` 302 to `/up`. Each path
 * counts the requests it received, so a test can tell whether a check was made twice.
 */
export interface Targets {
  readonly base: string;
  hits(path: string): number;
  recover(): void;
  stop(): Promise<void>;
}

export async function startTargets(slowMs: number): Promise<Targets> {
  const hits = new Map<string, number>();
  let recovered = false;
  const server = http.createServer((request, response) => {
    const path = (request.url ?? "/").split("?")[0];
    hits.set(path, (hits.get(path) ?? 0) + 1);
    if (path === "/up") response.writeHead(200, { "content-type": "text/plain" }).end("ok");
    else if (path === "/slow") setTimeout(() => response.writeHead(200).end("slow"), slowMs);
    else if (path === "/down") response.writeHead(recovered ? 200 : 503).end(recovered ? "ok" : "down");
    else if (path === "/redirect") response.writeHead(302, { location: "/up" }).end();
    else response.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    base: `http://127.0.0.1:${port}`,
    hits: (path) => hits.get(path) ?? 0,
    recover: () => {
      recovered = true;
    },
    stop: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
