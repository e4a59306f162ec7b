import { useState } from "preact/hooks";
import { api, type KeyDetails, type UsageDay } from "../api.js";
import { may, rememberServerKey } from "../auth.js";
import type { Answer } from "../http.js";
import { useOrg } from "../layout.js";
import { Link, setQuery, to, usePlace, withQuery } from "../router.js";
import {
  Badge,
  CopyField,
  Empty,
  Ext,
  Field,
  Outcome,
  PageTitle,
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
import { domainProblem } from "../validate.js";

/**
 * The organization's keys (GET /orgs/:org/keys, operator-api.md section 5): filters by
 * status and kind in the address, calls counted and refused over a chosen range (each
 * listed key's GET /keys/:id/usage), and a form that creates a key and shows it once.
 */

const PAGE_SIZE = 25;

/** A secret shown once (a new key or token): copy it now, it is never shown again. */
export function ShownOnce(props: { label: string; value: string; children?: preact.ComponentChildren }) {
  return (
    <div class="shown-once" role="status">
      <p>
        <strong>Copy it now: it is shown this once.</strong> Only a hash is kept; if it is lost, rotate it.
      </p>
      <CopyField label={props.label} value={props.value} secret />
      {props.children}
    </div>
  );
}

/** Offers a new server key for this tab's security pages (scans, findings, activity). */
export function UseForSecurityPages(props: { fullKey: string; details: KeyDetails }) {
  const [said, setSaid] = useState("");
  if (props.details.kind !== "server") return null;
  return (
    <p>
      <button
        type="button"
        onClick={() => {
          const refused = rememberServerKey(props.fullKey, props.details.domain || null);
          setSaid(refused ? refused.message : "This tab now uses this key for scans, findings and activity.");
        }}
      >
        Use this key for this tab's security pages
      </button>{" "}
      <span role="status">{said}</span>
    </p>
  );
}

function sums(days: UsageDay[]): { counted: number; refused: number } {
  return days.reduce((a, d) => ({ counted: a.counted + d.counted, refused: a.refused + d.refused }), { counted: 0, refused: 0 });
}

function UsageCells(props: { id: number; from?: string; to?: string }) {
  const [usage] = useAnswer(() => api.usage(props.id, props.from, props.to), [props.id, props.from, props.to]);
  if (usage.state === "loading")
    return (
      <td colSpan={2} class="muted" aria-busy="true">
        …
      </td>
    );
  if (usage.state === "refused")
    return (
      <td colSpan={2} class="muted">
        {usage.refusal.reason}
      </td>
    );
  const total = sums(usage.data.usage);
  return (
    <>
      <td class="num" data-label="Counted">
        {total.counted.toLocaleString("en")}
      </td>
      <td class="num" data-label="Refused">
        {total.refused.toLocaleString("en")}
      </td>
    </>
  );
}

function CreateKey(props: { org: number; onCreated: () => void }) {
  const [name, setName] = useState("");
  const [kind, setKind] = useState<"client" | "server">("client");
  const [domain, setDomain] = useState("");
  const [environment, setEnvironment] = useState("production");
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [created, setCreated] = useState<{ key: string; details: KeyDetails } | null>(null);
  const [outcome, run] = useAction();
  const submit = async (event: Event) => {
    event.preventDefault();
    const problems: Record<string, string> = {};
    if (name.trim() === "") problems.name = "Give the key a name.";
    if (kind === "client" && domain.trim() === "") problems.domain = "A client key is locked to a domain.";
    else if (domain.trim() !== "") {
      const p = domainProblem(domain);
      if (p) problems.domain = p;
    }
    setErrors(problems);
    if (Object.keys(problems).length > 0) return;
    const body: Record<string, unknown> = { name: name.trim(), kind, environment };
    if (domain.trim()) body.domain = domain.trim();
    const answer: Answer<{ key: string; details: KeyDetails }> = await run(api.createKey(props.org, body), "Key created.");
    if (answer.ok) {
      setCreated(answer.data);
      setName("");
      setDomain("");
      props.onCreated();
    }
  };
  return (
    <Section title="Create a key" id="create-key">
      <form class="grid-form" onSubmit={(e) => void submit(e)} noValidate>
        <Field label="Name" error={errors.name}>
          {(a) => <input {...a} value={name} maxLength={200} onInput={(e: InputEvent) => setName(valueOf(e))} />}
        </Field>
        <Field label="Kind" hint="Client keys go in pages, locked to a domain; server keys stay secret on a server.">
          {(a) => (
            <select {...a} value={kind} onChange={(e: InputEvent) => setKind(valueOf(e) as "client" | "server")}>
              <option value="client">client</option>
              <option value="server">server</option>
            </select>
          )}
        </Field>
        <Field label={kind === "client" ? "Domain (required)" : "Domain (optional)"} error={errors.domain}>
          {(a) => <input {...a} value={domain} placeholder="shop.example.com" onInput={(e: InputEvent) => setDomain(valueOf(e))} />}
        </Field>
        <Field label="Environment">
          {(a) => (
            <select {...a} value={environment} onChange={(e: InputEvent) => setEnvironment(valueOf(e))}>
              <option>production</option>
              <option>staging</option>
              <option>development</option>
            </select>
          )}
        </Field>
        <div class="form-actions">
          <button type="submit" class="primary">
            Create the key
          </button>
        </div>
      </form>
      <Outcome outcome={outcome} />
      {created ? (
        <ShownOnce label={`The new key "${created.details.name}"`} value={created.key}>
          <p>
            <Link href={to.key(props.org, created.details.id)}>Open the key's page</Link>
          </p>
          <UseForSecurityPages fullKey={created.key} details={created.details} />
        </ShownOnce>
      ) : null}
    </Section>
  );
}

export function KeysPage() {
  const { id: org } = useOrg();
  const place = usePlace();
  const status = place.query.get("status") ?? "";
  const kind = place.query.get("kind") ?? "";
  const page = Math.max(1, Number(place.query.get("page") ?? "1") || 1);
  // No range chosen: the service's last 30 days.
  const from = place.query.get("from") ?? undefined;
  const until = place.query.get("to") ?? undefined;
  const [keys, reload] = useAnswer(() => api.keys(org, { status, kind, page, limit: PAGE_SIZE }), [org, status, kind, page]);
  return (
    <>
      <PageTitle sub="Every key of the organization, newest first. The key's page has its settings, installations, usage and snippets.">
        Keys
      </PageTitle>
      <form class="filters" onSubmit={(e) => e.preventDefault()} aria-label="Filter the keys">
        <Field label="Status">
          {(a) => (
            <select {...a} value={status} onChange={(e: InputEvent) => setQuery({ status: valueOf(e), page: null })}>
              <option value="">any</option>
              <option value="active">active</option>
              <option value="suspended">suspended</option>
              <option value="revoked">revoked</option>
              <option value="expired">expired</option>
            </select>
          )}
        </Field>
        <Field label="Kind">
          {(a) => (
            <select {...a} value={kind} onChange={(e: InputEvent) => setQuery({ kind: valueOf(e), page: null })}>
              <option value="">any</option>
              <option value="client">client</option>
              <option value="server">server</option>
            </select>
          )}
        </Field>
        <Field label="Calls from (UTC)" hint={from || until ? undefined : "Empty: the last 30 days."}>
          {(a) => (
            <input
              {...a}
              type="date"
              value={from ?? ""}
              max={until}
              onChange={(e: InputEvent) => setQuery({ from: valueOf(e) }, { replace: true })}
            />
          )}
        </Field>
        <Field label="Calls to (UTC)">
          {(a) => (
            <input
              {...a}
              type="date"
              value={until ?? ""}
              min={from}
              onChange={(e: InputEvent) => setQuery({ to: valueOf(e) }, { replace: true })}
            />
          )}
        </Field>
      </form>
      <Show loaded={keys} label="Loading the keys…">
        {(data) =>
          data.keys.length === 0 ? (
            <Empty>{status || kind ? "No key matches these filters." : "No keys yet. Create the first one below."}</Empty>
          ) : (
            <>
              <Table caption="Keys" head={["Name", "Kind", "Status", "Domain", "Last used", "Counted", "Refused"]}>
                {data.keys.map((key) => (
                  <tr key={key.id}>
                    <th scope="row">
                      <Link href={to.key(org, key.id)}>
                        <Ext text={key.name} />
                      </Link>
                      <div class="muted mono">{key.prefix}…</div>
                    </th>
                    <td>{key.kind}</td>
                    <td>
                      <Badge value={key.status} />
                    </td>
                    <td data-label="Domain">
                      <Ext text={key.domain || "—"} />
                    </td>
                    <td data-label="Last used">
                      <Time iso={key.last_used_at} />
                    </td>
                    <UsageCells id={key.id} from={from} to={until} />
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
      {may("manage") ? (
        <CreateKey org={org} onCreated={reload} />
      ) : (
        <p class="muted">Your role may read the keys; an admin or owner creates and changes them.</p>
      )}
    </>
  );
}
