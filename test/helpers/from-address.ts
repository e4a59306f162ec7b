import { request } from "node:http";

/**
 * A JSON POST from a chosen loopback source address (127.0.0.0/8 all reach the loopback
 * interface on Linux): how the tests play several callers at different addresses.
 */
export function postFrom(
  url: string,
  localAddress: string,
  path: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: any; headers: Record<string, string | string[] | undefined> }> {
  const payload = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const target = new URL(path, url);
    const req = request(
      {
        host: target.hostname,
        port: target.port,
        path: `${target.pathname}${target.search}`,
        method: "POST",
        localAddress,
        headers: { "content-type": "application/json", "content-length": Buffer.byteLength(payload), ...headers },
        agent: false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8");
          let parsed: unknown = text;
          try {
            parsed = JSON.parse(text);
          } catch {
            /* not JSON */
          }
          resolve({ status: res.statusCode ?? 0, body: parsed, headers: res.headers });
        });
      },
    );
    req.on("error", reject);
    req.end(payload);
  });
}
