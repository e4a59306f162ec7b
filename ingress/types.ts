/** What a route sees of a request: plain data, copied out of uWS before any await. */
export interface HttpRequest {
  readonly method: string;
  readonly path: string;
  readonly query: string;
  /** Lower-case header names. */
  readonly headers: Readonly<Record<string, string>>;
  /** Lower-case header names in arrival order (bot assessment reads it). */
  readonly headerOrder: readonly string[];
  readonly body: Buffer;
  /**
   * The client's address, IPv4-mapped IPv6 unwrapped: the connecting address, or behind a
   * trusted proxy the first untrusted hop of its forwarding header (client-address.ts).
   * Read from the connection when first asked (http.ts says why): asked after the client
   * went away without it having been asked before, it throws RequestGoneError.
   */
  readonly remoteAddress: string;
  readonly requestId: string;
  /** Monotonic start in milliseconds (`performance.now()`), for latency_ms and the duration metric: a number, no BigInt per request. */
  readonly startedMs: number;
  /**
   * What this request's fault answer adds, set by a route that knows it (the route wrapper
   * of app.ts answers every thrown fault and reads it): scan.php's X-RateLimit headers once
   * it knows the organization, the status resources' Retry-After.
   */
  fault?: FaultHook;
  /**
   * What the counting script counted for this call, set once it passed the gate: an answer
   * that is then a fault (5xx, thrown or returned) gives it back in the route wrapper (app.ts,
   * routes/refund.ts).
   */
  charged?: Charge;
}

/** One call the counting script counted `ok`: enough to take the count back. */
export interface Charge {
  readonly orgId: number;
  readonly keyId: number;
  readonly endpoint: string;
  /** Clock ms of the counted call. */
  readonly nowMs: number;
  readonly cycleStartMs: number;
  /** The UTC day its counting run recorded it under (CountingCall.day). */
  readonly day: string;
}

/** A route's part in its fault answer: the reason when not `unavailable`, and headers. */
export interface FaultHook {
  readonly reason?: "internal_error";
  headers?(): Promise<Record<string, string>> | Record<string, string>;
}

export interface HttpReply {
  status: number;
  headers?: Record<string, string>;
  /** An object is sent as JSON; a string, Buffer or ByteParts as is (with its content-type header). */
  body: unknown;
}

/** Buffer's own UTF-8 writer: Buffer.write without its argument checks (not in @types/node). */
type Utf8Writer = { utf8Write(text: string, offset: number): number };

/**
 * An answer in parts, sent as their bytes one after another: bytes made once and reused
 * across calls (a memoized head and tail), and the text written per call between them. The
 * HTTP layer writes them into one buffer of its own just before sending, so an answer costs
 * no buffer of its own and no flattening and encoding of one long string (http.ts).
 */
export class ByteParts {
  constructor(readonly parts: readonly (Buffer | string)[]) {}

  /** The bytes written into `scratch` (grown when too short), as a view of it valid until its next use. */
  writeInto(scratch: { buffer: Buffer }): Buffer {
    let room = 0;
    for (const part of this.parts) room += typeof part === "string" ? part.length * 3 : part.length;
    if (scratch.buffer.length < room) scratch.buffer = Buffer.allocUnsafe(Math.max(room, scratch.buffer.length * 2));
    const out = scratch.buffer;
    let at = 0;
    for (const part of this.parts) {
      if (typeof part === "string") at += (out as unknown as Utf8Writer).utf8Write(part, at);
      else {
        out.set(part, at);
        at += part.length;
      }
    }
    return out.subarray(0, at);
  }

  /** The answer as text (tests, logs); the HTTP layer uses writeInto. */
  toString(): string {
    return Buffer.concat(this.parts.map((part) => (typeof part === "string" ? Buffer.from(part) : part))).toString("utf8");
  }
}

export type RouteParams = Readonly<Record<string, string>>;

/** The client went away before anything needed its address: the request is dropped unjudged (http.ts). */
export class RequestGoneError extends Error {
  constructor() {
    super("the client went away before its address was read");
    this.name = "RequestGoneError";
  }
}
