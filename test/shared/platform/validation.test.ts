import { describe, expect, it } from "vitest";
import {
  isCidrOrAddress,
  isCountryCode,
  isIsoDate,
  isStorableText,
  normalizeDomain,
  unstorableField,
  validator,
} from "../../../shared/platform/validation.js";

describe("formats", () => {
  it.each([
    ["DE", true],
    ["US", true],
    ["GB", true],
    ["XK", true],
    ["KP", true],
    ["de", false],
    ["DEU", false],
    ["XX", false],
    ["ZZ", false],
    ["EU", false],
    ["UN", false],
    ["UK", false],
    ["DD", false],
    ["SU", false],
    ["YU", false],
    ["", false],
  ])("country %j → %s", (code, expected) => {
    expect(isCountryCode(code)).toBe(expected);
  });

  it.each([
    ["10.0.0.0/8", true],
    ["192.0.2.1", true],
    ["2001:db8::/32", true],
    ["::1", true],
    ["0.0.0.0/0", true],
    ["10.0.0.0/33", false],
    ["2001:db8::/129", false],
    ["999.1.1.1", false],
    ["example.com", false],
    ["10.0.0.0/", false],
    ["", false],
  ])("cidr %j → %s", (value, expected) => {
    expect(isCidrOrAddress(value)).toBe(expected);
  });

  it.each([
    ["Example.COM.", "example.com"],
    ["a.b.example.co.uk", "a.b.example.co.uk"],
    ["_dmarc.example.com", "_dmarc.example.com"],
    ["shop.test", "shop.test"],
    ["localhost", null],
    ["192.0.2.1", null],
    ["http://example.com", null],
    ["example.com:80", null],
    ["ex ample.com", null],
    ["-x.example.com", null],
    [`${"a".repeat(64)}.com`, null],
    ["", null],
    ["a\u0000.com", null],
  ])("domain %j → %j", (value, expected) => {
    expect(normalizeDomain(value)).toBe(expected);
  });

  it.each([
    ["2024-02-29", true],
    ["2023-02-29", false],
    ["2024-02-30", false],
    ["2024-13-01", false],
    ["0000-01-01", false],
    ["0001-01-01", true],
    ["9999-12-31", true],
    ["2024-1-01", false],
    ["20240101", false],
  ])("date %j → %s", (value, expected) => {
    expect(isIsoDate(value)).toBe(expected);
  });

  const dateTime = validator<{ at: string }>({ type: "object", properties: { at: { type: "string", format: "date-time" } } });
  it.each([
    ["2030-01-02T03:04:05Z", true],
    ["2030-01-02 03:04:05", true],
    ["2030-01-02T03:04", true],
    ["2030-01-02T03:04:05.123+02:00", true],
    ["2030-02-30T00:00:00Z", false],
    ["2030-01-02T25:00:00Z", false],
    ["0000-01-01T00:00:00Z", false],
    ["1970-01-01T00:00:00+01:00", false],
    ["9999-12-31T23:00:00-02:00", false],
    ["tomorrow", false],
    ["2030-01-02", false],
  ])("date-time %j → %s", (value, expected) => {
    expect(dateTime({ at: value }).ok).toBe(expected);
  });
});

describe("reasons", () => {
  const validate = validator<{ name: string; ips?: string[]; domain?: string; countries?: string[]; n?: number }>({
    type: "object",
    required: ["name"],
    properties: {
      name: { type: "string", minLength: 1 },
      ips: { type: "array", items: { type: "string", format: "cidr" } },
      domain: { type: "string", format: "domain" },
      countries: { type: "array", items: { type: "string", format: "country" } },
      n: { type: "integer" },
    },
    additionalProperties: false,
  });

  it.each([
    [{}, "missing_name"],
    [{ name: 1 }, "bad_name"],
    [{ name: "x", ips: ["nope"] }, "bad_cidr"],
    [{ name: "x", domain: "nope nope" }, "bad_domain"],
    [{ name: "x", countries: ["XX"] }, "bad_country"],
    [{ name: "x", n: "1" }, "bad_n"],
    [{ name: "x", other: true }, "bad_other"],
    [[], "bad_body"],
    [JSON.parse('{"name":"x","__proto__":1}'), "bad___proto__"],
    [{ name: "x", constructor: 1 }, "bad_constructor"],
    [{ name: "x", toString: 1 }, "bad_toString"],
  ])("%j → %s", (input, reason) => {
    const result = validate(input);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.reason).toBe(reason);
  });
});

describe("storable text", () => {
  it("refuses NUL and lone surrogates, accepts any other unicode", () => {
    expect(isStorableText("héllo 👋 مرحبا \u202e\u0001")).toBe(true);
    expect(isStorableText("a\u0000b")).toBe(false);
    expect(isStorableText("a\ud800b")).toBe(false);
    expect(isStorableText("a\udc00")).toBe(false);
    expect(isStorableText("\ud83d\udc4b")).toBe(true);
  });

  it("names the first top-level field holding such text or too deep a nesting", () => {
    expect(unstorableField({ a: "ok", b: [1, { c: "ok" }] })).toBeNull();
    expect(unstorableField({ a: "ok", b: { c: ["\u0000"] } })).toBe("b");
    expect(unstorableField({ a: { "k\u0000": 1 } })).toBe("a");
    expect(unstorableField({ "\ud800": 1 })).toBe("\ud800");
    let deep: unknown = "x";
    for (let i = 0; i < 40; i++) deep = { d: deep };
    expect(unstorableField({ firewall: deep })).toBe("firewall");
    let shallow: unknown = "x";
    for (let i = 0; i < 20; i++) shallow = [shallow];
    expect(unstorableField({ firewall: shallow })).toBeNull();
  });
});
