import { describe, expect, test } from "vitest";
import { spf } from "../../../../actors/scanner/checks/spf.js";
import { spfLookups } from "../../../../actors/scanner/checks/spf-lookups.js";
import { evaluate } from "../../../../actors/scanner/finding.js";
import { parseSpf, spfKey, walkSpf } from "../../../../actors/scanner/records/spf.js";
import type { DnsAnswer } from "../../../../shared/platform/net/outbound/evidence.js";
import { answer, DOMAIN, dnsWith, nxdomain, timedOut, txt } from "../builders.js";

/** Evidence whose SPF map holds the given TXT records per name (all other lookups answer with one A record). */
function spfEvidence(records: Record<string, string[]>, extra: Record<string, DnsAnswer> = {}) {
  const map: Record<string, DnsAnswer> = { ...extra };
  for (const [name, texts] of Object.entries(records)) map[spfKey("txt", name)] = txt(name, ...texts);
  return dnsWith({ spf: map });
}

describe("mail:spf", () => {
  test("pass with -all", () => {
    const f = evaluate(spf, spfEvidence({ [DOMAIN]: ["v=spf1 mx -all"] }));
    expect([f.status, f.result]).toEqual(["pass", "spf-hardfail"]);
    expect(f.evidence).toBe('example.test. TXT "v=spf1 mx -all"');
  });
  test("strings of one TXT record are joined before parsing", () => {
    const split = answer(DOMAIN, "TXT", [{ type: "TXT", name: DOMAIN, strings: ["v=spf1 ip4:192.0.2.0/24 ", "-all"] }]);
    expect(evaluate(spf, dnsWith({ spf: { [spfKey("txt", DOMAIN)]: split } })).result).toBe("spf-hardfail");
  });
  test("fail when missing (empty evidence)", () => {
    expect(evaluate(spf, dnsWith({})).result).toBe("spf-missing");
  });
  test("fail with +all", () => {
    const f = evaluate(spf, spfEvidence({ [DOMAIN]: ["v=spf1 +all"] }));
    expect([f.status, f.result]).toEqual(["fail", "spf-pass-all"]);
  });
  test("fail with two records", () => {
    expect(evaluate(spf, spfEvidence({ [DOMAIN]: ["v=spf1 -all", "v=spf1 mx ~all"] })).result).toBe("spf-multiple");
  });
  test("fail on syntax errors", () => {
    expect(evaluate(spf, spfEvidence({ [DOMAIN]: ["v=spf1 ip4:300.1.1.1 foo:bar -all"] })).result).toBe("spf-syntax");
  });
  test("warn on ?all and on a missing all", () => {
    expect(evaluate(spf, spfEvidence({ [DOMAIN]: ["v=spf1 mx ?all"] })).result).toBe("spf-neutral");
    expect(evaluate(spf, spfEvidence({ [DOMAIN]: ["v=spf1 mx"] })).result).toBe("spf-neutral");
  });
  test("warn on the deprecated ptr mechanism", () => {
    expect(evaluate(spf, spfEvidence({ [DOMAIN]: ["v=spf1 ptr -all"] })).result).toBe("spf-ptr");
  });
  test("the all of a redirect target counts", () => {
    const f = evaluate(spf, spfEvidence({ [DOMAIN]: ["v=spf1 redirect=_spf.example.test"], "_spf.example.test": ["v=spf1 +all"] }));
    expect(f.result).toBe("spf-pass-all");
    expect(f.detail).toContain("_spf.example.test");
  });
  test("a failed lookup is recorded as a warning", () => {
    expect(evaluate(spf, dnsWith({ spf: { [spfKey("txt", DOMAIN)]: timedOut(DOMAIN, "TXT") } })).result).toBe("spf-lookup-failed");
  });
});

describe("mail:spf-lookups", () => {
  const a = (name: string) => answer(name, "A", [{ type: "A", name, address: "192.0.2.1" }]);
  test("pass within the limit", () => {
    const f = evaluate(
      spfLookups,
      spfEvidence(
        { [DOMAIN]: ["v=spf1 include:_a.example.test -all"], "_a.example.test": ["v=spf1 a ~all"] },
        { [spfKey("a", "_a.example.test")]: a("_a.example.test") },
      ),
    );
    expect([f.status, f.result]).toEqual(["pass", "spf-lookups-ok"]);
    expect(f.detail).toBe("2 lookup(s), 0 void.");
  });
  test("fail with 11 lookups counted through includes", () => {
    const includes = Array.from({ length: 11 }, (_, i) => `include:_${i}.example.test`).join(" ");
    const nested = Object.fromEntries(Array.from({ length: 11 }, (_, i) => [`_${i}.example.test`, ["v=spf1 ip4:192.0.2.1 -all"]]));
    const f = evaluate(spfLookups, spfEvidence({ [DOMAIN]: [`v=spf1 ${includes} -all`], ...nested }));
    expect([f.status, f.result]).toEqual(["fail", "spf-lookups-exceeded"]);
    expect(f.detail).toContain("11 lookup(s)");
  });
  test("fail with more than two void lookups", () => {
    const voids = Object.fromEntries(["x", "y", "z"].map((l) => [spfKey("a", `${l}.example.test`), nxdomain(`${l}.example.test`, "A")]));
    const f = evaluate(spfLookups, spfEvidence({ [DOMAIN]: ["v=spf1 a:x.example.test a:y.example.test a:z.example.test -all"] }, voids));
    expect(f.result).toBe("spf-void-exceeded");
  });
  test("fail when an include has no SPF record", () => {
    const f = evaluate(
      spfLookups,
      spfEvidence({ [DOMAIN]: ["v=spf1 include:_gone.example.test -all"], "_gone.example.test": ["unrelated"] }),
    );
    expect(f.result).toBe("spf-include-broken");
  });
  test("info for empty evidence", () => {
    expect(evaluate(spfLookups, dnsWith({})).result).toBe("spf-lookups-not-applicable");
  });
});

describe("records/spf", () => {
  test("parses qualifiers, mechanisms and modifiers", () => {
    const { terms, errors } = parseSpf(
      "v=spf1 -ip4:192.0.2.0/24 ip6:2001:db8::/32 ~a:mail.example.test/24 mx//64 exists:%{i}._spf.%{d} redirect=_spf.example.test",
    );
    expect(errors).toEqual([]);
    expect(terms.map((t) => (t.kind === "mechanism" ? `${t.qualifier}${t.name}` : t.name))).toEqual([
      "-ip4",
      "+ip6",
      "~a",
      "+mx",
      "+exists",
      "redirect",
    ]);
  });
  test("macros are counted but not followed", () => {
    const walk = walkSpf(DOMAIN, (key) =>
      key === spfKey("txt", DOMAIN) ? txt(DOMAIN, "v=spf1 exists:%{i}.spf.example.test -all") : undefined,
    );
    expect(walk.lookups).toBe(1);
    expect(walk.missing).toEqual([]);
  });
  test("an include loop is an error and stops", () => {
    const walk = walkSpf(DOMAIN, (key) => (key === spfKey("txt", DOMAIN) ? txt(DOMAIN, "v=spf1 include:example.test -all") : undefined));
    expect(walk.errors.join()).toContain("loops back");
  });
  test("names not yet retrieved are reported as missing", () => {
    const walk = walkSpf(DOMAIN, (key) => (key === spfKey("txt", DOMAIN) ? txt(DOMAIN, "v=spf1 include:a.test mx -all") : undefined));
    expect([...walk.missing].sort()).toEqual(["mx:example.test", "txt:a.test"]);
  });
});
