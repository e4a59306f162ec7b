import { useState } from "preact/hooks";
import { data } from "../api.js";
import { serverKey } from "../auth.js";
import { setQuery, usePlace, withQuery } from "../router.js";
import { Badge, Empty, Ext, Field, PageTitle, Pager, Show, Table, Time, idle, useAnswer, valueOf, type InputEvent } from "../ui.js";
import { ServerKeyPanel } from "./server-key.js";

/**
 * The team activity record (interface.md 4.9, 2.8): who did what, newest first, with the
 * endpoint's filters (group, dates, scanned domain) and paging, all in the address.
 */

const GROUPS = ["risks", "ownership", "monitoring", "settings", "trust", "siem", "evidence", "members", "team_security"];
const PAGE_SIZE = 50;

function detailText(detail: unknown): string {
  if (detail === null || detail === undefined) return "";
  if (typeof detail === "string") return detail;
  return JSON.stringify(detail);
}

export function ActivityPage() {
  const place = usePlace();
  const [round, setRound] = useState(0);
  const group = place.query.get("group") ?? "";
  const from = place.query.get("from") ?? "";
  const until = place.query.get("to") ?? "";
  const forDomain = place.query.get("domain") ?? "";
  const page = Math.max(1, Number(place.query.get("page") ?? "1") || 1);
  const [record] = useAnswer(
    () => (serverKey() ? data.activity({ group, from, to: until, for_domain: forDomain, page, limit: PAGE_SIZE }) : idle<never>()),
    [group, from, until, forDomain, page, round],
  );
  return (
    <>
      <PageTitle sub="Every change made to the organization, by whom (never an address), newest first.">Activity</PageTitle>
      <ServerKeyPanel onChange={() => setRound(round + 1)} />
      <form class="filters" onSubmit={(e) => e.preventDefault()} aria-label="Filter the activity">
        <Field label="Group">
          {(a) => (
            <select {...a} value={group} onChange={(e: InputEvent) => setQuery({ group: valueOf(e), page: null })}>
              <option value="">every group</option>
              {GROUPS.map((g) => (
                <option key={g} value={g}>
                  {g.replace("_", " ")}
                </option>
              ))}
            </select>
          )}
        </Field>
        <Field label="From (UTC)">
          {(a) => (
            <input
              {...a}
              type="date"
              value={from}
              onChange={(e: InputEvent) => setQuery({ from: valueOf(e), page: null }, { replace: true })}
            />
          )}
        </Field>
        <Field label="To (UTC)">
          {(a) => (
            <input
              {...a}
              type="date"
              value={until}
              onChange={(e: InputEvent) => setQuery({ to: valueOf(e), page: null }, { replace: true })}
            />
          )}
        </Field>
        <Field label="Scanned domain" class="grow">
          {(a) => (
            <input
              {...a}
              value={forDomain}
              placeholder="any"
              onChange={(e: InputEvent) => setQuery({ domain: valueOf(e).trim(), page: null }, { replace: true })}
            />
          )}
        </Field>
      </form>
      {serverKey() ? (
        <Show loaded={record} label="Loading the activity…">
          {(d) =>
            d.activity.length === 0 ? (
              <Empty>{group || from || until || forDomain ? "Nothing matches these filters." : "Nothing has happened yet."}</Empty>
            ) : (
              <>
                <Table caption="Activity" head={["When", "Who", "What", "Group", "Domain"]} class="activity">
                  {d.activity.map((entry, i) => (
                    <tr key={`${entry.time}${i}`}>
                      <td class="nowrap">
                        <Time iso={entry.time} />
                      </td>
                      <td class="break">
                        <Ext text={entry.who} />
                        {entry.via === "api" && !/\bAPI\b/.test(entry.who) ? <span class="muted"> (API)</span> : null}
                      </td>
                      <td class="break">
                        <Ext text={entry.action} />
                        {detailText(entry.detail) ? (
                          <details>
                            <summary>
                              Details <span class="visually-hidden">of “{entry.action}”</span>
                            </summary>
                            <code class="break">
                              <Ext text={detailText(entry.detail)} />
                            </code>
                          </details>
                        ) : null}
                        <div class="muted mono">{entry.action_code}</div>
                      </td>
                      <td>{entry.group ? <Badge value="plain" label={entry.group.replace("_", " ")} /> : null}</td>
                      <td class="break" data-label="Domain">
                        {entry.domain ? <Ext text={entry.domain} /> : <span class="muted">—</span>}
                      </td>
                    </tr>
                  ))}
                </Table>
                <Pager page={d.page} hasMore={d.has_more} total={d.total} limit={PAGE_SIZE} href={(n) => withQuery(place, { page: n })} />
              </>
            )
          }
        </Show>
      ) : null}
    </>
  );
}
