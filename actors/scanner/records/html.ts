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
