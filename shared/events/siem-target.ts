import type { SiemKind } from "./db/siem.js";

/**
 * Where a SIEM destination's URL points, per kind. Pure: the admin API refuses a URL
 * that does not parse here (`bad_url`), the pusher connects to what it returns (after
 * the SSRF guard has resolved and checked the host).
 *
 * - `splunk_hec`, `elastic_bulk`, `http`: `http://` or `https://`. A HEC URL without a
 *   path gets `/services/collector/event`; a `_bulk` URL that does not end in `/_bulk`
 *   gets it appended (`http://es:9200` and `http://es:9200/my-index` both work).
 * - `syslog_tcp`: `syslog://`, `syslog+tcp://` or `tcp://` (plain TCP, default port 514)
 *   and `syslog+tls://` or `tls://` (TLS, RFC 5425, default port 6514).
 * Credentials in the URL are refused: the token goes in `token`, sealed at rest.
 */
export interface SiemTarget {
  protocol: "http" | "https" | "tcp" | "tls";
  /** Name or address, without IPv6 brackets. */
  host: string;
  port: number;
  /** Path and query (HTTP kinds only). */
  path: string;
}

export type TargetResult = { ok: true; target: SiemTarget } | { ok: false; detail: string };

const HTTP_PROTOCOLS: Readonly<Record<string, "http" | "https">> = { "http:": "http", "https:": "https" };
const SYSLOG_PROTOCOLS: Readonly<Record<string, "tcp" | "tls">> = {
  "syslog:": "tcp",
  "syslog+tcp:": "tcp",
  "tcp:": "tcp",
  "syslog+tls:": "tls",
  "tls:": "tls",
};

export const MAX_URL_LENGTH = 2048;

/**
 * A syslog URL's host as an http URL's host is read (IPv6 brackets taken off), or null when
 * it is not one. `syslog:` and `tcp:` are not special schemes, so WHATWG URL keeps their host
 * as typed: `0x7f.1`, `2130706433`, `127.1` and `127.0.0.1.` would stay names (refused only at
 * delivery, by DNS) where an http URL reads 127.0.0.1, which the check at creation refuses like
 * any other literal address. Upper case is lowered and percent-escapes decoded (IDNA) the same way.
 */
function canonicalHost(hostname: string): string | null {
  try {
    return new URL(`http://${hostname}`).hostname.replace(/^\[(.*)\]$/, "$1");
  } catch {
    return null;
  }
}

export function parseTarget(kind: SiemKind, raw: string): TargetResult {
  if (raw.length === 0 || raw.length > MAX_URL_LENGTH) return { ok: false, detail: `the URL must have 1 to ${MAX_URL_LENGTH} characters` };
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, detail: "not a URL" };
  }
  if (url.username !== "" || url.password !== "") return { ok: false, detail: "credentials go in token, not in the URL" };
  const host = url.hostname.replace(/^\[(.*)\]$/, "$1");
  if (host === "") return { ok: false, detail: "the URL names no host" };
  if (kind === "syslog_tcp") {
    const protocol = SYSLOG_PROTOCOLS[url.protocol];
    if (!protocol) return { ok: false, detail: "syslog_tcp takes syslog://, syslog+tcp://, tcp://, syslog+tls:// or tls://" };
    const canonical = canonicalHost(url.hostname);
    if (canonical === null) return { ok: false, detail: "the URL's host is not a host name or an address" };
    const port = url.port === "" ? (protocol === "tls" ? 6514 : 514) : Number(url.port);
    return { ok: true, target: { protocol, host: canonical, port, path: "" } };
  }
  const protocol = HTTP_PROTOCOLS[url.protocol];
  if (!protocol) return { ok: false, detail: `${kind} takes http:// or https://` };
  const port = url.port === "" ? (protocol === "https" ? 443 : 80) : Number(url.port);
  let pathname = url.pathname;
  if (kind === "splunk_hec" && (pathname === "" || pathname === "/")) pathname = "/services/collector/event";
  if (kind === "elastic_bulk" && !pathname.endsWith("/_bulk")) pathname = `${pathname.replace(/\/+$/, "")}/_bulk`;
  return { ok: true, target: { protocol, host, port, path: `${pathname}${url.search}` } };
}
