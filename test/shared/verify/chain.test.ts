import { describe, expect, it } from "vitest";
import { evaluate, prepare, RULES, createPreparer, counts, scriptOutcome, COUNTED_RULES } from "../../../shared/verify/index.js";
import { REASONS } from "../../../shared/platform/reasons.js";
import { ask, DAY, keySnapshot, NOW, orgSnapshot } from "./fixtures.js";

const none = () => null;

describe("the pure chain", () => {
  it("passes a well-formed call", () => {
    expect(evaluate(prepare(keySnapshot(), orgSnapshot()), ask(), none)).toEqual({ ok: true });
  });

  it.each([
    ["key_suspended", { status: "suspended" as const }, {}, {}],
    ["bad_ip", {}, {}, { visitorIp: "not-an-ip" }],
    ["expired", { expires_at_ms: NOW - 1 }, {}, {}],
    ["ip_blocked", { ip_deny: ["203.0.113.0/24"] }, {}, {}],
    ["ip_not_allowed", { ip_allow: ["198.51.100.0/24"] }, {}, {}],
    ["geo_blocked", { countries_block: ["US"] }, {}, {}],
    ["geo_not_allowed", { countries_allow: ["DE"] }, {}, {}],
    ["insufficient_scope", { scopes: ["read"] }, {}, { scope: "write" }],
    ["domain_mismatch", {}, {}, { domain: "other.org" }],
    ["domain_not_verified", {}, { verified_domains: [] }, {}],
  ])("refuses %s", (reason, key, org, call) => {
    const verdict = evaluate(prepare(keySnapshot(key), orgSnapshot(org)), ask(call), () => "US");
    expect(verdict).toEqual({ ok: false, reason });
  });

  it("applies the deny list before the allowlist (deny wins)", () => {
    const p = prepare(keySnapshot({ ip_deny: ["203.0.113.9"], ip_allow: ["203.0.113.0/24"] }), orgSnapshot());
    expect(evaluate(p, ask(), none)).toEqual({ ok: false, reason: "ip_blocked" });
  });

  it("applies the rules in the documented order", () => {
    expect(RULES.map((r) => r.name)).toEqual([
      "suspension",
      "ip_param",
      "expiry",
      "ip_deny",
      "ip_allow",
      "countries",
      "scope",
      "domain_lock",
      "domain_verification",
    ]);
    expect(COUNTED_RULES.map((r) => r.name)).toEqual(["rate", "allowance", "installation"]);
    const everything = prepare(
      keySnapshot({ status: "suspended", expires_at_ms: NOW - 1, ip_deny: ["0.0.0.0/0"] }),
      orgSnapshot({ verified_domains: [] }),
    );
    expect(evaluate(everything, ask({ domain: "x.org" }), none)).toEqual({ ok: false, reason: "key_suspended" });
  });

  it("skips the domain rules for a server key without a lock, but not for one with a lock", () => {
    const open = prepare(keySnapshot({ kind: "server", domain: null }), orgSnapshot({ verified_domains: [] }));
    expect(evaluate(open, ask({ domain: undefined }), none)).toEqual({ ok: true });
    const locked = prepare(keySnapshot({ kind: "server" }), orgSnapshot());
    expect(evaluate(locked, ask({ domain: undefined }), none)).toEqual({ ok: false, reason: "domain_mismatch" });
  });

  it("memoizes per snapshot version and recomputes when either snapshot changes", () => {
    const prep = createPreparer();
    const key = keySnapshot();
    const org = orgSnapshot();
    const first = prep(key, org);
    expect(prep(key, org)).toBe(first);
    expect(prep(key, orgSnapshot())).not.toBe(first);
    expect(prep(keySnapshot(), org)).not.toBe(first);
  });

  it("judges a lapsed organization's keys by its window", () => {
    const org = orgSnapshot({ subscription: "lapsed", lapsed_at_ms: NOW - DAY });
    expect(evaluate(prepare(keySnapshot(), org), ask({ now: NOW + 30 * DAY }), none)).toEqual({ ok: false, reason: "expired" });
  });
});

describe("counting outcomes", () => {
  it("counts per the reasons table", () => {
    expect(counts("ok")).toBe(true);
    expect(counts("domain_mismatch")).toBe(true);
    for (const r of [
      "key_suspended",
      "usage_limit_exceeded",
      "rate_limited",
      "server_key_required",
      "ip_binding_required",
      "origin_mismatch",
    ] as const) {
      expect(counts(r)).toBe(false);
    }
    expect(REASONS.invalid_key.counts).toBe(false);
  });
  it("maps script codes", () => {
    expect(scriptOutcome("stale")).toEqual({ kind: "stale" });
    expect(scriptOutcome("ok")).toEqual({ kind: "answer", reason: "ok" });
    expect(scriptOutcome(Buffer.from("rate_limited"))).toEqual({ kind: "answer", reason: "rate_limited" });
    expect(() => scriptOutcome("nonsense")).toThrow();
  });
});
