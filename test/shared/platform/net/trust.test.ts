import tls from "node:tls";
import { describe, expect, it } from "vitest";
import { trustedCas } from "../../../../shared/platform/net/outbound/trust.js";

describe("the certificate authorities of outbound TLS", () => {
  it("are Node's defaults when no extra CA is set", () => {
    expect(trustedCas(null)).toBeUndefined();
    expect(trustedCas(undefined)).toBeUndefined();
    expect(trustedCas("")).toBeUndefined();
  });

  it("keep every bundled root beside the operator's extra CA: Node's `ca` replaces them otherwise", () => {
    const extra = "-----BEGIN CERTIFICATE-----\nextra\n-----END CERTIFICATE-----\n";
    const cas = trustedCas(extra);
    expect(cas).toHaveLength(tls.rootCertificates.length + 1);
    expect(cas).toEqual(expect.arrayContaining([...tls.rootCertificates, extra]));
  });
});
