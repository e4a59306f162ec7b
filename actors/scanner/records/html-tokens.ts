/**
 * A tokenizer for the start tags the checks read, following the states of WHATWG HTML
 * 13.2.5 that decide where a tag begins and ends: data, tag open, tag name, attribute
 * names and values (quoted ones may hold `>`), comments (`<!-->`, `--!>` and a comment left
 * open to the end included), bogus comments and doctypes, and the raw text of `<script>`,
 * `<style>` and the like, where nothing is a tag until the element's end tag.
 *
 * Why not regular expressions: each one that backtracked over the page (a comment pattern,
 * `<script\b[^>]*>`) restarted its search at every `<!--` or `<script` of a page that never
 * closes them, so such a page cost time in the square of its length (128 KiB of `<!--` took
 * over a second). Here the cursor only moves forward and every search starts where the last
 * one stopped: the work is linear in the length of the text. `steps` counts the characters
 * looked at, so tests hold that bound without measuring time.
 *
 * It is a tokenizer without HTML's tree builder, so on random documents it finds the script
 * and meta tags parse5 finds except in these places: inside a script, `<!--<script>` makes a
 * browser read the next `</script>` as text, while here it ends the script (tags after it are
 * reported though a browser never runs them); inside `<svg>` and `<math>` a browser reads
 * `<style>` as markup, here as raw text; a `<meta>` inside `<select>` is dropped by browsers,
 * reported here.
 */

export interface StartTag {
  /** Lower-cased. */
  readonly name: string;
  /** By lower-cased name; of a repeated attribute the first wins, as in browsers. */
  readonly attributes: ReadonlyMap<string, string>;
  /** The tag as written in the page. */
  readonly source: string;
}

export interface Tokens {
  /** Start tags with one of the asked names, in document order. A tag still open at the end of the text is dropped, as browsers drop it. */
  readonly tags: readonly StartTag[];
  /** Characters looked at, each look counted: a small multiple of the text's length at most. */
  readonly steps: number;
}

/** Elements whose content is text up to their end tag (HTML 13.1.2, raw text and escapable raw text; `<noscript>` as with scripting on). */
const RAW_TEXT = new Set(["script", "style", "textarea", "title", "xmp", "iframe", "noembed", "noframes", "noscript"]);

const TAB = 0x09;
const LF = 0x0a;
const FF = 0x0c;
const CR = 0x0d;
const SPACE = 0x20;
const BANG = 0x21;
const DQUOTE = 0x22;
const SQUOTE = 0x27;
const DASH = 0x2d;
const SLASH = 0x2f;
const EQUALS = 0x3d;
const GT = 0x3e;
const QUESTION = 0x3f;

const isSpace = (c: number) => c === SPACE || c === LF || c === TAB || c === FF || c === CR;
const isAlpha = (c: number) => (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a);

/** A tag read through its `>`: where it ended (just past the `>`), its name, and the tag when it was wanted. */
interface TagRead {
  readonly end: number;
  readonly name: string;
  readonly tag: StartTag | null;
}

export function tokenize(html: string, wanted: ReadonlySet<string>): Tokens {
  const length = html.length;
  const tags: StartTag[] = [];
  let steps = 0;

  /** `html.indexOf`, counting the characters it passed over. */
  const find = (needle: string, from: number): number => {
    const at = html.indexOf(needle, from);
    steps += (at === -1 ? length : at + needle.length) - from;
    return at;
  };
  const code = (at: number): number => {
    steps++;
    return at < length ? html.charCodeAt(at) : -1;
  };
  /** Past the next `>` (a bogus comment or doctype ends there), or the end of the text. */
  const pastGreaterThan = (from: number): number => {
    const at = find(">", from);
    return at === -1 ? length : at + 1;
  };

  /** A comment whose `<!--` ends just before `from`: past its end, or the end of the text when it is never closed. */
  const pastComment = (from: number): number => {
    if (code(from) === GT) return from + 1;
    if (code(from) === DASH && code(from + 1) === GT) return from + 2;
    let at = from;
    for (;;) {
      const dashes = find("--", at);
      if (dashes === -1) return length;
      const next = code(dashes + 2);
      if (next === GT) return dashes + 3;
      if (next === BANG && code(dashes + 3) === GT) return dashes + 4;
      at = dashes + 1;
    }
  };

  /**
   * A tag from its name's first letter (`from`) to its `>`; null when the text ends inside
   * it. Attributes are kept only when the tag is wanted, but every tag is read through:
   * a quoted `>` does not end it.
   */
  const readTag = (open: number, from: number, keep: boolean): TagRead | null => {
    let at = from;
    while (at < length) {
      const c = code(at);
      if (isSpace(c) || c === SLASH || c === GT) break;
      at++;
    }
    if (at >= length) return null;
    const name = html.slice(from, at).toLowerCase();
    const store = keep && wanted.has(name);
    const attributes = new Map<string, string>();
    const add = (key: string, value: string) => {
      if (store && !attributes.has(key)) attributes.set(key, value);
    };
    for (;;) {
      // Before an attribute name: whitespace and stray slashes are skipped.
      let c = code(at);
      while (isSpace(c) || c === SLASH) c = code(++at);
      if (c === -1) return null;
      if (c === GT) return { end: at + 1, name, tag: store ? { name, attributes, source: html.slice(open, at + 1) } : null };
      // The name: a leading `=` belongs to it (HTML 13.2.5.32).
      const nameStart = at;
      c = code(++at);
      while (c !== -1 && !isSpace(c) && c !== SLASH && c !== GT && c !== EQUALS) c = code(++at);
      const key = store ? html.slice(nameStart, at).toLowerCase() : "";
      while (isSpace(c)) c = code(++at);
      if (c !== EQUALS) {
        add(key, "");
        continue;
      }
      c = code(++at);
      while (isSpace(c)) c = code(++at);
      if (c === DQUOTE || c === SQUOTE) {
        const close = find(c === DQUOTE ? '"' : "'", at + 1);
        if (close === -1) return null;
        add(key, store ? html.slice(at + 1, close) : "");
        at = close + 1;
        continue;
      }
      // Unquoted (or none before `>`): up to whitespace or `>`.
      const valueStart = at;
      while (c !== -1 && !isSpace(c) && c !== GT) c = code(++at);
      add(key, store ? html.slice(valueStart, at) : "");
    }
  };

  /** Past the raw text of `name` that starts at `from`: at the `<` of its end tag, or the end of the text. */
  const rawTextEnd = (name: string, from: number): number => {
    let at = from;
    for (;;) {
      const close = find("</", at);
      if (close === -1) return length;
      // The name, letter by letter and ignoring ASCII case, up to the first difference.
      let matched = 0;
      while (matched < name.length && (code(close + 2 + matched) | 0x20) === name.charCodeAt(matched)) matched++;
      if (matched === name.length) {
        const c = code(close + 2 + matched);
        if (isSpace(c) || c === SLASH || c === GT) return close;
      }
      at = close + 2;
    }
  };

  let at = 0;
  while (at < length) {
    const open = find("<", at);
    if (open === -1) break;
    const c = code(open + 1);
    if (c === BANG) {
      at = code(open + 2) === DASH && code(open + 3) === DASH ? pastComment(open + 4) : pastGreaterThan(open + 2);
    } else if (c === SLASH) {
      const first = code(open + 2);
      if (isAlpha(first)) {
        const read = readTag(open, open + 2, false);
        if (read === null) break;
        at = read.end;
      } else if (first === GT) at = open + 3;
      else if (first === -1) break;
      else at = pastGreaterThan(open + 2);
    } else if (isAlpha(c)) {
      const read = readTag(open, open + 1, true);
      if (read === null) break;
      if (read.tag) tags.push(read.tag);
      if (read.name === "plaintext") break;
      at = RAW_TEXT.has(read.name) ? rawTextEnd(read.name, read.end) : read.end;
    } else if (c === QUESTION) {
      at = pastGreaterThan(open + 2);
    } else {
      // A `<` that opens nothing is text.
      at = open + 1;
    }
  }
  return { tags, steps };
}
