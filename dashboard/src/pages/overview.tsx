import { api, data, type Domain, type KeyDetails, type UsageDay } from "../api.js";
import { serverKey } from "../auth.js";
import { OUTCOME_SERIES, StackedBars, outcomeStacks } from "../charts.js";
import type { Answer } from "../http.js";
import { useOrg } from "../layout.js";
import { Link, to } from "../router.js";
import { Badge, Empty, Ext, Grade, Loading, PageTitle, RefusalBox, Section, Show, Time, idle, plural, useAnswer } from "../ui.js";

/**
 * The organization at a glance (issue 22, page 2): this cycle's usage against the allowance,
 * keys by status, domains with their grades, open and overdue findings, SIEM destinations'
 * health, installations awaiting approval. Each part loads on its own and says its own
 * refusal, so one missing permission does not blank the page.
 */

/** How many keys the overview reads usage and installations of (the busiest first would need a list order the API does not give). */
const KEY_SAMPLE = 25;

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

/** The cycle's last day: the whole cycle is drawn, the days to come empty. */
function lastDayOf(resetsAt: string): string {
  return new Date(Date.parse(resetsAt) - 1000).toISOString().slice(0, 10);
}

/** The keys of the organization (first page of the list, up to 500). */
function useKeys(org: number) {
  return useAnswer(() => api.keys(org, { limit: 500 }), [org]);
}

/** Sums the per-key usage of the cycle into one series per day: counted and refused. */
async function cycleUsage(keys: KeyDetails[], from: string, to: string): Promise<Answer<{ usage: UsageDay[] }>> {
  const answers = await Promise.all(keys.slice(0, KEY_SAMPLE).map((k) => api.usage(k.id, from, to)));
  const refused = answers.find((a) => !a.ok);
  if (refused && !refused.ok) return refused;
  const days = new Map<string, UsageDay>();
  for (const answer of answers) {
    if (!answer.ok) continue;
    for (const day of answer.data.usage) {
      const sum = days.get(day.day) ?? { day: day.day, calls: 0, counted: 0, refused: 0, by_reason: {}, by_endpoint: {} };
      sum.calls += day.calls;
      sum.counted += day.counted;
      sum.refused += day.refused;
      days.set(day.day, sum);
    }
  }
  return { ok: true, status: 200, headers: new Headers(), data: { usage: [...days.values()] } };
}

function UsageChart(props: { keys: KeyDetails[]; from: string; to: string }) {
  const ids = props.keys.map((k) => k.id).join(",");
  const [usage] = useAnswer(() => cycleUsage(props.keys, props.from, props.to), [ids, props.from, props.to]);
  return (
    <Show loaded={usage} label="Adding up the usage…">
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

function PendingInstallations(props: { keys: KeyDetails[]; org: number }) {
  const live = props.keys.filter((k) => k.status !== "revoked").slice(0, KEY_SAMPLE);
  const ids = live.map((k) => k.id).join(",");
  const [pending] = useAnswer(async () => {
    const answers = await Promise.all(live.map(async (k) => ({ key: k, answer: await api.installations(k.id) })));
    const failed = answers.find((a) => !a.answer.ok);
    if (failed && !failed.answer.ok) return failed.answer;
    const rows = answers.flatMap(({ key, answer }) =>
      answer.ok ? answer.data.installations.filter((i) => i.status === "pending").map((i) => ({ key, install: i })) : [],
    );
    return { ok: true as const, status: 200, headers: new Headers(), data: rows };
  }, [ids]);
  return (
    <Show loaded={pending} label="Looking for installations awaiting approval…">
      {(rows) =>
        rows.length === 0 ? (
          <Empty>No installation is waiting for approval.</Empty>
        ) : (
          <ul class="plain-list">
            {rows.map(({ key, install }) => (
              <li key={`${key.id}:${install.install}`}>
                <Ext text={install.install} /> on{" "}
                <Link href={`${to.key(props.org, key.id)}?tab=installations`}>
                  <Ext text={key.name} />
                </Link>
                , first seen <Time iso={install.first_seen_at} />
              </li>
            ))}
          </ul>
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
  const [list] = useAnswer(() => api.destinations(props.org), [props.org]);
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
                {keys.state === "ok" ? (
                  <UsageChart keys={keys.data.keys} from={d.org.cycle_started_at.slice(0, 10)} to={lastDayOf(d.org.cycle_resets_at)} />
                ) : keys.state === "loading" ? (
                  <Loading />
                ) : null}
              </>
            )}
          </Show>
        </Section>
        <Section title="Keys">
          <Show loaded={keys}>{(d) => <KeysByStatus keys={d.keys} org={org} />}</Show>
        </Section>
        <Section title="Installations awaiting approval">
          <Show loaded={keys}>{(d) => <PendingInstallations keys={d.keys} org={org} />}</Show>
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
