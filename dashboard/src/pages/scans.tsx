import { useState } from "preact/hooks";
import { api, budgetOf, data, type Budget, type Finding, type ScanResult, type ScanSection } from "../api.js";
import { may, serverKey } from "../auth.js";
import { ScoreHistory } from "../charts.js";
import { useOrg } from "../layout.js";
import { Link, to, usePlace, withQuery } from "../router.js";
import {
  Badge,
  Confirm,
  Empty,
  Ext,
  Field,
  Grade,
  Loading,
  Outcome,
  PageTitle,
  Section,
  Show,
  Time,
  idle,
  today,
  useAction,
  useAnswer,
  valueOf,
  type InputEvent,
} from "../ui.js";
import { ServerKeyPanel } from "./server-key.js";

/**
 * Scans (interface.md 4.5, 2.6): per verified domain, the grade cards, the score history
 * plotted, the findings with their evidence and how to fix them, a fresh scan within the
 * hourly budget, and risks accepted (with a note and an expiry) or released.
 */

export function ScansPage() {
  const { id: org } = useOrg();
  const [round, setRound] = useState(0);
  const [domains] = useAnswer(() => api.domains(org, { limit: 500 }), [org]);
  const verified = domains.state === "ok" ? domains.data.domains.filter((d) => d.verified).map((d) => d.name) : [];
  const first = verified[0] ?? "";
  const [grades] = useAnswer(() => (serverKey() && first ? data.grades(first) : idle<never>()), [first, round]);
  return (
    <>
      <PageTitle sub="Read-only scans of the organization's verified domains: DNS and e-mail, and the web site's security posture.">
        Scans
      </PageTitle>
      <ServerKeyPanel onChange={() => setRound(round + 1)} />
      <Show loaded={domains} label="Loading the domains…">
        {(d) => {
          const names = d.domains.filter((x) => x.verified).map((x) => x.name);
          if (names.length === 0)
            return (
              <Empty>
                No verified domain yet: <Link href={to.domains(org)}>verify one</Link> to scan it.
              </Empty>
            );
          const byName =
            grades.state === "ok"
              ? new Map(grades.data.domains.map((g) => [g.domain, g]))
              : new Map<string, { web: string | null; dns: string | null }>();
          return (
            <ul class="domain-grades big-list">
              {names.map((name) => {
                const g = byName.get(name);
                return (
                  <li key={name}>
                    <span class="name">
                      <Link href={to.scan(org, name)}>
                        <Ext text={name} />
                      </Link>
                    </span>
                    <span class="grades">
                      web <Grade grade={g?.web} /> dns <Grade grade={g?.dns} />
                    </span>
                  </li>
                );
              })}
            </ul>
          );
        }}
      </Show>
      {grades.state === "refused" ? <Outcome outcome={{ refusal: grades.refusal }} /> : null}
    </>
  );
}

function BudgetLine(props: { budget: Budget | null }) {
  const { budget } = props;
  if (!budget) return null;
  return (
    <p class="muted">
      Fresh scans left this hour: <strong>{budget.remaining}</strong> of {budget.limit}; the budget resets at{" "}
      <Time iso={new Date(budget.resetAt * 1000).toISOString()} />.
    </p>
  );
}

function GradeCard(props: { title: string; section: ScanSection }) {
  const { section } = props;
  return (
    <div class="grade-card">
      <h2 class="card-title">{props.title}</h2>
      <p>
        <Grade grade={section.grade} /> <span class="score">{section.score} / 100</span>
      </p>
      <p class="muted">
        {section.fail_count} failing · {section.warn_count} warnings
        {section.scanned_at ? (
          <>
            {" "}
            · <Time iso={section.scanned_at} />
          </>
        ) : null}
      </p>
    </div>
  );
}

const STATUS_ORDER: Record<string, number> = { fail: 0, warn: 1, info: 2, pass: 3 };

/** The acceptance's default last day: 90 days from the service's (UTC) today. */
function inNinetyDays(): string {
  return new Date(Date.now() + 90 * 86_400_000).toISOString().slice(0, 10);
}

function FindingItem(props: { org: number; domain: string; finding: Finding; onChanged: () => void }) {
  const { finding } = props;
  const [note, setNote] = useState("");
  const [until, setUntil] = useState(inNinetyDays());
  const [outcome, run] = useAction();
  const accept = async () => {
    const answer = await run(
      api.acceptRisk(props.org, {
        domain: props.domain,
        finding_key: finding.id,
        note: note.trim(),
        expires_at: until ? `${until}T23:59:59Z` : null,
      }),
      until ? `Risk accepted until ${until} ends (UTC).` : "Risk accepted until released.",
    );
    if (answer.ok) props.onChanged();
  };
  const release = async () => {
    const answer = await run(api.releaseRisk(props.org, props.domain, finding.id), "Acceptance released: the finding counts again.");
    if (answer.ok) props.onChanged();
  };
  const ack = finding.acknowledgement;
  return (
    <li class="finding" id={`finding-${finding.id}`}>
      <h3>
        <Badge value={finding.status} /> <Ext text={finding.label} /> <code class="muted">{finding.id}</code>
        {finding.acknowledged ? <Badge value="accepted" label="risk accepted" /> : null}
      </h3>
      <p>
        <Ext text={finding.summary} />
      </p>
      {finding.detail ? (
        <p class="text-block">
          <strong>How to fix: </strong>
          <Ext text={finding.detail} />
        </p>
      ) : null}
      {finding.evidence ? (
        <>
          <p class="label">Evidence</p>
          <pre class="evidence">
            <Ext text={finding.evidence} />
          </pre>
        </>
      ) : null}
      {ack ? (
        <p class="muted">
          {ack.expired ? "An acceptance expired" : "Accepted"} <Time iso={ack.acked_at} />
          {ack.expires_at ? (
            <>
              {" "}
              until <Time iso={ack.expires_at} />
            </>
          ) : null}
          {ack.note ? (
            <>
              : “<Ext text={ack.note} />”
            </>
          ) : null}
        </p>
      ) : null}
      <div class="actions">
        {finding.status !== "pass" ? (
          <Link href={to.finding(props.org, props.domain, finding.id)} class="button-link">
            Owner and history
          </Link>
        ) : null}
        {may("manage") && finding.status !== "pass" && !finding.acknowledged ? (
          <Confirm label="Accept the risk" title={`Accept the risk of ${finding.label}?`} confirm="Accept the risk" onConfirm={accept}>
            <p>The finding stops counting against the grade's alerts until the date below; it is reviewed again then.</p>
            <Field label="Why (kept with the acceptance)">
              {(a) => <textarea {...a} rows={3} maxLength={2000} value={note} onInput={(e: InputEvent) => setNote(valueOf(e))} />}
            </Field>
            <Field label="Until" hint="The acceptance ends when this day ends in UTC.">
              {(a) => <input {...a} type="date" value={until} min={today()} onInput={(e: InputEvent) => setUntil(valueOf(e))} />}
            </Field>
          </Confirm>
        ) : null}
        {may("manage") && finding.acknowledged ? (
          <button type="button" onClick={() => void release()}>
            Release the acceptance
          </button>
        ) : null}
      </div>
      <Outcome outcome={outcome} />
    </li>
  );
}

function Findings(props: { org: number; domain: string; title: string; section: ScanSection; all: boolean; onChanged: () => void }) {
  const shown = props.section.findings
    .filter((f) => props.all || f.status !== "pass")
    .sort((a, b) => (STATUS_ORDER[a.status] ?? 9) - (STATUS_ORDER[b.status] ?? 9));
  return (
    <Section title={props.title}>
      {shown.length === 0 ? (
        <Empty>Nothing failing or worth a warning.</Empty>
      ) : (
        <ul class="findings">
          {shown.map((f) => (
            <FindingItem key={f.id} org={props.org} domain={props.domain} finding={f} onChanged={props.onChanged} />
          ))}
        </ul>
      )}
    </Section>
  );
}

export function ScanPage(props: { domain: string }) {
  const { id: org } = useOrg();
  const place = usePlace();
  const all = place.query.get("all") === "1";
  const [round, setRound] = useState(0);
  const [scan, reload] = useAnswer(() => (serverKey() ? data.scan(props.domain) : idle<ScanResult>()), [props.domain, round]);
  const [history, reloadHistory] = useAnswer(() => (serverKey() ? data.history(props.domain) : idle<never>()), [props.domain, round]);
  const [fresh, setFresh] = useState<{ result: ScanResult; budget: Budget | null } | null>(null);
  const [outcome, run] = useAction();
  const [busy, setBusy] = useState(false);
  const budget = fresh?.budget ?? (scan.state === "ok" ? budgetOf(scan.headers) : null);
  const scanNow = async () => {
    setBusy(true);
    const answer = await run(data.runScan(props.domain), "Scan done: the results below are fresh.");
    setBusy(false);
    if (answer.ok) {
      setFresh({ result: answer.data, budget: budgetOf(answer.headers) });
      reloadHistory();
    }
  };
  const changed = () => {
    setFresh(null);
    reload();
  };
  const result = fresh?.result ?? (scan.state === "ok" ? scan.data : null);
  return (
    <>
      <p class="crumbs">
        <Link href={to.scans(org)}>Scans</Link> /
      </p>
      <PageTitle>
        <Ext text={props.domain} />
      </PageTitle>
      <ServerKeyPanel onChange={() => setRound(round + 1)} />
      {serverKey() ? (
        <>
          <div class="scan-run">
            <button type="button" class="primary" onClick={() => void scanNow()} disabled={busy || budget?.remaining === 0}>
              {busy ? "Scanning… (up to 25 s)" : "Run a fresh scan"}
            </button>
            <BudgetLine budget={budget} />
          </div>
          <Outcome outcome={outcome} />
          {scan.state === "loading" && !fresh ? <Loading label="Loading the latest scan…" /> : null}
          {scan.state === "refused" && !fresh ? (
            scan.refusal.reason === "no_scan" ? (
              <Empty>No scan has run for this domain yet: run the first one.</Empty>
            ) : (
              <Outcome outcome={{ refusal: scan.refusal }} />
            )
          ) : null}
          {result ? (
            <>
              <div class="grade-cards">
                <GradeCard title="Web" section={result.web} />
                <GradeCard title="DNS and e-mail" section={result.dns} />
              </div>
              <Section title="Score history">
                <Show loaded={history} label="Loading the history…">
                  {(h) => <ScoreHistory title={`Scores of ${props.domain} over time`} history={h.history} />}
                </Show>
              </Section>
              <p>
                <Link href={withQuery(place, { all: all ? null : "1" })}>{all ? "Hide passing checks" : "Show passing checks too"}</Link>
              </p>
              <Findings org={org} domain={props.domain} title="Web findings" section={result.web} all={all} onChanged={changed} />
              <Findings
                org={org}
                domain={props.domain}
                title="DNS and e-mail findings"
                section={result.dns}
                all={all}
                onChanged={changed}
              />
            </>
          ) : null}
        </>
      ) : null}
    </>
  );
}
