import { compileList, listHas, parseAddress, type AddressList } from "../shared/verify/index.js";

/**
 * Who is calling (docs/security.md, item 7). Behind a load balancer every connection
 * comes from the balancer, so its forwarding header must name the client; but anyone can
 * send that header, so it is read only when the connecting address is a trusted proxy
 * (`TRUSTED_PROXIES`), and only the header those proxies write (`TRUSTED_PROXY_HEADER`):
 * reading both would let a caller add the one the proxy passes through untouched.
 *
 * The hops are walked from the right (the proxy next to us appended last), skipping
 * trusted proxies; the first untrusted hop is the client. Hops left of it were written by
 * the client itself and prove nothing. When every hop is a trusted proxy the leftmost is
 * the client; a hop that is no address (`unknown`, `_hidden`, garbage) ends the walk and
 * the last trusted address reached stands: nothing further can be vouched for. A
 * `Forwarded` header that breaks RFC 7239's grammar is read element by element, and an
 * element that breaks it names no one (forwardedHops).
 */

export type ClientAddressResolver = (connecting: string, headers: Readonly<Record<string, string>>) => string;

export function createClientAddressResolver(options: {
  trustedProxies: readonly string[];
  header: "x-forwarded-for" | "forwarded";
}): ClientAddressResolver {
  const trusted: AddressList = compileList(options.trustedProxies);
  const isTrusted = (address: string) => listHas(trusted, parseAddress(address));
  if (trusted.size === 0) return (connecting) => connecting;
  const hopsOf = options.header === "forwarded" ? forwardedHops : forwardedForHops;
  return (connecting, headers) => {
    if (!isTrusted(connecting)) return connecting;
    const raw = headers[options.header];
    if (raw === undefined) return connecting;
    const hops = hopsOf(raw);
    let client = connecting;
    for (let i = hops.length - 1; i >= 0; i--) {
      const address = parseAddress(hops[i]);
      if (address === null) return client;
      client = address.toString();
      if (!listHas(trusted, address)) return client;
    }
    return client;
  };
}

/**
 * The hops of a `Forwarded` header: by RFC 7239's grammar (parseForwarded) when the header
 * keeps it; otherwise element by element, each piece between commas read alone and one that
 * breaks the grammar naming no one (""). A proxy appends its element after a comma and writes
 * none inside it, so the pieces right of the client's own text are exactly the proxies'
 * elements: an unbalanced quote in the client's part can neither swallow them nor, by making
 * the whole header malformed, turn the caller into the trusted proxy (whose address no deny
 * list or country rule names).
 */
function forwardedHops(raw: string): string[] {
  const whole = parseForwarded(raw);
  if (whole !== null) return whole;
  const hops: string[] = [];
  for (const piece of raw.split(",")) {
    const element = parseForwarded(piece);
    if (element === null) hops.push("");
    else hops.push(...element);
  }
  return hops;
}

/** `X-Forwarded-For: client, proxy1, proxy2` (several headers arrive joined by ", "). */
function forwardedForHops(raw: string): string[] {
  return raw.split(",").map((hop) => stripPort(hop.trim()));
}

const HTAB = 0x09;
const SP = 0x20;
const DQUOTE = 0x22;
const COMMA = 0x2c;
const SEMICOLON = 0x3b;
const EQUALS = 0x3d;
const BACKSLASH = 0x5c;

/** RFC 9110 tchar: ALPHA, DIGIT and ``!#$%&'*+-.^_`|~``. */
const TCHARS = new Uint8Array(128);
for (const c of "!#$%&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz") TCHARS[c.charCodeAt(0)] = 1;

function isTchar(c: number): boolean {
  return c < 128 && TCHARS[c] === 1;
}

/** qdtext: HTAB, SP, VCHAR but `"` and `\`, obs-text (a header's bytes above 0x7F, however decoded). */
function isQdtext(c: number): boolean {
  return c === HTAB || c === SP || c === 0x21 || (c >= 0x23 && c <= 0x5b) || (c >= 0x5d && c <= 0x7e) || c >= 0x80;
}

/** What may follow `\` in a quoted-pair: HTAB, SP, VCHAR, obs-text. */
function isQuotedPairChar(c: number): boolean {
  return c === HTAB || (c >= 0x20 && c <= 0x7e) || c >= 0x80;
}

/**
 * RFC 7239 `Forwarded: for=192.0.2.60;proto=http, for="[2001:db8::17]:4711"`, read by its
 * grammar (RFC 7239 section 4 over RFC 9110's token and quoted-string, backslash escapes
 * included): elements split by `,`, pairs by `;`, whitespace allowed around both. One hop
 * per element: its `for` node with any port dropped, "" for an element without `for` (a hop
 * that names no one ends the walk, it must not vanish); empty list elements are skipped.
 *
 * null for a header that breaks the grammar (an unterminated or stray quote, a pair without
 * `=`, a parameter twice in one element, a character outside a token or quoted-string...).
 * The proxy appended its element last, so no reading of a malformed header as a whole may
 * stand: the client's own text would decide where that element starts (an unbalanced quote
 * in the client's element once swallowed the proxy's). forwardedHops reads such a header
 * element by element instead.
 */
export function parseForwarded(raw: string): string[] | null {
  const hops: string[] = [];
  const n = raw.length;
  let i = 0;
  const skipSpace = () => {
    while (i < n && (raw.charCodeAt(i) === SP || raw.charCodeAt(i) === HTAB)) i++;
  };
  const readToken = (): string => {
    const start = i;
    while (i < n && isTchar(raw.charCodeAt(i))) i++;
    return raw.slice(start, i);
  };
  /** After the opening quote; null when the string never closes or holds a forbidden character. */
  const readQuoted = (): string | null => {
    let value = "";
    let run = i;
    while (i < n) {
      const c = raw.charCodeAt(i);
      if (c === DQUOTE) {
        value += raw.slice(run, i);
        i++;
        return value;
      }
      if (c === BACKSLASH) {
        value += raw.slice(run, i);
        if (i + 1 >= n || !isQuotedPairChar(raw.charCodeAt(i + 1))) return null;
        value += raw[i + 1];
        i += 2;
        run = i;
        continue;
      }
      if (!isQdtext(c)) return null;
      i++;
    }
    return null;
  };
  for (;;) {
    // One element: [pair] *( ";" [pair] ).
    const names: string[] = [];
    let node: string | undefined;
    let empty = true;
    for (;;) {
      skipSpace();
      const name = readToken().toLowerCase();
      if (name !== "") {
        if (raw.charCodeAt(i) !== EQUALS) return null;
        i++;
        let value: string | null;
        if (raw.charCodeAt(i) === DQUOTE) {
          i++;
          value = readQuoted();
        } else {
          value = readToken();
          if (value === "") value = null;
        }
        if (value === null || names.includes(name)) return null;
        names.push(name);
        if (name === "for") node = value;
        empty = false;
        skipSpace();
      }
      if (i < n && raw.charCodeAt(i) === SEMICOLON) {
        i++;
        empty = false;
        continue;
      }
      break;
    }
    if (i < n && raw.charCodeAt(i) !== COMMA) return null;
    if (!empty) hops.push(node === undefined ? "" : stripPort(node));
    if (i >= n) return hops;
    i++;
  }
}

/** `[v6]:port` → `v6`; `v4:port` → `v4`; a bare IPv6 address is left alone. */
function stripPort(hop: string): string {
  const bracketed = /^\[([^\]]*)\](?::\d+)?$/.exec(hop);
  if (bracketed) return bracketed[1];
  const v4 = /^(\d{1,3}(?:\.\d{1,3}){3}):\d+$/.exec(hop);
  return v4 ? v4[1] : hop;
}
