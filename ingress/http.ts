import { randomBytes } from "node:crypto";
import ipaddr from "ipaddr.js";
import uws from "uWebSockets.js";
import type { Logger } from "../shared/platform/log.js";
import { memoize } from "../shared/platform/memo.js";
import { REASONS, type Reason } from "../shared/platform/reasons.js";
import { fault } from "./reply.js";
import { ByteParts, RequestGoneError, type Charge, type FaultHook, type HttpReply, type HttpRequest } from "./types.js";
import type { ClientAddressResolver } from "./client-address.js";

/**
 * The one place that touches uWebSockets.js. Its rules: attach onAborted first; copy
 * URL, headers and query before the first await (the request object dies with the
 * callback); copy body chunks (uWS reuses their memory); cap the body; cork every write
 * made after an await; never write to an aborted response; keep the listen socket to
 * close it on shutdown.
 *
 * The connecting address is the exception to "copy before the first await": reading it
 * crosses into uWS and allocates (about 1.5 µs, measured, a twelfth of a verify), and most
 * keys have no rule that needs it. So `request.remoteAddress` reads it from the response
 * (valid until answered or aborted) when first asked, and keeps it. A request aborted before
 * anything asked has no address to judge by: asking then throws RequestGoneError, and the
 * request is dropped unjudged and uncounted, as if it had never arrived.
 */

export const MAX_BODY_BYTES = 256 * 1024;
/** Header names and values together; more is refused 400 and the connection closed (docs/decisions.md, HTTP). */
export const MAX_HEADER_BYTES = 32 * 1024;
/** A too-large body up to this size is read and discarded after its 413; a larger one closes the connection. */
const MAX_DRAINED_BYTES = 16 * 1024 * 1024;

const EMPTY = Buffer.alloc(0);

/** Where ByteParts answers are assembled, one at a time, just before uWS copies them out. */
const scratch = { buffer: Buffer.allocUnsafe(16 * 1024) };

// Request ids: a random per-process tag and a counter, unique across processes and cheap per request.
const processTag = randomBytes(4).toString("hex");
let sequence = 0;
const nextRequestId = () => `${processTag}-${(++sequence).toString(36)}`;

export type Dispatch = (request: HttpRequest) => Promise<HttpReply> | HttpReply;

export interface HttpServer {
  readonly port: number;
  close(): void;
}

const STATUS_TEXT: Record<number, string> = {
  200: "200 OK",
  201: "201 Created",
  204: "204 No Content",
  301: "301 Moved Permanently",
  304: "304 Not Modified",
  400: "400 Bad Request",
  401: "401 Unauthorized",
  403: "403 Forbidden",
  404: "404 Not Found",
  405: "405 Method Not Allowed",
  409: "409 Conflict",
  413: "413 Payload Too Large",
  429: "429 Too Many Requests",
  500: "500 Internal Server Error",
  502: "502 Bad Gateway",
  503: "503 Service Unavailable",
  504: "504 Gateway Timeout",
};

/** The status lines as bytes: uWS takes bytes as they are, where a string is converted on every call. */
const STATUS_BYTES = new Map(Object.entries(STATUS_TEXT).map(([status, text]) => [Number(status), Buffer.from(text)]));

/**
 * A frozen header set (the routes' constant ones, e.g. verify's) as name and value bytes,
 * made once: a string handed to uWS is measured and encoded on every call.
 */
const headerBytes = new WeakMap<Record<string, string>, Buffer[]>();

function encodedHeaders(headers: Record<string, string>): Buffer[] {
  let encoded = headerBytes.get(headers);
  if (encoded === undefined) {
    encoded = [];
    for (const name in headers) encoded.push(Buffer.from(name), Buffer.from(headers[name]));
    headerBytes.set(headers, encoded);
  }
  return encoded;
}

export function refusalBody(reason: Reason): { ok: false; reason: Reason; message: string } {
  return { ok: false, reason, message: REASONS[reason].message };
}

// Connecting addresses repeat (keep-alive, proxies): remember the normalized form of recent ones.
const normalizeAddress = memoize((raw) => normalizeUncached(raw));

function normalizeUncached(raw: string): string {
  try {
    const parsed = ipaddr.parse(raw);
    if (parsed.kind() === "ipv6" && (parsed as ipaddr.IPv6).isIPv4MappedAddress()) {
      return (parsed as ipaddr.IPv6).toIPv4Address().toString();
    }
    return parsed.toString();
  } catch {
    return raw;
  }
}

interface ResponseState {
  aborted: boolean;
  /** Answered: uWS has let go of the response. */
  ended: boolean;
  head: boolean;
}

/**
 * A request as routes see it: copied out of uWS in the request callback, except the
 * address, read from the response when first asked (see the top of this file). A class, so
 * the getter sits on one prototype and every request has one shape.
 */
class UwsRequest implements HttpRequest {
  body: Buffer = EMPTY;
  fault: FaultHook | undefined = undefined;
  charged: Charge | undefined = undefined;
  private address: string | undefined;
  private id: string | undefined;

  constructor(
    readonly method: string,
    readonly path: string,
    readonly query: string,
    readonly headers: Record<string, string>,
    readonly headerOrder: string[],
    readonly startedMs: number,
    private readonly res: uws.HttpResponse,
    private readonly state: ResponseState,
    private readonly resolveClient: ClientAddressResolver,
  ) {}

  /** Made when first asked (faults and logs): most answers never name their request. */
  get requestId(): string {
    if (this.id === undefined) this.id = nextRequestId();
    return this.id;
  }

  /** Resolved once, when first asked: every rule downstream judges this one address. */
  get remoteAddress(): string {
    if (this.address === undefined) {
      if (this.state.aborted || this.state.ended) throw new RequestGoneError();
      this.address = this.resolveClient(normalizeAddress(Buffer.from(this.res.getRemoteAddressAsText()).toString("latin1")), this.headers);
    }
    return this.address;
  }
}

export function listen(options: {
  host: string;
  port: number;
  dispatch: Dispatch;
  logger: Logger;
  /** Resolves the client behind trusted proxies (client-address.ts); default: the connecting address. */
  clientAddress?: ClientAddressResolver;
}): Promise<HttpServer> {
  const { dispatch, logger } = options;
  const clientAddress: ClientAddressResolver = options.clientAddress ?? ((connecting) => connecting);
  const app = uws.App();

  /** `close`: end the connection after this answer (framing errors, refused bodies). */
  const write = (res: uws.HttpResponse, state: ResponseState, reply: HttpReply, close = false) => {
    if (state.aborted || state.ended) return;
    state.ended = true;
    const parts = reply.body instanceof ByteParts;
    const text = parts || typeof reply.body === "string" || Buffer.isBuffer(reply.body);
    // Parts are copied into the one scratch buffer: uWS copies what end() is given before it returns.
    const body: string | Buffer = parts
      ? (reply.body as ByteParts).writeInto(scratch)
      : text
        ? (reply.body as string | Buffer)
        : JSON.stringify(reply.body);
    const headers = reply.headers;
    const encoded = headers !== undefined && Object.isFrozen(headers) ? encodedHeaders(headers) : null;
    res.cork(() => {
      res.writeStatus(STATUS_BYTES.get(reply.status) ?? `${reply.status} Status`);
      if (!text && headers?.["content-type"] === undefined) res.writeHeader("content-type", "application/json");
      if (encoded !== null) for (let i = 0; i < encoded.length; i += 2) res.writeHeader(encoded[i], encoded[i + 1]);
      else if (headers) for (const name in headers) res.writeHeader(name, headers[name]);
      // A HEAD answer reports the length of the body a GET would carry, and carries none.
      // (endWithoutBody with a reported length closes the connection in this uWS build.)
      if (state.head) res.writeHeader("content-length", String(Buffer.byteLength(body))).endWithoutBody();
      else res.end(body, close);
    });
  };

  /**
   * A refusal after which the connection must close (framing errors, bodies past 16 MiB). This
   * uWS build neither closes nor stops parsing on `end(body, true)` inside its parse loop: it
   * dispatches the bytes after the refused request as a next request (smuggling). Answered
   * from the next turn instead: a request parsed meanwhile finds this one pending and uWS
   * drops the connection (nothing more is dispatched); otherwise the answer goes out and
   * `end(body, true)`, now outside the parse loop, closes.
   */
  const refuseAndClose = (res: uws.HttpResponse, state: ResponseState, reply: HttpReply) => {
    setImmediate(() => write(res, state, reply, true));
  };

  app.any("/*", (res, req) => {
    const state: ResponseState = { aborted: false, ended: false, head: false };
    res.onAborted(() => {
      state.aborted = true;
    });
    const headers: Record<string, string> = {};
    const headerOrder: string[] = [];
    let headerBytes = 0;
    let lengths = 0;
    let lengthsDiffer = false;
    req.forEach((name, value) => {
      headerOrder.push(name);
      headerBytes += name.length + value.length;
      if (name === "content-length" && lengths++ > 0 && value !== headers[name]) lengthsDiffer = true;
      // A repeated header is joined; `Object.hasOwn` only when one seems repeated, so a
      // header named `constructor` is not joined to Object's (the common case costs nothing).
      const previous = headers[name];
      headers[name] = previous !== undefined && name !== "content-length" && Object.hasOwn(headers, name) ? `${previous}, ${value}` : value;
    });
    const method = req.getCaseSensitiveMethod().toUpperCase();
    state.head = method === "HEAD";
    const base = new UwsRequest(
      method,
      req.getUrl(),
      req.getQuery() ?? "",
      headers,
      headerOrder,
      performance.now(),
      res,
      state,
      clientAddress,
    );

    // RFC 9112 6.3: differing Content-Length values make the framing unknowable; uWS would
    // frame by the first and read the rest as a next request (smuggling). Refuse and close.
    if (lengthsDiffer || headerBytes > MAX_HEADER_BYTES) {
      refuseAndClose(res, state, { status: 400, body: refusalBody("bad_request") });
      return;
    }

    const answerFault = (error: unknown) => {
      if (!(error instanceof RequestGoneError)) logger.error({ err: error, requestId: base.requestId, path: base.path }, "route fault");
      // Only a dispatch without app.ts's route wrapper (which answers faults itself) gets here.
      write(res, state, fault(base.requestId, false, { reason: "internal_error" }));
    };
    const run = (body: Buffer) => {
      let reply: Promise<HttpReply> | HttpReply;
      try {
        base.body = body;
        reply = dispatch(base);
      } catch (error) {
        answerFault(error);
        return;
      }
      if (reply instanceof Promise) {
        reply.then((value) => write(res, state, value), answerFault);
      } else {
        write(res, state, reply);
      }
    };

    if (base.method === "GET" || base.method === "HEAD" || base.method === "OPTIONS") {
      run(EMPTY);
      return;
    }
    const declared = Number(headers["content-length"] ?? "0");
    if (declared > MAX_BODY_BYTES && declared <= MAX_DRAINED_BYTES) {
      // The framing is known: read the declared body into nothing, then answer. An answer
      // sent while the body still arrives is lost when the connection closes under the
      // sender (`Connection: close`): its next write meets a reset (EPIPE) before it reads.
      res.onData((_chunk, isLast) => {
        if (isLast) write(res, state, { status: 413, body: refusalBody("payload_too_large") });
      });
      return;
    }
    if (declared > MAX_DRAINED_BYTES) {
      refuseAndClose(res, state, { status: 413, body: refusalBody("payload_too_large") });
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let refused = false;
    res.onData((chunk, isLast) => {
      size += chunk.byteLength;
      if (size > MAX_BODY_BYTES) {
        // An undeclared (chunked) body past the cap: read on into nothing and answer at its
        // end, as for a declared one; past what is worth reading, answer and close.
        if (refused) return;
        if (size > MAX_DRAINED_BYTES) {
          refused = true;
          refuseAndClose(res, state, { status: 413, body: refusalBody("payload_too_large") });
        } else if (isLast) {
          refused = true;
          write(res, state, { status: 413, body: refusalBody("payload_too_large") });
        }
        chunks.length = 0;
        return;
      }
      // uWS reuses the chunk's memory after this callback: copy it.
      chunks.push(Buffer.from(Buffer.from(chunk)));
      if (isLast) run(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks));
    });
  });

  return new Promise((resolve, reject) => {
    app.listen(options.host, options.port, (token) => {
      if (!token) {
        reject(new Error(`cannot listen on ${options.host}:${options.port}`));
        return;
      }
      resolve({
        port: uws.us_socket_local_port(token),
        close: () => {
          uws.us_listen_socket_close(token);
        },
      });
    });
  });
}
