/**
 * What the checks read from a page's HTML: `<script src>` tags (SRI) and `<meta>` tags
 * (CSP and Referrer-Policy delivered in the page). A linear tokenizer (html-tokens.ts),
 * not a parser: comments and the raw text of scripts and styles hold no tags, and only
 * the first `HTML_LIMIT` characters of a page are read.
 */
import type { HttpExchange } from "../../../shared/platform/net/outbound/evidence.js";
import { type StartTag, tokenize } from "./html-tokens.js";

/**
 * Characters of a page the HTML checks examine (512 KiB of an ASCII page). The policies
 * they look for sit in `<head>`, and a page's own scripts rarely come later; past this a
 * page only costs time.
 */
export const HTML_LIMIT = 512 * 1024;

export interface ScriptTag {
  readonly src: string;
  readonly integrity: string | null;
  readonly tag: string;
}

const SCRIPT = new Set(["script"]);
const META = new Set(["meta"]);

function examined(html: string): string {
  return html.length > HTML_LIMIT ? html.slice(0, HTML_LIMIT) : html;
}

function startTags(html: string, names: ReadonlySet<string>): readonly StartTag[] {
  return tokenize(examined(html), names).tags;
}

export function scriptTags(html: string): ScriptTag[] {
  return startTags(html, SCRIPT).flatMap((tag) => {
    const src = tag.attributes.get("src")?.trim();
    return src ? [{ src, integrity: tag.attributes.get("integrity") ?? null, tag: tag.source }] : [];
  });
}

export function looksLikeHtml(contentType: string | null, body: string): boolean {
  if (contentType !== null) return /html/i.test(contentType);
  return /<(!doctype html|html|head|body|script)\b/i.test(body.slice(0, 2048));
}

/**
 * The note a check adds to its detail when the page was not examined whole: longer than
 * `HTML_LIMIT`, or cut when it was read (retrieve/http-client.ts `BODY_LIMIT`). Empty otherwise.
 */
export function examinedNote(page: HttpExchange): string {
  if (page.body.length <= HTML_LIMIT && !page.bodyTruncated) return "";
  return ` Only the first ${Math.min(page.body.length, HTML_LIMIT)} characters of the page were examined.`;
}

export interface MetaTag {
  /** `http-equiv`, lower-cased; null when absent. */
  readonly httpEquiv: string | null;
  /** `name`, lower-cased; null when absent. */
  readonly name: string | null;
  readonly content: string;
  readonly tag: string;
}

/** `<meta>` tags with a `content` attribute, in document order. */
export function metaTags(html: string): MetaTag[] {
  const lower = (value: string | undefined) => (value === undefined ? null : value.trim().toLowerCase());
  return startTags(html, META).flatMap((tag) => {
    const content = tag.attributes.get("content");
    if (content === undefined) return [];
    return [
      {
        httpEquiv: lower(tag.attributes.get("http-equiv")),
        name: lower(tag.attributes.get("name")),
        content: decodeEntities(content),
        tag: tag.source,
      },
    ];
  });
}

/** The few character references a policy in an attribute can carry. */
function decodeEntities(text: string): string {
  return text.replace(
    /&(quot|apos|#39|amp|lt|gt);/g,
    (_, entity: string) => ({ quot: '"', apos: "'", "#39": "'", amp: "&", lt: "<", gt: ">" })[entity] ?? "",
  );
}

/**
 * CSP delivered in `<meta http-equiv>` (CSP 3 4.3): enforced like the header, except
 * that frame-ancestors, report-uri and sandbox are ignored there.
 */
export function metaCsp(html: string): string[] {
  return metaTags(html)
    .filter((m) => m.httpEquiv === "content-security-policy")
    .map((m) => m.content);
}

/** `<meta name="referrer">` (Referrer Policy 4.3): sets the document's policy like the header. */
export function metaReferrer(html: string): string[] {
  return metaTags(html)
    .filter((m) => m.name === "referrer")
    .map((m) => m.content);
}
