/**
 * `<script src>` tags of a page. A tag scanner, not a parser: the checks only need the
 * src and integrity attributes of script start tags, and comments are dropped first so
 * commented-out scripts are not reported.
 */
export interface ScriptTag {
  readonly src: string;
  readonly integrity: string | null;
  readonly tag: string;
}

function attribute(tag: string, name: string): string | null {
  const match = new RegExp(`\\s${name}\\s*=\\s*(?:"([^"]*)"|'([^']*)'|([^\\s"'>]+))`, "i").exec(tag);
  if (!match) return null;
  return match[1] ?? match[2] ?? match[3] ?? "";
}

export function scriptTags(html: string): ScriptTag[] {
  const withoutComments = html.replace(/<!--[\s\S]*?-->/g, "");
  const tags: ScriptTag[] = [];
  for (const match of withoutComments.matchAll(/<script\b[^>]*>/gi)) {
    const src = attribute(match[0], "src");
    if (src !== null && src.trim() !== "") tags.push({ src: src.trim(), integrity: attribute(match[0], "integrity"), tag: match[0] });
  }
  return tags;
}

export function looksLikeHtml(contentType: string | null, body: string): boolean {
  if (contentType !== null) return /html/i.test(contentType);
  return /<(!doctype html|html|head|body|script)\b/i.test(body.slice(0, 2048));
}

export interface MetaTag {
  /** `http-equiv`, lower-cased; null when absent. */
  readonly httpEquiv: string | null;
  /** `name`, lower-cased; null when absent. */
  readonly name: string | null;
  readonly content: string;
  readonly tag: string;
}

/** `<meta>` tags with a `content` attribute (comments dropped), in document order. */
export function metaTags(html: string): MetaTag[] {
  const withoutComments = html.replace(/<!--[\s\S]*?-->/g, "");
  const tags: MetaTag[] = [];
  for (const match of withoutComments.matchAll(/<meta\b[^>]*>/gi)) {
    const content = attribute(match[0], "content");
    if (content === null) continue;
    const lower = (value: string | null) => (value === null ? null : value.trim().toLowerCase());
    tags.push({ httpEquiv: lower(attribute(match[0], "http-equiv")), name: lower(attribute(match[0], "name")), content: decodeEntities(content), tag: match[0] });
  }
  return tags;
}

/** The few character references a policy in an attribute can carry. */
function decodeEntities(text: string): string {
  return text.replace(/&(quot|apos|#39|amp|lt|gt);/g, (_, entity: string) => ({ quot: '"', apos: "'", "#39": "'", amp: "&", lt: "<", gt: ">" })[entity] ?? "");
}

/**
 * CSP delivered in `<meta http-equiv>` (CSP 3 4.3): enforced like the header, except
 * that frame-ancestors, report-uri and sandbox are ignored there.
 */
export function metaCsp(html: string): string[] {
  return metaTags(html).filter((m) => m.httpEquiv === "content-security-policy").map((m) => m.content);
}

/** `<meta name="referrer">` (Referrer Policy 4.3): sets the document's policy like the header. */
export function metaReferrer(html: string): string[] {
  return metaTags(html).filter((m) => m.name === "referrer").map((m) => m.content);
}
