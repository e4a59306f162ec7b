/**
 * The HTML the checks read: tags found as a browser finds them, in work linear in the
 * page's length (counted in steps, not timed), and only the first HTML_LIMIT characters.
 */
import { describe, expect, test } from "vitest";
import { evaluate } from "../../../../actors/scanner/finding.js";
import { csp } from "../../../../actors/scanner/checks/csp.js";
import { sri } from "../../../../actors/scanner/checks/sri.js";
import { tokenize } from "../../../../actors/scanner/records/html-tokens.js";
import { HTML_LIMIT, metaTags, scriptTags } from "../../../../actors/scanner/records/html.js";
import { webWithPage } from "../builders.js";

const KIB = 1024;
const WANTED = new Set(["script", "meta"]);
const names = (html: string) => tokenize(html, new Set(["script", "meta", "a", "b"])).tags.map((t) => t.name);

/** Pages made of one fragment repeated, none of them ever closed: what made the old patterns quadratic. */
const HOSTILE: readonly [string, string][] = [
  ["comment openers", "<!--"],
  ["comment openers and dashes", "<!-- -"],
  ["unclosed tags", "<a "],
  ["unclosed script tags", "<script "],
  ["unclosed attribute values", '<a x="'],
  ["unclosed meta content", "<meta content='"],
  ["unquoted attributes", "<a x=y "],
  ["end tags", "</a "],
  ["raw text never ended", "<script></scrip"],
  ["end-tag openers in raw text", "<style></</st</sty</styl"],
  ["bare less-than signs", "<"],
  ["bogus comments", "<!x"],
];

describe("tokenize: linear on hostile pages", () => {
  test.each(HOSTILE)("%s, 512 KiB to 2 MiB: at most 3 steps per character", (_, fragment) => {
    for (const size of [512 * KIB, 1024 * KIB, 2048 * KIB]) {
      const html = fragment.repeat(Math.ceil(size / fragment.length)).slice(0, size);
      const { steps } = tokenize(html, WANTED);
      expect(steps, `${size} characters`).toBeLessThanOrEqual(3 * size);
    }
  });

  test("the checks' readers finish on 2 MiB of each and find nothing the page never closed", () => {
    for (const [, fragment] of HOSTILE) {
      const html = `<meta name=referrer content=no-referrer><script src=https://cdn.example/x.js></script>${fragment.repeat((2048 * KIB) / fragment.length)}`;
      expect(scriptTags(html).map((s) => s.src)).toEqual(["https://cdn.example/x.js"]);
      expect(metaTags(html).map((m) => m.content)).toEqual(["no-referrer"]);
    }
  });
});

describe("tokenize: tags as a browser finds them", () => {
  test("comments hide tags; <!-->, <!---> and --!> close them; an unclosed one hides the rest", () => {
    expect(names("<!-- <script> --><a>")).toEqual(["a"]);
    expect(names("<!--><a><!---><b>")).toEqual(["a", "b"]);
    expect(names("<!-- x --!><a>")).toEqual(["a"]);
    expect(names("<!-- x -- ><a> --><b>")).toEqual(["b"]);
    expect(names("<a><!-- never closed <b>")).toEqual(["a"]);
  });

  test("the text of script, style, title and textarea holds no tags until their end tag", () => {
    expect(names(`<script>document.write("<script src=x>")</script><a>`)).toEqual(["script", "a"]);
    expect(names("<style>a > b { }</style ><b>")).toEqual(["b"]);
    expect(names("<title><script></title><a>")).toEqual(["a"]);
    expect(names("<textarea><meta></textarea><b>")).toEqual(["b"]);
    expect(names("<SCRIPT>x</scriptx></SCRIPT><a>")).toEqual(["script", "a"]);
    expect(names("<plaintext><a>")).toEqual([]);
  });

  test("attributes: quoted values may hold >, the first of a repeated name wins, names are lower-cased", () => {
    const [tag] = tokenize(`<META Content="a>b" content=second HTTP-EQUIV='x' name=y/>`, WANTED).tags;
    expect(Object.fromEntries(tag.attributes)).toEqual({ content: "a>b", "http-equiv": "x", name: "y/" });
    expect(tag.source).toBe(`<META Content="a>b" content=second HTTP-EQUIV='x' name=y/>`);
  });

  test("attributes without whitespace between them, without a value, or with an empty one", () => {
    const [tag] = tokenize(`<script src="a.js"integrity='x' async crossorigin= defer=>`, WANTED).tags;
    // As in browsers, whitespace after `=` is skipped: "defer=" is crossorigin's value.
    expect(Object.fromEntries(tag.attributes)).toEqual({ src: "a.js", integrity: "x", async: "", crossorigin: "defer=" });
  });

  test("a tag still open at the end of the text is dropped; doctypes, bogus comments and stray < are text", () => {
    expect(names("<a><b")).toEqual(["a"]);
    expect(names('<a x="1>')).toEqual([]);
    expect(names("<!DOCTYPE html><?xml version='1.0'?><![CDATA[ <a> ]]><b>")).toEqual(["b"]);
    expect(names("1 < 2 <> </> </ b><a>")).toEqual(["a"]);
    expect(names("</a x='>'><b>")).toEqual(["b"]);
  });
});

describe("HTML_LIMIT", () => {
  const padding = "x".repeat(HTML_LIMIT);
  const late = `<script src="https://cdn.example.net/late.js"></script>`;

  test("tags past the limit are not read", () => {
    expect(scriptTags(`${late}${padding}`)).toHaveLength(1);
    expect(scriptTags(`${padding}${late}`)).toEqual([]);
  });

  test("the HTML checks say when the page was not examined whole", () => {
    const headers = [["content-type", "text/html"]] as const;
    const long = evaluate(sri, webWithPage(headers, { body: `<html>${late}${padding}` }));
    expect(long.result).toBe("sri-missing");
    expect(long.detail).toContain(`Only the first ${HTML_LIMIT} characters of the page were examined.`);
    const cut = evaluate(csp, webWithPage(headers, { body: "<html>", bodyTruncated: true }));
    expect(cut.detail).toContain("Only the first 6 characters of the page were examined.");
    expect(evaluate(sri, webWithPage(headers, { body: `<html>${late}` })).detail).not.toContain("examined");
  });
});
