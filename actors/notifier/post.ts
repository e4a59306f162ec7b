import http from "node:http";
import https from "node:https";
import net from "node:net";
import type { OutboundPolicy } from "../../shared/platform/net/address-policy.js";
import { createDnsClient } from "../../shared/platform/net/outbound/dns-client.js";
import { dnsHostResolver, pinnedLookup, resolveGuarded, unreachableHost } from "../../shared/platform/net/outbound/ssrf.js";
import { trustedCas } from "../../shared/platform/net/outbound/trust.js";

export interface PostOptions {
  timeoutMs: number;
  /** The `webhook` policy: private space only inside OUTBOUND_ALLOW_CIDRS. */
  outbound: OutboundPolicy;
  resolver: { host: string; port: number } | null;
  /** Extra trusted CA (SCAN_CA_FILE), for receivers with a private certificate in tests. */
  caPem: string | null;
}

/**
 * The receiver's status, or why there was none: `error` is what the organization reads
 * (`last_error`), `logDetail` what it must not (why the SSRF guard refused), for the log.
 */
export type PostResult = { status: number } | { error: string; refused: boolean; logDetail?: string };

const RESPONSE_LIMIT = 64 * 1024;

/**
 * One POST behind the scanner's SSRF guard: the name is resolved once through the
 * configured resolver, a loopback, private or link-local address is refused unless
 * OUTBOUND_ALLOW_CIDRS lists it (a metadata address always), and the socket connects to
 * that checked address (pinned: no second resolution a rebinding record could answer
 * differently). Redirects are not followed.
 */
export async function postJson(url: string, body: string, headers: Record<string, string>, options: PostOptions): Promise<PostResult> {
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    return { error: "not a URL", refused: true };
  }
  if (target.protocol !== "http:" && target.protocol !== "https:") return { error: `unsupported scheme ${target.protocol}`, refused: true };
  const host = target.hostname.replace(/^\[(.*)\]$/, "$1");
  const verdict = await resolveGuarded(host, options.outbound, dnsHostResolver(createDnsClient(options.resolver, options.timeoutMs)));
  // A name that does not resolve and one that resolves inside the service's network read the
  // same and are retried alike (a name may come to resolve, or to a public address): telling
  // them apart, by words or by a delivery failed at once, would say which internal names exist.
  if (!verdict.ok) return { error: unreachableHost(host), refused: false, logDetail: `SSRF guard refused ${host}: ${verdict.detail}` };
  const secure = target.protocol === "https:";
  return new Promise((resolve) => {
    let settled = false;
    const done = (result: PostResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      request.destroy();
      resolve(result);
    };
    const request = (secure ? https : http).request(
      {
        host: verdict.address,
        port: target.port === "" ? (secure ? 443 : 80) : Number(target.port),
        path: `${target.pathname}${target.search}`,
        method: "POST",
        agent: false,
        lookup: pinnedLookup(verdict.address, verdict.family),
        headers: { ...headers, host: target.host, "content-length": String(Buffer.byteLength(body)) },
        ...(secure ? { servername: net.isIP(host) ? undefined : host, ...(options.caPem ? { ca: trustedCas(options.caPem) } : {}) } : {}),
      },
      (response) => {
        let size = 0;
        response.on("data", (chunk: Buffer) => {
          size += chunk.length;
          if (size > RESPONSE_LIMIT) done({ status: response.statusCode ?? 0 });
        });
        response.on("end", () => done({ status: response.statusCode ?? 0 }));
        response.on("error", () => done({ status: response.statusCode ?? 0 }));
      },
    );
    const timer = setTimeout(() => done({ error: `no response within ${options.timeoutMs} ms`, refused: false }), options.timeoutMs);
    request.on("error", (error: NodeJS.ErrnoException) => done({ error: error.code ?? error.message, refused: false }));
    request.end(body);
  });
}
