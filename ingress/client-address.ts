import { compileList, listHas, parseAddress, type AddressList } from "../shared/enforcement/ip.js";

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
 * the last trusted address reached stands: nothing further can be vouched for.
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
    let client = connecting;
    const hops = hopsOf(raw);
    for (let i = hops.length - 1; i >= 0; i--) {
      const address = parseAddress(hops[i]);
      if (address === null) return client;
      client = address.toString();
      if (!listHas(trusted, address)) return client;
    }
    return client;
  };
}

/** `X-Forwarded-For: client, proxy1, proxy2` (several headers arrive joined by ", "). */
function forwardedForHops(raw: string): string[] {
  return raw.split(",").map((hop) => stripPort(hop.trim()));
}

/** RFC 7239: `Forwarded: for=192.0.2.60;proto=http, for="[2001:db8::17]:4711"`. */
function forwardedHops(raw: string): string[] {
  const hops: string[] = [];
  for (const element of splitOutsideQuotes(raw, ",")) {
    let hop = "";
    for (const pair of splitOutsideQuotes(element, ";")) {
      const eq = pair.indexOf("=");
      if (eq < 0 || pair.slice(0, eq).trim().toLowerCase() !== "for") continue;
      hop = stripPort(pair.slice(eq + 1).trim().replace(/^"(.*)"$/, "$1"));
    }
    // An element without `for=` is a hop that names no one: it must end the walk, not vanish.
    hops.push(hop);
  }
  return hops;
}

function splitOutsideQuotes(text: string, separator: string): string[] {
  const parts: string[] = [];
  let current = "";
  let quoted = false;
  for (const char of text) {
    if (char === '"') quoted = !quoted;
    if (char === separator && !quoted) {
      parts.push(current);
      current = "";
    } else current += char;
  }
  parts.push(current);
  return parts;
}

/** `[v6]:port` → `v6`; `v4:port` → `v4`; a bare IPv6 address is left alone. */
function stripPort(hop: string): string {
  const bracketed = /^\[([^\]]*)\](?::\d+)?$/.exec(hop);
  if (bracketed) return bracketed[1];
  const v4 = /^(\d{1,3}(?:\.\d{1,3}){3}):\d+$/.exec(hop);
  return v4 ? v4[1] : hop;
}
