import { connect, type Socket } from "node:net";

/**
 * Raw HTTP/1.x over one TCP connection, for conformance tests: what a client sends is
 * written byte for byte; what comes back is split into responses (Content-Length framed).
 */

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

export interface RawExchange {
  responses: RawResponse[];
  /** Bytes after the last complete response (a partial one), if any. */
  rest: string;
  /** The server closed the connection. */
  closed: boolean;
}

export function parseResponses(text: string): { responses: RawResponse[]; rest: string } {
  const responses: RawResponse[] = [];
  let rest = text;
  for (;;) {
    const end = rest.indexOf("\r\n\r\n");
    if (end < 0) break;
    const [statusLine = "", ...lines] = rest.slice(0, end).split("\r\n");
    const headers: Record<string, string> = {};
    for (const line of lines) {
      const colon = line.indexOf(":");
      headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
    }
    const length = Number(headers["content-length"] ?? "0");
    if (rest.length < end + 4 + length) break;
    responses.push({ status: Number(statusLine.split(" ")[1]), headers, body: rest.slice(end + 4, end + 4 + length) });
    rest = rest.slice(end + 4 + length);
  }
  return { responses, rest };
}

export function openRaw(url: string, localAddress?: string): Promise<Socket> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: hostname, port: Number(port), localAddress }, () => resolve(socket));
    socket.once("error", reject);
  });
}

/**
 * Sends `payload` (one or more requests) and collects answers until `expect` responses
 * arrived or the server closed the connection. Bounded: a server that neither answers nor
 * closes fails the test after `timeoutMs`.
 */
export async function rawExchange(
  url: string,
  payload: string | Buffer,
  expect: number,
  options: { timeoutMs?: number; socket?: Socket } = {},
): Promise<RawExchange> {
  const socket = options.socket ?? (await openRaw(url));
  return new Promise((resolve, reject) => {
    let text = "";
    let closed = false;
    const finish = () => {
      clearTimeout(timer);
      socket.off("data", onData);
      socket.off("close", onClose);
      const parsed = parseResponses(text);
      resolve({ ...parsed, closed });
    };
    const onData = (chunk: Buffer) => {
      text += chunk.toString("latin1");
      if (parseResponses(text).responses.length >= expect) finish();
    };
    const onClose = () => {
      closed = true;
      finish();
    };
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`rawExchange: no ${expect} answers and no close in time; got ${JSON.stringify(text.slice(0, 300))}`));
    }, options.timeoutMs ?? 5000);
    socket.on("data", onData);
    socket.on("close", onClose);
    socket.on("error", () => undefined);
    socket.write(payload);
  });
}

export const get = (path: string, extra = "") => `GET ${path} HTTP/1.1\r\nHost: test\r\n${extra}\r\n`;

export const post = (path: string, body: string, extra = "") =>
  `POST ${path} HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n${extra}\r\n${body}`;
