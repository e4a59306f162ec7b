import { api, type Installation, type KeyDetails, type UsageDay } from "../api.js";
import { may } from "../auth.js";
import { OUTCOME_SERIES, StackedBars, outcomeStacks, reasonSeries, reasonStacks } from "../charts.js";
import { setQuery, usePlace, withQuery } from "../router.js";
import {
  Badge,
  CopyField,
  Empty,
  Ext,
  Field,
  Outcome,
  Pager,
  Section,
  Show,
  Table,
  Time,
  useAction,
  useAnswer,
  valueOf,
  type InputEvent,
} from "../ui.js";

/** The key page's tabs other than settings: installations, usage, integration. */

const ORDER: Record<Installation["status"], number> = { pending: 0, blocked: 1, approved: 2 };
const PAGE_SIZE = 50;

export function KeyInstallations(props: { id: number }) {
  const place = usePlace();
  const page = Math.max(1, Number(place.query.get("page") ?? "1") || 1);
  const [list, reload] = useAnswer(() => api.installations(props.id, { page, limit: PAGE_SIZE }), [props.id, page]);
  const [outcome, run] = useAction();
  const decide = async (install: string, decision: "approve" | "block") => {
    const answer = await run(
      api.decideInstallation(props.id, install, decision),
      decision === "approve" ? "Installation approved." : "Installation blocked.",
    );
    if (answer.ok) reload();
  };
  return (
    <Section title="Installations">
      <p class="hint">
        The first installation a key is seen on keeps working; each new one waits (<code>installation_pending</code>) until it is approved
        here. A blocked one is refused <code>installation_blocked</code>. Newest first, the pending ones at the top of each page.
      </p>
      <Outcome outcome={outcome} />
      <Show loaded={list} label="Loading the installations…">
        {(data) =>
          data.installations.length === 0 ? (
            <Empty>No installation has called with this key yet.</Empty>
          ) : (
            <>
              <Table caption="Installations" head={["Installation", "Status", "First seen", "Last seen", "Decide"]}>
                {[...data.installations]
                  .sort((a, b) => ORDER[a.status] - ORDER[b.status])
                  .map((row) => (
                    <tr key={row.install} class={row.status === "pending" ? "attention" : undefined}>
                      <th scope="row" class="break">
                        <Ext text={row.install} />
                      </th>
                      <td>
                        <Badge value={row.status} />
                      </td>
                      <td data-label="First seen">
                        <Time iso={row.first_seen_at} />
                      </td>
                      <td data-label="Last seen">
                        <Time iso={row.last_seen_at} />
                      </td>
                      <td class="row-actions">
                        {may("manage") ? (
                          <>
                            {row.status !== "approved" ? (
                              <button
                                type="button"
                                onClick={() => void decide(row.install, "approve")}
                                aria-label={`Approve installation ${row.install}`}
                              >
                                Approve
                              </button>
                            ) : null}
                            {row.status !== "blocked" ? (
                              <button
                                type="button"
                                class="danger"
                                onClick={() => void decide(row.install, "block")}
                                aria-label={`Block installation ${row.install}`}
                              >
                                Block
                              </button>
                            ) : null}
                          </>
                        ) : (
                          <span class="muted">—</span>
                        )}
                      </td>
                    </tr>
                  ))}
              </Table>
              <Pager
                page={data.page ?? page}
                hasMore={data.has_more}
                total={data.total}
                limit={PAGE_SIZE}
                href={(n) => withQuery(place, { page: n })}
              />
            </>
          )
        }
      </Show>
    </Section>
  );
}

function endpointTotals(days: UsageDay[]): [string, number][] {
  const totals = new Map<string, number>();
  for (const day of days)
    for (const [endpoint, n] of Object.entries(day.by_endpoint)) totals.set(endpoint, (totals.get(endpoint) ?? 0) + n);
  return [...totals.entries()].sort((a, b) => b[1] - a[1]);
}

export function KeyUsage(props: { id: number }) {
  const place = usePlace();
  const from = place.query.get("from") ?? undefined;
  const until = place.query.get("to") ?? undefined;
  const by = place.query.get("by") === "reason" ? "reason" : "outcome";
  const [usage] = useAnswer(() => api.usage(props.id, from, until), [props.id, from, until]);
  // The range shown: the address's, or the one the service answered for (its last 30 days).
  const shownFrom = from ?? (usage.state === "ok" ? usage.data.from : "");
  const shownTo = until ?? (usage.state === "ok" ? usage.data.to : "");
  return (
    <Section title="Usage by day">
      <form class="filters" onSubmit={(e) => e.preventDefault()} aria-label="Usage range">
        <Field label="From (UTC)">
          {(a) => (
            <input
              {...a}
              type="date"
              value={shownFrom}
              max={shownTo}
              onChange={(e: InputEvent) => setQuery({ from: valueOf(e) }, { replace: true })}
            />
          )}
        </Field>
        <Field label="To (UTC)">
          {(a) => (
            <input
              {...a}
              type="date"
              value={shownTo}
              min={shownFrom}
              onChange={(e: InputEvent) => setQuery({ to: valueOf(e) }, { replace: true })}
            />
          )}
        </Field>
        <Field label="Stack by">
          {(a) => (
            <select
              {...a}
              value={by}
              onChange={(e: InputEvent) => setQuery({ by: valueOf(e) === "reason" ? "reason" : null }, { replace: true })}
            >
              <option value="outcome">outcome</option>
              <option value="reason">refusal reason</option>
            </select>
          )}
        </Field>
      </form>
      <Show loaded={usage} label="Loading the usage…">
        {(data) => {
          const series = by === "reason" ? reasonSeries(data.usage) : OUTCOME_SERIES;
          const endpoints = endpointTotals(data.usage);
          return (
            <>
              {data.usage.length === 0 ? <Empty>No calls in this range.</Empty> : null}
              {by === "reason" && series.length === 0 && data.usage.length > 0 ? <Empty>No refusals in this range.</Empty> : null}
              {series.length > 0 ? (
                <StackedBars
                  title={by === "reason" ? "Refused calls by day and reason" : "Calls by day and outcome"}
                  from={data.from}
                  to={data.to}
                  days={data.usage}
                  series={series}
                  stacks={by === "reason" ? (d) => reasonStacks(d, series) : outcomeStacks}
                />
              ) : null}
              <h3>Endpoint labels</h3>
              {endpoints.length === 0 ? (
                <Empty>No endpoint labels yet: verify calls may send endpoint=… to label themselves.</Empty>
              ) : (
                <Table caption="Calls by endpoint label" head={["Label", "Calls"]}>
                  {endpoints.map(([endpoint, n]) => (
                    <tr key={endpoint}>
                      <th scope="row">
                        <Ext text={endpoint} />
                      </th>
                      <td class="num" data-label="Calls">
                        {n.toLocaleString("en")}
                      </td>
                    </tr>
                  ))}
                </Table>
              )}
            </>
          );
        }}
      </Show>
    </Section>
  );
}

/**
 * verify.php's `browser_guard` for this key, as the service builds it
 * (ingress/routes/verify/answer.ts browserGuard): the page hides itself when served from
 * another host than the lock, or framed by one.
 */
function browserGuard(details: KeyDetails): string {
  const lock = JSON.stringify(details.domain ?? "");
  return (
    `<script data-gateway-guard="${details.id}">(function(w,d){var l=${lock},h=w.location.hostname.toLowerCase().replace(/\\.$/,"");` +
    `var off=l&&h!==l&&h.slice(-l.length-1)!=="."+l,framed=false;try{framed=w.top!==w.self&&w.top.location.hostname!==w.location.hostname}catch(e){framed=true}` +
    `if(off||framed){d.documentElement.style.display="none"}})(window,document)</script>`
  );
}

export function KeyIntegration(props: { details: KeyDetails }) {
  const { details } = props;
  const site = location.origin;
  const placeholder = `${details.prefix}…YOUR_KEY`;
  const domain = details.domain || "shop.example.com";
  const curl = [
    `curl -sS -X POST ${site}/api/v1/verify.php \\`,
    `  -d key=${placeholder} \\`,
    `  -d domain=${domain} \\`,
    `  -d nonce=$(openssl rand -hex 16)`,
  ].join("\n");
  const library = [
    `import { createVerifyClient } from "./shared/client/index.js";`,
    ``,
    `const gateway = createVerifyClient({`,
    `  baseUrl: "${site}/api/v1",`,
    `  key: process.env.GATEWAY_KEY, // ${placeholder}`,
    `  install: "${details.kind === "client" ? "site-1" : "server-1"}",`,
    `});`,
    ``,
    `const result = await gateway.verify({ domain: "${domain}" });`,
    `if (!result.authorized) throw new Error(\`refused: \${result.reason}\`);`,
  ].join("\n");
  return (
    <Section title="Ready to paste">
      <p class="hint">
        The full key is never shown again after it was created: put yours where the snippets say <code>YOUR_KEY</code>.
      </p>
      {details.kind === "client" ? (
        <>
          <CopyField
            label="Browser guard (first thing in the page's <head>)"
            hint="The page hides itself when it is served from another domain than the lock, or framed by another site. Each verify answer carries it as browser_guard."
            value={browserGuard(details)}
            multiline
            wrap
          />
          <CopyField
            label="Bot-check widget tag"
            hint={
              details.botcheck.enabled ? "Bot check is on for this key." : "Bot check is off for this key: turn it on in Settings first."
            }
            value={`<div data-gateway-botcheck></div>\n<script src="${site}/botcheck.js" data-key="${placeholder}" async></script>`}
            multiline
          />
        </>
      ) : null}
      <CopyField label="A verify call with curl" value={curl} multiline />
      <CopyField label="A verify call with the client library (docs/client.md)" value={library} multiline />
    </Section>
  );
}
