import http from "node:http";
import https from "node:https";
import net from "node:net";
import { pinnedLookup } from "../../../shared/platform/net/outbound/ssrf.js";
import { trustedCas } from "../../../shared/platform/net/outbound/trust.js";
import type { SiemTarget } from "../../../shared/events/index.js";
import { guardedAddress, type PushNetwork } from "./guard.js";

/** Bytes of a collector's answer kept (an Elasticsearch `_bulk` answer of 1000 items fits). */
const ANSWER_LIMIT = 4 * 1024 * 1024;

export interface PostAnswer {
  status: number;
  body: string;
}

/** A failure a retry may fix; `status` when the collector answered. */
export class DeliveryError extends Error {
  override readonly name = "DeliveryError";
  constructor(
    message: string,
    readonly status?: number,
  ) {
    super(message);
  }
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
  const { address, family } = await guardedAddress(target.host, network);
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
      const answer = () => ({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString("utf8") });
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
    request.on("error", (error) => settle({ error: error instanceof DeliveryError ? error : new DeliveryError(error.message) }));
    request.end(body);
  });
}

/** 2xx or a DeliveryError naming the status and the start of the answer. */
export function expectSuccess(answer: PostAnswer, what: string): void {
  if (answer.status >= 200 && answer.status < 300) return;
  throw new DeliveryError(`${what} answered ${answer.status}: ${answer.body.slice(0, 200)}`, answer.status);
}
