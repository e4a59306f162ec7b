import { api, data, type Domain, type KeyDetails } from "../api.js";
import { serverKey } from "../auth.js";
import { OUTCOME_SERIES, StackedBars, outcomeStacks } from "../charts.js";
import { useOrg } from "../layout.js";
import { Link, to } from "../router.js";
import { Badge, Empty, Ext, Grade, PageTitle, RefusalBox, Section, Show, Time, idle, plural, useAnswer } from "../ui.js";

/**
 * The organization at a glance (issue 22, page 2): this cycle's usage against the allowance,
 * keys by status, domains with their grades, open and overdue findings, SIEM destinations'
 * health, installations awaiting approval. Each part loads on its own and says its own
 * refusal, so one missing permission does not blank the page.
 */

/** How many installations awaiting approval the overview lists (the most recently seen; the key's page has the rest). */
const PENDING_SHOWN = 100;

function Allowance(props: { used: number; allowance: number | null; resets: string; started: string }) {
  const { used, allowance } = props;
  const share = allowance ? Math.min(100, Math.round((used / allowance) * 100)) : null;
  return (
    <div class="allowance">
      <p class="big">
        {used.toLocaleString("en")} <span class="muted">of {allowance === null ? "unlimited" : allowance.toLocaleString("en")} calls</span>
      </p>
      {allowance !== null ? (
        <meter
          min={0}
          max={allowance}
          value={used}
          low={allowance * 0.8}
          high={allowance * 0.95}
          optimum={0}
          aria-label="Calls used this cycle"
        />
      ) : null}
      <p class="muted">
        {share !== null ? `${share}% used; ` : ""}cycle started <Time iso={props.started} />, resets <Time iso={props.resets} />.
      </p>
    </div>
  );
}

/**
 * The cycle's last day: the whole cycle is drawn, the days to come empty. A UTC day, as the
 * usage's days are (the chart says so), like the first one, `cycle_started_at`'s UTC date.
 */
function lastDayOf(resetsAt: string): string {
  return new Date(Date.parse(resetsAt) - 1000).toISOString().slice(0, 10);
}

/** The keys of the organization (first page of the list, up to 500). */
function useKeys(org: number) {
  return useAnswer(() => api.keys(org, { limit: 500 }), [org]);
}

/** The organization's calls by day over the cycle, every key summed by the service. */
function UsageChart(props: { org: number; from: string; to: string }) {
  const [usage] = useAnswer(() => api.orgUsage(props.org, props.from, props.to), [props.org, props.from, props.to]);
  return (
    <Show loaded={usage} label="Loading the usage…">
      {(d) => (
        <StackedBars
          title="This cycle's calls by day: allowed, and refused counted or not"
          from={props.from}
          to={props.to}
          days={d.usage}
          series={OUTCOME_SERIES}
          stacks={outcomeStacks}
        />
      )}
    </Show>
  );
}

function KeysByStatus(props: { keys: KeyDetails[]; org: number }) {
  const counts = new Map<string, number>();
  for (const key of props.keys) counts.set(key.status, (counts.get(key.status) ?? 0) + 1);
  if (props.keys.length === 0)
    return (
      <Empty>
        No keys yet. <Link href={to.keys(props.org)}>Create one</Link>.
      </Empty>
    );
  return (
    <ul class="tallies">
      {["active", "suspended", "expired", "revoked"].map((status) => (
        <li key={status}>
          <span class="tally">{counts.get(status) ?? 0}</span> <Badge value={status} />
        </li>
      ))}
    </ul>
  );
}

function PendingInstallations(props: { org: number }) {
  const [pending] = useAnswer(() => api.orgInstallations(props.org, { status: "pending", limit: PENDING_SHOWN }), [props.org]);
  return (
    <Show loaded={pending} label="Looking for installations awaiting approval…">
      {(d) =>
        d.installations.length === 0 ? (
          <Empty>No installation is waiting for approval.</Empty>
        ) : (
          <>
            <ul class="plain-list">
              {d.installations.map((install) => (
                <li key={`${install.key_id}:${install.install}`}>
                  <Ext text={install.install} /> on{" "}
                  <Link href={`${to.key(props.org, install.key_id)}?tab=installations`}>
                    <Ext text={install.key_name} />
                  </Link>
                  , first seen <Time iso={install.first_seen_at} />
                </li>
              ))}
            </ul>
            {d.has_more ? (
              <p class="hint">
                The {d.installations.length.toLocaleString("en")} most recently seen of {d.total.toLocaleString("en")}; each key's
                Installations tab lists all of its own.
              </p>
            ) : null}
          </>
        )
      }
    </Show>
  );
}

function DomainGrades(props: { domains: Domain[]; org: number }) {
  const verified = props.domains.filter((d) => d.verified);
  const first = verified[0]?.name ?? "";
  const [grades] = useAnswer(() => (serverKey() && first ? data.grades(first) : idle<never>()), [first]);
  const byName = grades.state === "ok" ? new Map(grades.data.domains.map((g) => [g.domain, g])) : new Map();
  if (props.domains.length === 0)
    return (
      <Empty>
        No domains yet. <Link href={to.domains(props.org)}>Add one</Link>.
      </Empty>
    );
  return (
    <>
      {!serverKey() ? (
        <p class="hint">
          Grades need a server key: <Link href={to.scans(props.org)}>connect one on the Scans page</Link>.
        </p>
      ) : grades.state === "refused" ? (
        <RefusalBox refusal={grades.refusal} title="Grades" />
      ) : null}
      <ul class="domain-grades">
        {props.domains.map((d) => {
          const g = byName.get(d.name);
          return (
            <li key={d.name}>
              <span class="name">
                {d.verified ? (
                  <Link href={to.scan(props.org, d.name)}>
                    <Ext text={d.name} />
                  </Link>
                ) : (
                  <>
                    <Ext text={d.name} /> <Badge value="pending" label="not verified" />
                  </>
                )}
              </span>
              {d.verified ? (
                <span class="grades">
                  web <Grade grade={g?.web} /> dns <Grade grade={g?.dns} />
                </span>
              ) : null}
            </li>
          );
        })}
      </ul>
    </>
  );
}

function Findings(props: { org: number }) {
  const [open] = useAnswer(() => (serverKey() ? data.assignments({}) : idle<never>()), []);
  if (!serverKey()) {
    return (
      <p class="hint">
        Findings need a server key: <Link href={to.findings(props.org)}>connect one on the Findings page</Link>.
      </p>
    );
  }
  return (
    <Show loaded={open}>
      {(d) => {
        const overdue = d.assignments.filter((a) => a.overdue).length;
        return (
          <ul class="tallies">
            <li>
              <span class="tally">{d.count}</span> open or in progress
            </li>
            <li>
              <span class={`tally ${overdue > 0 ? "bad-text" : ""}`}>{overdue}</span> overdue
            </li>
            <li>
              <Link href={`${to.findings(props.org)}?overdue=1`}>See the overdue ones</Link>
            </li>
          </ul>
        );
      }}
    </Show>
  );
}

function SiemHealth(props: { org: number }) {
  const [list] = useAnswer(() => api.destinations(props.org, { limit: 500 }), [props.org]);
  return (
    <Show loaded={list}>
      {(d) =>
        d.destinations.length === 0 ? (
          <Empty>
            No SIEM destination. <Link href={to.siem(props.org)}>Add one</Link>.
          </Empty>
        ) : (
          <ul class="plain-list">
            {d.destinations.map((dest) => (
              <li key={dest.id}>
                <Badge value={dest.last_error ? "failed" : "ok"} label={dest.last_error ? "failing" : "healthy"} /> {dest.kind} #{dest.id}:{" "}
                {plural(dest.pending ?? 0, "event")} waiting, {plural(dest.failed ?? 0, "failure")}, last delivered{" "}
                <Time iso={dest.last_delivered_at} />
              </li>
            ))}
          </ul>
        )
      }
    </Show>
  );
}

export function OverviewPage() {
  const { id: org, org: record } = useOrg();
  const [keys] = useKeys(org);
  const [domains] = useAnswer(() => api.domains(org, { limit: 500 }), [org]);
  return (
    <>
      <section class="overview-head">
        <Show loaded={record} label="Loading the organization…">
          {(d) => (
            <>
              <PageTitle
                sub={
                  <>
                    Plan {d.org.plan} · subscription{" "}
                    <Badge value={d.org.subscription === "active" ? "active" : "expired"} label={d.org.subscription} /> · findings fixed
                    within {d.org.fix_target_days} days
                  </>
                }
              >
                <Ext text={d.org.name} />
              </PageTitle>
            </>
          )}
        </Show>
      </section>
      <div class="cards">
        <Section title="This cycle">
          <Show loaded={record}>
            {(d) => (
              <>
                <Allowance used={d.org.used} allowance={d.org.allowance} started={d.org.cycle_started_at} resets={d.org.cycle_resets_at} />
                <UsageChart org={org} from={d.org.cycle_started_at.slice(0, 10)} to={lastDayOf(d.org.cycle_resets_at)} />
              </>
            )}
          </Show>
        </Section>
        <Section title="Keys">
          <Show loaded={keys}>{(d) => <KeysByStatus keys={d.keys} org={org} />}</Show>
        </Section>
        <Section title="Installations awaiting approval">
          <PendingInstallations org={org} />
        </Section>
        <Section title="Domains">
          <Show loaded={domains}>{(d) => <DomainGrades domains={d.domains} org={org} />}</Show>
        </Section>
        <Section title="Findings">
          <Findings org={org} />
        </Section>
        <Section title="SIEM destinations">
          <SiemHealth org={org} />
        </Section>
      </div>
    </>
  );
}
