/**
 * origin_mismatch (interface.md section 7): protected content is served only to the page
 * it is published on, the key's `content_origin`. What a browser says about the page:
 *
 * - `Origin` present: its scheme, host and port must be those of `content_origin`
 *   (browsers send Origin on every cross-origin fetch and cannot be made to lie about
 *   it, so this is the check that matters). The opaque origin `null` (sandboxed frame,
 *   file://) is no page: refused.
 * - no Origin, `Referer` present (same-origin GET, older browsers): the Referer without
 *   its query and fragment must equal `content_origin` without its query and fragment.
 * - neither: no browser page named the call, so it is a server's (a server can send
 *   any header it likes, so refusing it would protect nothing); it passes, and the key's
 *   other rules (domain lock, IP lists) still apply.
 */

function parse(value: string): URL | null {
  try {
    const url = new URL(value);
    return url.protocol === "http:" || url.protocol === "https:" ? url : null;
  } catch {
    return null;
  }
}

/** The page address compared with a Referer: origin and path, no query, no fragment. */
function pageOf(url: URL): string {
  return `${url.origin}${url.pathname}`;
}

export function pageAllowed(contentOrigin: string | null, headers: Readonly<Record<string, string>>): boolean {
  if (contentOrigin === null || contentOrigin === "") return true;
  const page = parse(contentOrigin);
  // The admin API accepts only http(s) URLs; anything else here is refused, never waved through.
  if (page === null) return false;
  const origin = headers.origin;
  if (origin !== undefined && origin !== "") {
    const sent = parse(origin.trim());
    return sent !== null && sent.origin === page.origin;
  }
  const referer = headers.referer;
  if (referer !== undefined && referer !== "") {
    const sent = parse(referer.trim());
    return sent !== null && pageOf(sent) === pageOf(page);
  }
  return true;
}
