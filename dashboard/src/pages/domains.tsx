import { useState } from "preact/hooks";
import { api, type Domain } from "../api.js";
import { may } from "../auth.js";
import { useOrg } from "../layout.js";
import { Link, to } from "../router.js";
import {
  Badge,
  CopyField,
  Empty,
  Ext,
  Field,
  Outcome,
  PageTitle,
  Section,
  Show,
  Time,
  useAction,
  useAnswer,
  valueOf,
  type InputEvent,
  type OutcomeState,
} from "../ui.js";
import { domainProblem } from "../validate.js";

/**
 * Domains (operator-api.md "Organizations", section 5 "Lists"): add one, publish its TXT
 * record (copy buttons), "verify now" with what the lookup found and what to fix.
 */

interface Checked {
  found: string[];
  error?: string;
}

function VerifyResult(props: { domain: Domain; checked: Checked | null; verifiedNow: boolean }) {
  const { domain, checked } = props;
  if (domain.verified)
    return props.verifiedNow ? (
      <p class="done">Verified: the organization owns {domain.name}. Keys may lock to it and scans may run.</p>
    ) : null;
  if (!checked) return null;
  if (checked.error) {
    return (
      <div class="refusal" role="alert">
        The lookup of <code>{domain.txt_record.name}</code> failed (<code>{checked.error}</code>): the DNS server did not answer. Try again
        in a minute.
      </div>
    );
  }
  return (
    <div class="refusal" role="alert">
      <p>
        Not verified yet: the TXT records at <code>{domain.txt_record.name}</code> do not include the value below.
      </p>
      {checked.found.length === 0 ? (
        <p>No TXT record was found there. Publish it at your DNS host; a new record can take a few minutes (up to its TTL) to be seen.</p>
      ) : (
        <>
          <p>Found instead:</p>
          <ul>
            {checked.found.map((value, i) => (
              <li key={i} class="mono break">
                <Ext text={value} />
              </li>
            ))}
          </ul>
          <p>Fix the value to match exactly (no quotes, no spaces around it).</p>
        </>
      )}
    </div>
  );
}

function DomainCard(props: { org: number; domain: Domain; onVerified: (domain: Domain) => void }) {
  const [checked, setChecked] = useState<Checked | null>(null);
  const [outcome, setOutcome] = useState<OutcomeState>(null);
  const [busy, setBusy] = useState(false);
  const [verifiedNow, setVerifiedNow] = useState(false);
  const { domain } = props;
  const verify = async () => {
    setBusy(true);
    setOutcome(null);
    const answer = await api.verifyDomain(props.org, domain.name);
    setBusy(false);
    if (!answer.ok) return setOutcome({ refusal: answer });
    setChecked(answer.data.checked ?? null);
    if (answer.data.domain.verified) {
      setVerifiedNow(true);
      props.onVerified(answer.data.domain);
    }
  };
  return (
    <Section
      id={`domain-${domain.name}`}
      title={domain.name}
      actions={domain.verified ? <Badge value="verified" /> : <Badge value="pending" label="not verified" />}
    >
      {domain.verified ? (
        <p>
          Verified <Time iso={domain.verified_at} empty="" />. <Link href={to.scan(props.org, domain.name)}>See its scans</Link>.
        </p>
      ) : (
        <>
          <p>Publish this TXT record at your DNS host, then verify:</p>
          <CopyField label="Record name" value={domain.txt_record.name} />
          <CopyField label="Record value" value={domain.txt_record.value} />
          {may("manage") ? (
            <p>
              <button type="button" class="primary" onClick={() => void verify()} disabled={busy}>
                {busy ? "Looking it up…" : "Verify now"}
              </button>
            </p>
          ) : null}
        </>
      )}
      <VerifyResult domain={domain} checked={checked} verifiedNow={verifiedNow} />
      <Outcome outcome={outcome} />
    </Section>
  );
}

export function DomainsPage() {
  const { id: org } = useOrg();
  const [list, reload] = useAnswer(() => api.domains(org, { limit: 500 }), [org]);
  const [added, setAdded] = useState<Domain[]>([]);
  const [name, setName] = useState("");
  const [problem, setProblem] = useState<string | null>(null);
  const [outcome, run] = useAction();
  const add = async (event: Event) => {
    event.preventDefault();
    const p = domainProblem(name);
    setProblem(p);
    if (p) return;
    const answer = await run(api.addDomain(org, name.trim()), (d) => `${d.domain.name} added: publish its TXT record, then verify.`);
    if (answer.ok) {
      setAdded([answer.data.domain, ...added.filter((d) => d.name !== answer.data.domain.name)]);
      setName("");
      reload();
    }
  };
  const replace = (domain: Domain) => setAdded([domain, ...added.filter((d) => d.name !== domain.name)]);
  const merge = (listed: Domain[]) => {
    const byName = new Map(listed.map((d) => [d.name, d]));
    for (const d of added) byName.set(d.name, d);
    return [...byName.values()].sort((a, b) => Number(a.verified) - Number(b.verified) || a.name.localeCompare(b.name));
  };
  return (
    <>
      <PageTitle sub="A domain is proved yours by a DNS TXT record. Client keys lock to verified domains; scans run on them.">
        Domains
      </PageTitle>
      {may("manage") ? (
        <Section title="Add a domain">
          <form class="inline-form" onSubmit={(e) => void add(e)} noValidate>
            <Field label="Domain" error={problem}>
              {(a) => (
                <input
                  {...a}
                  value={name}
                  placeholder="shop.example.com"
                  onInput={(e: InputEvent) => setName(valueOf(e))}
                  autocomplete="off"
                />
              )}
            </Field>
            <button type="submit" class="primary">
              Add the domain
            </button>
          </form>
          <Outcome outcome={outcome} />
        </Section>
      ) : (
        <p class="muted">Your role may read the domains; an admin or owner adds and verifies them.</p>
      )}
      <Show loaded={list} label="Loading the domains…">
        {(d) => {
          const all = merge(d.domains);
          return all.length === 0 ? (
            <Empty>No domains yet.</Empty>
          ) : (
            all.map((domain) => <DomainCard key={domain.name} org={org} domain={domain} onVerified={replace} />)
          );
        }}
      </Show>
      {list.state === "refused" && added.length > 0
        ? added.map((domain) => <DomainCard key={domain.name} org={org} domain={domain} onVerified={replace} />)
        : null}
    </>
  );
}
