import { defineCheck, outcome } from "../finding.js";
import { isMtaStsTxt, mxMatchesPattern, parseMtaStsPolicy, parseMtaStsTxt } from "../records/mail-tls.js";
import type { DnsEvidence } from "../../../shared/platform/net/outbound/evidence.js";
import { formatAnswer, hasNullMx, lookupFailed, txtEvidence, txtTexts } from "./support.js";

/**
 * MTA-STS (RFC 8461): a `_mta-sts` TXT announcing a policy, the policy file served over
 * valid HTTPS with status 200 and no redirect, in enforce mode, listing every MX.
 */
export const mtaSts = defineCheck({
  id: "mail:mta-sts",
  group: "mail",
  label: "MTA-STS",
  section: "dns",
  results: {
    "mta-sts-enforce": { status: "pass", summary: "MTA-STS is enforced: senders require TLS to the listed MX hosts." },
    "mta-sts-testing": { status: "warn", summary: "MTA-STS is in testing mode: failures are reported, not prevented." },
    "mta-sts-mode-none": { status: "warn", summary: "The MTA-STS policy mode is none." },
    "mta-sts-mx-mismatch": {
      status: "fail",
      summary: "An MX host is not covered by the MTA-STS policy: senders that enforce will not deliver to it.",
    },
    "mta-sts-policy-invalid": { status: "fail", summary: "The MTA-STS record or policy file is invalid." },
    "mta-sts-policy-unavailable": { status: "fail", summary: "The MTA-STS policy file cannot be fetched over valid HTTPS." },
    "mta-sts-missing": { status: "warn", summary: "No MTA-STS: mail to this domain can be downgraded to plain text." },
    "mta-sts-not-applicable": { status: "info", summary: "The domain receives no mail." },
    "mta-sts-lookup-failed": { status: "warn", summary: "The MTA-STS record could not be retrieved." },
  },
  run(e: DnsEvidence) {
    const name = e.mtaStsTxt.name;
    if (lookupFailed(e.mtaStsTxt)) return outcome("mta-sts-lookup-failed", `TXT lookup of ${name} failed.`);
    const texts = txtTexts(e.mtaStsTxt).filter(isMtaStsTxt);
    const mxHosts = e.mx.records.flatMap((r) => (r.type === "MX" && r.exchange !== "" ? [r.exchange] : []));
    if (texts.length === 0) {
      if (hasNullMx(e.mx) || mxHosts.length === 0) return outcome("mta-sts-not-applicable", "No MX hosts to protect.");
      return outcome("mta-sts-missing", `No v=STSv1 record at ${name}.`, formatAnswer(e.mtaStsTxt));
    }
    const txt = txtEvidence(name, texts);
    if (texts.length > 1)
      return outcome("mta-sts-policy-invalid", `${texts.length} STSv1 records at ${name}; senders ignore them all.`, txt);
    const record = parseMtaStsTxt(texts[0]);
    if (record.errors.length > 0) return outcome("mta-sts-policy-invalid", record.errors.join("; "), txt);
    const fetched = e.mtaStsPolicy;
    if (!fetched || fetched.status === null)
      return outcome("mta-sts-policy-unavailable", `The policy could not be fetched: ${fetched?.error ?? "not attempted"}.`, txt);
    const request = `GET ${fetched.url} -> ${fetched.status}`;
    if (fetched.tls && !fetched.tls.authorized) {
      return outcome(
        "mta-sts-policy-unavailable",
        `The policy host's certificate does not validate (${fetched.tls.authorizationError ?? "untrusted"}).`,
        `${txt}\n${request}`,
      );
    }
    if (fetched.status !== 200)
      return outcome(
        "mta-sts-policy-unavailable",
        `The policy URL answered ${fetched.status}; RFC 8461 3.3 requires 200 without redirects.`,
        `${txt}\n${request}`,
      );
    const policy = parseMtaStsPolicy(fetched.body);
    const evidence = `${txt}\n${request}\n${fetched.body.trim()}`;
    if (policy.errors.length > 0) return outcome("mta-sts-policy-invalid", policy.errors.join("; "), evidence);
    if (policy.mode === "none") return outcome("mta-sts-mode-none", "mode: none withdraws the policy.", evidence);
    const uncovered = mxHosts.filter((host) => !policy.mx.some((pattern) => mxMatchesPattern(host, pattern)));
    if (uncovered.length > 0) return outcome("mta-sts-mx-mismatch", `Not matched by any mx: line: ${uncovered.join(", ")}.`, evidence);
    if (policy.mode === "testing")
      return outcome("mta-sts-testing", `mode: testing, max_age ${policy.maxAge}; switch to enforce once TLS reports are clean.`, evidence);
    return outcome("mta-sts-enforce", `mode: enforce, max_age ${policy.maxAge}, mx ${policy.mx.join(", ")}.`, evidence);
  },
});
