/**
 * Addresses in scan evidence pass the scan's address policy, as a connection would. A name
 * the customer controls (the domain, an MX host, a CNAME target, an SPF `a:` name) may point
 * at the service's own network, `MX 10 redis.default.svc.cluster.local` say; a finding that
 * quoted the A record would tell the customer what an internal name resolves to. Each A and
 * AAAA record bound for evidence is checked with the SSRF guard's `checkAddress`, and a
 * refused one is written as NON_PUBLIC_ADDRESS. The records stay (a check still sees that
 * the name has addresses, and which of them are not public).
 */
import { checkAddress, type OutboundPolicy } from "../../../shared/platform/net/address-policy.js";
import type { DnsQuery } from "../../../shared/platform/net/outbound/dns-client.js";
import { type DnsAnswer, type DnsRecord, NON_PUBLIC_ADDRESS } from "../../../shared/platform/net/outbound/evidence.js";

function masked(record: DnsRecord, policy: OutboundPolicy): DnsRecord {
  if (record.type !== "A" && record.type !== "AAAA") return record;
  return checkAddress(record.address, policy).ok ? record : { ...record, address: NON_PUBLIC_ADDRESS };
}

/** The answer with every address the policy refuses replaced by NON_PUBLIC_ADDRESS. */
export function publicAddressesOnly(answer: DnsAnswer, policy: OutboundPolicy): DnsAnswer {
  const records = answer.records.map((record) => masked(record, policy));
  return records.every((record, i) => record === answer.records[i]) ? answer : { ...answer, records };
}

/** A DNS client whose answers are fit for evidence. Connections resolve through the unmasked one (the guard decides there). */
export function evidenceQuery(query: DnsQuery, policy: OutboundPolicy): DnsQuery {
  return async (name, type, flags) => publicAddressesOnly(await query(name, type, flags), policy);
}
