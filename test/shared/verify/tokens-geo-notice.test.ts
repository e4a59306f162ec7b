import { describe, expect, it } from "vitest";
import { clientNotice, compareVersions } from "../../../ingress/routes/verify/notice.js";
import {
  deriveSigningKey,
  ENTITLEMENT_TTL_S,
  installHash,
  issueEntitlement,
  verifyToken,
  type EntitlementClaims,
  type LifelineClaims,
} from "../../../shared/platform/crypto/entitlement.js";
import { openCountryDb } from "../../../shared/platform/geo/country.js";

describe("entitlement tokens", () => {
  const master = Buffer.alloc(32, 7);
  const input = {
    iss: "https://gw.example/api/v1",
    keyId: 5,
    orgId: 2,
    domain: "example.com",
    scopes: "full_access",
    environment: "production",
    trial: false,
    install: "site-1",
    nowS: 1_900_000_000,
  };

  it("derives the same Ed25519 key from the same master secret, another from another", () => {
    expect(deriveSigningKey(master).jwk).toEqual(deriveSigningKey(Buffer.from(master)).jwk);
    expect(deriveSigningKey(Buffer.alloc(32, 8)).jwk.x).not.toBe(deriveSigningKey(master).jwk.x);
  });

  it("issues a 7-day entitlement and a lifeline bound to it and the installation", () => {
    const key = deriveSigningKey(master);
    const issued = issueEntitlement(key, input);
    expect(issued.expires).toBe(input.nowS + ENTITLEMENT_TTL_S);
    const ent = verifyToken<EntitlementClaims>(issued.entitlement, key.jwk, input.nowS);
    const life = verifyToken<LifelineClaims>(issued.lifeline, key.jwk, input.nowS);
    expect(ent).toMatchObject({ typ: "entitlement", key: 5, org: 2, dom: "example.com", exp: issued.expires });
    expect(life).toMatchObject({ typ: "lifeline", ent: ent?.jti, ins: installHash("site-1") });
    expect(verifyToken(issued.entitlement, key.jwk, issued.expires)).toBeNull();
    expect(verifyToken(issued.entitlement, deriveSigningKey(Buffer.alloc(32, 9)).jwk, input.nowS)).toBeNull();
    expect(verifyToken(`${issued.entitlement}x`, key.jwk, input.nowS)).toBeNull();
    expect(installHash(undefined)).toBe("");
  });
});

describe("country database", () => {
  it("places addresses with the packaged database and lets unknown ones through as null", async () => {
    const db = await openCountryDb(null);
    expect(db.countryOf("8.8.8.8")).toBe("US");
    expect(db.countryOf("81.2.69.160")).toBe("GB");
    expect(db.countryOf("2a02:8108::1")).toBe("DE");
    expect(db.countryOf("10.0.0.1")).toBeNull();
    expect(db.countryOf("not an address")).toBeNull();
  });
  it("fails loudly on an unreadable GEOIP_DB", async () => {
    await expect(openCountryDb("/nonexistent/country.mmdb")).rejects.toThrow();
  });
});

describe("client library notice", () => {
  it("compares versions", () => {
    expect(compareVersions("1.9.9", "2.0.0")).toBe(-1);
    expect(compareVersions("v2.0", "2.0.0")).toBe(0);
    expect(compareVersions("2.0.1-beta", "2.0.0")).toBe(1);
    expect(compareVersions("x", "2.0.0")).toBeNull();
  });
  it("notices outdated official libraries only", () => {
    expect(clientNotice("gateway-js/1.2.0", undefined)).toMatch(/gateway-js 1\.2\.0 is outdated: upgrade to 2\.0\.0/);
    expect(clientNotice("gateway-js/2.0.0", undefined)).toBeUndefined();
    expect(clientNotice("someone-else/0.1", undefined)).toBeUndefined();
    expect(clientNotice(undefined, "1.0")).toMatch(/outdated/);
    expect(clientNotice(undefined, undefined)).toBeUndefined();
  });
});
