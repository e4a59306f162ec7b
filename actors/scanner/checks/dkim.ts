import { defineCheck, outcome } from "../finding.js";
import { isDkimRecord, parseDkim } from "../records/mail-tls.js";
import type { DnsEvidence } from "../../../shared/platform/net/outbound/evidence.js";
import { formatAnswer, hasNullMx, lookupFailed, txtEvidence, txtTexts } from "./support.js";

/**
 * DKIM keys at the usual selectors. DNS cannot list a domain's selectors, so "not
 * found" means "not at a common selector" and is a warning, not proof of absence.
 */
export const dkim = defineCheck({
  id: "mail:dkim",
  group: "mail",
  label: "DKIM keys",
  section: "dns",
  results: {
    "dkim-found": { status: "pass", summary: "A DKIM public key was found." },
    "dkim-revoked": { status: "warn", summary: "Only revoked DKIM keys (empty p=) were found at the common selectors." },
    "dkim-invalid": { status: "fail", summary: "A DKIM key record is malformed." },
    "dkim-not-found": { status: "warn", summary: "No DKIM key at the common selectors." },
    "dkim-not-applicable": { status: "info", summary: "The domain sends no mail (null MX and no DKIM keys)." },
    "dkim-lookup-failed": { status: "warn", summary: "The DKIM selectors could not be queried." },
  },
  run(e: DnsEvidence) {
    const found = e.dkim.flatMap(({ selector, answer }) =>
      txtTexts(answer)
        .filter(isDkimRecord)
        .map((text) => ({ selector, name: answer.name, text, parsed: parseDkim(text) })),
    );
    const tried = e.dkim.map((d) => d.selector).join(", ");
    if (found.length === 0) {
      if (e.dkim.length > 0 && e.dkim.every((d) => lookupFailed(d.answer)))
        return outcome("dkim-lookup-failed", `Every selector lookup failed (${tried}).`);
      if (hasNullMx(e.mx)) return outcome("dkim-not-applicable", "Null MX and no DKIM keys: consistent for a domain without mail.");
      return outcome(
        "dkim-not-found",
        `No key at selectors ${tried || "(none tried)"}; a key at another selector would not be seen.`,
        e.dkim.map((d) => formatAnswer(d.answer)).join("\n"),
      );
    }
    const evidence = found.map((f) => txtEvidence(f.name, [f.text])).join("\n");
    const broken = found.filter((f) => f.parsed.errors.length > 0);
    const live = found.filter((f) => f.parsed.errors.length === 0 && f.parsed.publicKey !== "");
    if (live.length > 0) {
      return outcome(
        "dkim-found",
        `Key(s) at selector ${[...new Set(live.map((f) => f.selector))].join(", ")} (${live.map((f) => f.parsed.keyType).join(", ")}).`,
        evidence,
      );
    }
    if (broken.length > 0)
      return outcome("dkim-invalid", broken.map((f) => `${f.selector}: ${f.parsed.errors.join(", ")}`).join("; "), evidence);
    return outcome("dkim-revoked", `Revoked key(s) at ${found.map((f) => f.selector).join(", ")}: signatures with them fail.`, evidence);
  },
});
