import { defineCheck, outcome } from "../finding.js";
import type { DnsEvidence } from "../../../shared/platform/net/outbound/evidence.js";
import { formatAnswer } from "./support.js";

/**
 * A CNAME whose target no longer exists (NXDOMAIN) is the classic subdomain-takeover
 * opening: whoever registers the target name (a storage bucket, an app slot) serves
 * content under this domain.
 */
export const danglingCname = defineCheck({
  id: "dns:dangling-cname",
  group: "dns",
  label: "Dangling CNAME records",
  section: "dns",
  results: {
    "dangling-none": { status: "pass", summary: "No CNAME of the checked names points at a non-existent target." },
    "dangling-found": { status: "fail", summary: "A CNAME points at a name that does not exist (subdomain takeover risk)." },
  },
  run(e: DnsEvidence) {
    const dangling = e.cnames.filter((c) => c.target !== null && c.target.status === "nxdomain");
    const checked = e.cnames.map((c) => c.name).join(", ") || "none";
    if (dangling.length === 0) {
      const aliases = e.cnames.filter((c) => c.target !== null);
      return outcome(
        "dangling-none",
        `Checked ${checked}; ${aliases.length} alias(es), all resolving.`,
        aliases.map((c) => formatAnswer(c.cname)).join("\n"),
      );
    }
    const evidence = dangling.map((c) => `${formatAnswer(c.cname)}\n${c.target ? formatAnswer(c.target) : ""}`).join("\n");
    const pairs = dangling.map((c) => {
      const target = c.cname.records.find((r) => r.type === "CNAME");
      return `${c.name} -> ${target && target.type === "CNAME" ? target.target : "?"}`;
    });
    return outcome("dangling-found", `Target does not exist: ${pairs.join("; ")}. Remove the record or reclaim the target.`, evidence);
  },
});
