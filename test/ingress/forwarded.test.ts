import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createClientAddressResolver, parseForwarded } from "../../ingress/client-address.js";
import { parseAddress } from "../../shared/verify/index.js";
import { startTestGateway, type TestGateway } from "../helpers/gateway.js";
import { postFrom } from "../helpers/from-address.js";
import { putSecret } from "./routes/content-fixtures.js";
import { makeKey, makeOrg } from "./routes/verify-fixtures.js";

/**
 * `Forwarded` (RFC 7239) behind a trusted proxy (docs/security.md, "Input handling"): the
 * header is read by its grammar; one that breaks it is read element by element, and an
 * element that breaks it names no one. The proxy appends its element last; nothing a client
 * writes in its own element may move where that element starts, or make the trusted proxy
 * the caller.
 */

const PROXY = "127.0.0.2";
const CLAIMED = "10.1.2.3";

const DENIED = "198.51.100.66";

let gw: TestGateway;
let secretKey: string;
let denyingKey: string;
beforeAll(async () => {
  gw = await startTestGateway("forwarded", { TRUSTED_PROXIES: PROXY, TRUSTED_PROXY_HEADER: "forwarded" });
  const orgId = await makeOrg(gw, { plan: "enterprise" });
  await putSecret(gw, orgId, "db_password", "hunter2");
  secretKey = (await makeKey(gw, orgId, { kind: "server", domain: undefined, name: "Backend", ip_allow: [CLAIMED] })).key;
  denyingKey = (await makeKey(gw, orgId, { kind: "server", domain: undefined, name: "Denying", ip_deny: [DENIED] })).key;
});
afterAll(async () => {
  await gw?.stop();
});

describe("secret.php behind a proxy writing Forwarded", () => {
  const ask = (forwarded: string) => postFrom(gw.url, PROXY, "/api/v1/secret.php", { key: secretKey, name: "db_password" }, { forwarded });

  it("hands the secret to the address the proxy names", async () => {
    const answer = await ask(`for=${CLAIMED}`);
    expect([answer.status, answer.body.value]).toEqual([200, "hunter2"]);
  });

  it("is not fooled by an unbalanced quote in the client's element", async () => {
    // As sent to the gateway by the proxy at 127.0.0.2 (the reproduction), and with the
    // element that proxy appends for the real client.
    for (const forwarded of [`for=${CLAIMED};x="`, `for=${CLAIMED};x=", for=198.51.100.9`, `for=${CLAIMED};x="\\", for=198.51.100.9`]) {
      const answer = await ask(forwarded);
      expect([forwarded, answer.status, answer.body.reason, answer.body.value]).toEqual([forwarded, 403, "ip_not_allowed", undefined]);
    }
  });

  it("still finds a denied caller who breaks the grammar in his own element: the proxy's element names him", async () => {
    const verifyFrom = (forwarded: string) => postFrom(gw.url, PROXY, "/api/v1/verify.php", { key: denyingKey }, { forwarded });
    expect((await verifyFrom(`for=${DENIED}`)).body.reason).toBe("ip_blocked");
    // What a proxy that appends sends when the denied caller opened a quote, or wrote a stray
    // one, before it: read as a whole the header is malformed, and the proxy (denied by no
    // list) would be the caller.
    for (const own of [`for="x`, `for=1.2.3.4;x="`, `"`, `for=1.2.3.4:80`, `for="\\`]) {
      const forwarded = `${own}, for=${DENIED}`;
      const answer = await verifyFrom(forwarded);
      expect([forwarded, answer.status, answer.body.reason]).toEqual([forwarded, 403, "ip_blocked"]);
    }
    // A caller the list does not name passes, whatever he wrote before the proxy's element.
    expect((await verifyFrom(`for="x, for=198.51.100.67`)).body.reason).toBe("ok");
  });
});

describe("parseForwarded", () => {
  it("reads elements, pairs, quoted strings with escapes and ports", () => {
    expect(parseForwarded(`for=192.0.2.60;proto=http;by=203.0.113.43`)).toEqual(["192.0.2.60"]);
    expect(parseForwarded(`for=192.0.2.43, for="[2001:db8:cafe::17]:4711"`)).toEqual(["192.0.2.43", "2001:db8:cafe::17"]);
    expect(parseForwarded(`For="192.0.2.1:8080" ; proto=https ,for=_hidden,  by=10.0.0.1`)).toEqual(["192.0.2.1", "_hidden", ""]);
    expect(parseForwarded(`for="\\1\\92.0.2.5";host="a\\"b,c;d=e"`)).toEqual(["192.0.2.5"]);
    expect(parseForwarded(`, ,for=192.0.2.7,,`)).toEqual(["192.0.2.7"]);
    expect(parseForwarded(`;, proto=http`)).toEqual(["", ""]);
    expect(parseForwarded("")).toEqual([]);
  });

  it.each([
    `for=${CLAIMED};x="`,
    `for=${CLAIMED};x=", for=198.51.100.9`,
    `for="${CLAIMED}`,
    `for=${CLAIMED}"`,
    `for=${CLAIMED};x="a\\`,
    `for`,
    `for=`,
    `=1.2.3.4`,
    `for=1.2.3.4:80`,
    `for=[2001:db8::1]`,
    `for=1.2.3.4;for=5.6.7.8`,
    `for=1.2.3.4;FOR=5.6.7.8`,
    `for="1.2.3.4"x`,
    `for = 1.2.3.4`,
    `for=1.2.3.4 5.6.7.8`,
    `for="a\u0000b"`,
    `for="a\\\u0001"`,
    `for=1.2.3.4\u0000`,
    `for=é`,
  ])("finds %j malformed", (header) => {
    expect(parseForwarded(header)).toBeNull();
  });
});

/** Deterministic pseudo-random numbers (mulberry32): a failure replays the same way. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * The grammar written out as regular expressions (RFC 7239 section 4 over RFC 9110
 * token / quoted-string, whitespace around `,` and `;`), independent of the parser: the
 * oracle of what is well formed, and of the hops a well-formed header names.
 */
const TCHAR = "[!#$%&'*+\\-.^_`|~0-9A-Za-z]";
const TOKEN = `${TCHAR}+`;
const QUOTED = `"(?:[\\t \\x21\\x23-\\x5b\\x5d-\\x7e\\x80-\\uffff]|\\\\[\\t \\x21-\\x7e\\x80-\\uffff])*"`;
const PAIR = `${TOKEN}=(?:${TOKEN}|${QUOTED})`;
const ELEMENT = `(?:${PAIR})?(?:[ \\t]*;[ \\t]*(?:${PAIR})?)*`;
const WELL_FORMED = new RegExp(`^[ \\t]*${ELEMENT}(?:[ \\t]*,[ \\t]*${ELEMENT})*[ \\t]*$`);
const PIECES = new RegExp(`(${TOKEN})=(${TOKEN}|${QUOTED})|;|,`, "g");

function oracle(header: string): string[] | null {
  if (!WELL_FORMED.test(header)) return null;
  const hops: string[] = [];
  let names: string[] = [];
  let node: string | undefined;
  let empty = true;
  const close = () => {
    if (!empty) hops.push(node === undefined ? "" : oracleStripPort(node));
    names = [];
    node = undefined;
    empty = true;
  };
  for (const match of header.matchAll(PIECES)) {
    if (match[0] === ",") close();
    else if (match[0] === ";") empty = false;
    else {
      const name = match[1].toLowerCase();
      if (names.includes(name)) return null;
      names.push(name);
      empty = false;
      const value = match[2].startsWith('"') ? match[2].slice(1, -1).replace(/\\(.)/gs, "$1") : match[2];
      if (name === "for") node = value;
    }
  }
  close();
  return hops;
}

function oracleStripPort(node: string): string {
  const bracketed = /^\[([^\]]*)\](?::\d+)?$/.exec(node);
  if (bracketed) return bracketed[1];
  return /^(\d{1,3}(?:\.\d{1,3}){3}):\d+$/.exec(node)?.[1] ?? node;
}

describe("fuzzing the Forwarded parser", () => {
  const rand = random(7239);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(rand() * items.length)];
  const NODES = [
    "192.0.2.60",
    CLAIMED,
    "10.0.0.5",
    '"[2001:db8::17]:4711"',
    '"[2001:db8::17]"',
    '"192.0.2.1:80"',
    "unknown",
    "_hidden",
    '"198.51.100.3"',
    '"\\198.51.100.4"',
    "2001:db8::1",
    '"2001:db8::2"',
  ];
  const NAMES = ["for", "by", "proto", "host", "x", "FOR", "For", "secret"];
  const QUOTED_CHARS = ["a", "1", ",", ";", "=", " ", '\\"', "\\\\", "\\,", "\\;", "é", "\t", "[", "]", ":"];
  const quoted = () => `"${Array.from({ length: Math.floor(rand() * 6) }, () => pick(QUOTED_CHARS)).join("")}"`;
  const space = () => pick(["", "", "", " ", "  ", "\t"]);
  const pair = (name: string) =>
    `${name}=${name.toLowerCase() === "for" ? pick(NODES) : rand() < 0.5 ? pick(["http", "https", "a.b", "_x"]) : quoted()}`;
  const element = () => {
    const names = [...new Set(Array.from({ length: Math.floor(rand() * 4) }, () => pick(NAMES)).map((n) => n.toLowerCase()))];
    return names.map((n) => `${space()}${pair(rand() < 0.3 ? n.toUpperCase() : n)}${space()}`).join(";");
  };
  const structured = () => Array.from({ length: 1 + Math.floor(rand() * 4) }, element).join(pick([",", ", ", " , "]));
  const INSERTS = ['"', '"', "\\", ";", ",", "=", " ", "\t", "\u0000", "\u007f", "\r", "\n", "é", "[", ":", 'x="', "for="];
  const mutate = (text: string): string => {
    let out = text;
    const times = 1 + Math.floor(rand() * 3);
    for (let t = 0; t < times; t++) {
      const at = Math.floor(rand() * (out.length + 1));
      switch (Math.floor(rand() * 5)) {
        case 0:
          out = out.slice(0, at) + pick(INSERTS) + out.slice(at);
          break;
        case 1:
          out = out.slice(0, at) + out.slice(at + 1);
          break;
        case 2:
          out = out.slice(0, at);
          break;
        case 3:
          out = out.slice(0, at) + out.slice(Math.floor(rand() * out.length), at + Math.floor(rand() * 8)) + out.slice(at);
          break;
        default:
          out = out.slice(0, at) + pick(INSERTS) + out.slice(at + 1);
      }
    }
    return out;
  };
  const resolve = createClientAddressResolver({ trustedProxies: ["10.0.0.0/8"], header: "forwarded" });
  const CONNECTING = "10.0.0.1";
  const APPENDED = "198.51.100.9";

  it("agrees with the grammar on 40,000 structured and mutated headers, and never throws", () => {
    const disagreements: { header: string; parsed: string[] | null; expected: string[] | null }[] = [];
    let malformed = 0;
    for (let i = 0; i < 40_000; i++) {
      const header = i % 4 === 0 ? structured() : mutate(structured());
      const expected = oracle(header);
      let parsed: string[] | null;
      try {
        parsed = parseForwarded(header);
      } catch (error) {
        throw new Error(`parseForwarded threw on ${JSON.stringify(header)}: ${String(error)}`);
      }
      if (expected === null) malformed++;
      if (JSON.stringify(parsed) !== JSON.stringify(expected)) disagreements.push({ header, parsed, expected });
    }
    expect(disagreements.slice(0, 10)).toEqual([]);
    // Both kinds are well represented.
    expect(malformed).toBeGreaterThan(10_000);
    expect(malformed).toBeLessThan(35_000);
  });

  it("never lets the client's part decide the address: the proxy's element names the caller, well formed or not", () => {
    const wrong: { header: string; got: string; want: string }[] = [];
    let malformed = 0;
    for (let i = 0; i < 40_000; i++) {
      const client = i % 4 === 0 ? structured() : mutate(structured());
      // What a proxy that appends writes: the client's header, then its own element.
      const header = `${client}, for=${APPENDED}`;
      if (oracle(header) === null) malformed++;
      const got = resolve(CONNECTING, { forwarded: header });
      if (got !== APPENDED) wrong.push({ header, got, want: APPENDED });
      // The client's text alone, from the trusted proxy: the proxy itself or an address the
      // text names (its quoted-pairs unescaped).
      const alone = resolve(CONNECTING, { forwarded: client });
      const named = [...client.replaceAll("\\", "").matchAll(/for="?[\s[]*([0-9a-f:.]+)/gi)].map((m) =>
        parseAddress(m[1].replace(/^([\d.]+):\d+$/, "$1"))?.toString(),
      );
      if (alone !== CONNECTING && !named.includes(alone)) wrong.push({ header: client, got: alone, want: "the proxy or a named address" });
    }
    expect(wrong.slice(0, 10)).toEqual([]);
    expect(malformed).toBeGreaterThan(10_000);
  });
});
