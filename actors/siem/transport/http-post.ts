import http from "node:http";
import https from "node:https";
import net from "node:net";
import { pinnedLookup } from "../../../shared/platform/net/outbound/ssrf.js";
import { trustedCas } from "../../../shared/platform/net/outbound/trust.js";
import type { SiemTarget } from "../../../shared/events/index.js";
import { connectionError, DeliveryError, guardedAddress, type PushNetwork } from "./guard.js";

/** Bytes of a collector's answer kept (an Elasticsearch `_bulk` answer of 1000 items fits). */
const ANSWER_LIMIT = 4 * 1024 * 1024;

/** Characters of an answer quoted in an error: to the organization only from a public address (expectSuccess). */
const QUOTED_CHARS = 200;

export interface PostAnswer {
  status: number;
  body: string;
  /** The address connected to is public under the default policy (guard.ts, `isPublic`): its words may be quoted. */
  isPublic: boolean;
}

/** POST through the SSRF guard, connecting to the checked address; redirects are not followed. */
export async function postGuarded(
  target: SiemTarget,
  headers: Record<string, string>,
  body: string,
  network: PushNetwork,
): Promise<PostAnswer> {
  // The push's deadline covers the address lookup too (`timeout` below ends only a silent socket).
  const deadlineMs = network.timeoutMs * 2;
  const startedAt = performance.now();
  const { address, family, isPublic } = await guardedAddress(target.host, network);
  const secure = target.protocol === "https";
  const options: https.RequestOptions = {
    method: "POST",
    host: target.host,
    port: target.port,
    path: target.path || "/",
    headers: { ...headers, "content-length": String(Buffer.byteLength(body)), "user-agent": "access-gateway-siem/1.0" },
    lookup: pinnedLookup(address, family),
    timeout: network.timeoutMs,
    agent: false,
  };
  if (secure) {
    options.servername = net.isIP(target.host) ? undefined : target.host;
    if (network.caPem) options.ca = trustedCas(network.caPem);
  }
  // `timeout` above ends a silent socket; the deadline ends the whole push, however the
  // collector paces its bytes (one every few seconds, or an answer without end, would hold the
  // push, and the loop or the shared test worker waiting on it, for good).
  const leftMs = deadlineMs - (performance.now() - startedAt);
  if (leftMs <= 0) throw new DeliveryError(`no complete answer within ${deadlineMs} ms`);
  return new Promise<PostAnswer>((resolve, reject) => {
    let settled = false;
    const settle = (outcome: { answer: PostAnswer } | { error: DeliveryError }) => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      if ("answer" in outcome) resolve(outcome.answer);
      else reject(outcome.error);
    };
    const request = (secure ? https : http).request(options, (response) => {
      const chunks: Buffer[] = [];
      let size = 0;
      const answer = () => ({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString("utf8"), isPublic });
      response.on("data", (chunk: Buffer) => {
        size += chunk.length;
        if (size <= ANSWER_LIMIT) {
          chunks.push(chunk);
          return;
        }
        // Past the limit nothing more is kept: the answer so far stands, and the rest is not read.
        settle({ answer: answer() });
        request.destroy();
      });
      response.on("end", () => settle({ answer: answer() }));
      response.on("error", (error) => settle({ error: new DeliveryError(`reading the answer failed: ${error.message}`) }));
    });
    const deadline = setTimeout(() => {
      settle({ error: new DeliveryError(`no complete answer within ${deadlineMs} ms`) });
      request.destroy();
    }, leftMs);
    request.on("timeout", () => request.destroy(new DeliveryError(`no answer within ${network.timeoutMs} ms`)));
    request.on("error", (error) => settle({ error: connectionError(error, isPublic) }));
    request.end(body);
  });
}

/**
 * 2xx, or a DeliveryError naming the status, and the start of the answer when the collector
 * is at a public address. A collector inside an OUTBOUND_ALLOW_CIDRS block may be any service
 * there an organization's admin chose to name: its words go to the log, never to the
 * organization (`last_error`, the test event's reply), or the pusher would read internal
 * services for it.
 */
export function expectSuccess(answer: PostAnswer, what: string): void {
  if (answer.status >= 200 && answer.status < 300) return;
  const quoted = `${what} answered ${answer.status}: ${answer.body.slice(0, QUOTED_CHARS)}`;
  if (answer.isPublic) throw new DeliveryError(quoted, { status: answer.status });
  throw new DeliveryError(`${what} answered ${answer.status}`, { status: answer.status, logDetail: quoted });
}
