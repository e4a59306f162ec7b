import { useState } from "preact/hooks";
import { api, type Destination, type Webhook } from "../api.js";
import { may } from "../auth.js";
import { useOrg } from "../layout.js";
import { Link, usePlace, withQuery } from "../router.js";
import {
  Badge,
  Confirm,
  Empty,
  Ext,
  Field,
  Outcome,
  PageTitle,
  Section,
  Show,
  Table,
  Time,
  plural,
  useAction,
  useAnswer,
  valueOf,
  type InputEvent,
} from "../ui.js";
import { urlProblem } from "../validate.js";

/**
 * SIEM destinations and webhooks (interface.md 6; operator-api.md "destinations"): each
 * destination's health (delivered, waiting, failed, its last error, when it last got
 * something), a test event, its dead letters with retry; each webhook's delivery log.
 * Which one is open lives in the address (`?dest=`, `?hook=`).
 */

const KINDS = ["splunk_hec", "elastic_bulk", "syslog_tcp", "http"];

function ago(iso: string | null | undefined): string {
  if (!iso) return "never";
  const s = Math.max(0, Math.round((Date.now() - Date.parse(iso)) / 1000));
  if (s < 90) return `${s} s ago`;
  if (s < 5400) return `${Math.round(s / 60)} min ago`;
  if (s < 172_800) return `${Math.round(s / 3600)} h ago`;
  return `${Math.round(s / 86_400)} days ago`;
}

function health(d: {
  last_error?: string | null;
  failed?: number;
  pending?: number;
  last_delivered_at?: string | null;
  last_error_at?: string | null;
}) {
  const failing = d.last_error && (!d.last_delivered_at || (d.last_error_at ?? "") > d.last_delivered_at);
  if (failing) return <Badge value="failed" label="failing" />;
  if ((d.pending ?? 0) > 0) return <Badge value="pending" label="catching up" />;
  return <Badge value="ok" label="healthy" />;
}

function DeadLetters(props: { org: number; id: number }) {
  const [list, reload] = useAnswer(() => api.deadLetters(props.org, props.id), [props.org, props.id]);
  const [outcome, run] = useAction();
  const retry = async (ids?: string[]) => {
    const answer = await run(
      api.retryDeadLetters(props.org, props.id, ids),
      (d) => `${plural(d.retried, "event")} sent back for delivery.`,
    );
    if (answer.ok) reload();
  };
  return (
    <div class="sub-panel">
      <h4>Dead letters</h4>
      <Outcome outcome={outcome} />
      <Show loaded={list} label="Loading the dead letters…">
        {(d) =>
          d.dead_letters.length === 0 ? (
            <Empty>No dead letters: every event was delivered or is still being tried.</Empty>
          ) : (
            <>
              {may("manage") ? (
                <p>
                  <button type="button" onClick={() => void retry()}>
                    Retry all {d.dead_letters.length}
                  </button>
                </p>
              ) : null}
              <Table caption="Dead letters" head={["Event", "Why", "Tries", "When", ""]}>
                {d.dead_letters.map((l) => (
                  <tr key={l.dead_id}>
                    <th scope="row" class="mono break">
                      {l.dead_id}
                    </th>
                    <td class="break">
                      <code>{l.reason}</code> <Ext text={l.error} />
                    </td>
                    <td class="num" data-label="Tries">
                      {l.attempts}
                    </td>
                    <td data-label="When">
                      <Time iso={l.at} />
                    </td>
                    <td>
                      {may("manage") ? (
                        <button type="button" onClick={() => void retry([l.dead_id])} aria-label={`Retry ${l.dead_id}`}>
                          Retry
                        </button>
                      ) : null}
                    </td>
                  </tr>
                ))}
              </Table>
            </>
          )
        }
      </Show>
    </div>
  );
}

function DestinationCard(props: { org: number; dest: Destination; open: boolean; onChanged: () => void }) {
  const { dest } = props;
  const place = usePlace();
  const [outcome, run] = useAction();
  const [testing, setTesting] = useState(false);
  const test = async () => {
    setTesting(true);
    await run(api.testDestination(props.org, dest.id), (d) => `Test event ${d.test.event_id} delivered.`);
    setTesting(false);
    props.onChanged();
  };
  const remove = async () => {
    const answer = await run(api.removeDestination(props.org, dest.id), "Destination removed.");
    if (answer.ok) props.onChanged();
  };
  return (
    <Section id={`siem-${dest.id}`} title={`${dest.kind} #${dest.id}`} actions={health(dest)} level={3}>
      <p class="break mono">
        <Ext text={dest.url} />
        {dest.index ? (
          <>
            {" "}
            (index <Ext text={dest.index} />)
          </>
        ) : null}
      </p>
      <ul class="tallies small">
        <li>
          <span class="tally">{(dest.delivered ?? 0).toLocaleString("en")}</span> delivered
        </li>
        <li>
          <span class="tally">{(dest.pending ?? 0).toLocaleString("en")}</span> waiting
        </li>
        <li>
          <span class="tally">{(dest.failed ?? 0).toLocaleString("en")}</span> failed tries
        </li>
        <li>
          <span class="tally">{(dest.dead_letters ?? 0).toLocaleString("en")}</span> dead letters
        </li>
      </ul>
      <p class="muted">
        Last delivered {ago(dest.last_delivered_at)}
        {dest.last_delivered_at ? (
          <>
            {" "}
            (<Time iso={dest.last_delivered_at} />)
          </>
        ) : null}
        .
      </p>
      {dest.last_error ? (
        <div class="refusal">
          Last error <Time iso={dest.last_error_at} />: <Ext text={dest.last_error} />
        </div>
      ) : null}
      <div class="actions">
        {may("manage") ? (
          <button type="button" onClick={() => void test()} disabled={testing}>
            {testing ? "Sending… (up to 20 s)" : "Send a test event"}
          </button>
        ) : null}
        <Link href={withQuery(place, { dest: props.open ? null : dest.id })} class="button-link" aria-expanded={props.open}>
          {props.open ? "Hide the dead letters" : "Dead letters"}
        </Link>
        {may("manage") ? (
          <Confirm label="Remove" danger title={`Remove ${dest.kind} #${dest.id}?`} confirm="Remove" onConfirm={remove}>
            <p>Events stop going to it; those waiting are dropped.</p>
          </Confirm>
        ) : null}
      </div>
      <Outcome outcome={outcome} />
      {props.open ? <DeadLetters org={props.org} id={dest.id} /> : null}
    </Section>
  );
}

function AddDestination(props: { org: number; onAdded: () => void }) {
  const [kind, setKind] = useState("splunk_hec");
  const [url, setUrl] = useState("");
  const [token, setToken] = useState("");
  const [index, setIndex] = useState("");
  const [problem, setProblem] = useState<string | null>(null);
  const [outcome, run] = useAction();
  const add = async (event: Event) => {
    event.preventDefault();
    const p = kind === "syslog_tcp" ? (url.trim() ? null : "The collector's address (tcp://host:port).") : urlProblem(url.trim());
    setProblem(p);
    if (p) return;
    const body: { kind: string; url: string; token?: string; index?: string } = { kind, url: url.trim() };
    if (token) body.token = token;
    if (index.trim()) body.index = index.trim();
    const answer = await run(api.addDestination(props.org, body), "Destination added: events flow to it from now on.");
    setToken("");
    if (answer.ok) {
      setUrl("");
      setIndex("");
      props.onAdded();
    }
  };
  return (
    <Section title="Add a destination" level={3}>
      <form class="grid-form" onSubmit={(e) => void add(e)} noValidate>
        <Field label="Kind">
          {(a) => (
            <select {...a} value={kind} onChange={(e: InputEvent) => setKind(valueOf(e))}>
              {KINDS.map((k) => (
                <option key={k}>{k}</option>
              ))}
            </select>
          )}
        </Field>
        <Field label="URL" error={problem}>
          {(a) => (
            <input
              {...a}
              value={url}
              placeholder="https://siem.example.com:8088/services/collector"
              onInput={(e: InputEvent) => setUrl(valueOf(e))}
            />
          )}
        </Field>
        <Field label="Token (optional)" hint="Stored encrypted; never shown again.">
          {(a) => (
            <input {...a} type="password" autocomplete="new-password" value={token} onInput={(e: InputEvent) => setToken(valueOf(e))} />
          )}
        </Field>
        <Field label="Index (optional)">{(a) => <input {...a} value={index} onInput={(e: InputEvent) => setIndex(valueOf(e))} />}</Field>
        <div class="form-actions">
          <button type="submit" class="primary">
            Add the destination
          </button>
        </div>
      </form>
      <Outcome outcome={outcome} />
    </Section>
  );
}

function Deliveries(props: { org: number; id: number }) {
  const [list] = useAnswer(() => api.deliveries(props.org, props.id), [props.org, props.id]);
  return (
    <div class="sub-panel">
      <h4>Delivery log</h4>
      <Show loaded={list} label="Loading the deliveries…">
        {(d) =>
          d.deliveries.length === 0 ? (
            <Empty>Nothing sent to this webhook yet.</Empty>
          ) : (
            <Table caption="Deliveries" head={["Event", "Status", "Tries", "Last answer", "Created", "Delivered"]}>
              {d.deliveries.map((x) => (
                <tr key={x.id}>
                  <th scope="row">
                    <Ext text={x.event_type} /> <span class="muted">#{x.event_id}</span>
                  </th>
                  <td>
                    <Badge value={x.status} />
                    {x.next_attempt_at ? (
                      <div class="muted">
                        next try <Time iso={x.next_attempt_at} />
                      </div>
                    ) : null}
                  </td>
                  <td class="num" data-label="Tries">
                    {x.attempts}
                  </td>
                  <td class="break" data-label="Last answer">
                    {x.last_status ?? ""} <Ext text={x.last_error} />
                  </td>
                  <td data-label="Created">
                    <Time iso={x.created_at} />
                  </td>
                  <td data-label="Delivered">
                    <Time iso={x.delivered_at} empty="—" />
                  </td>
                </tr>
              ))}
            </Table>
          )
        }
      </Show>
    </div>
  );
}

function WebhookCard(props: { org: number; hook: Webhook; open: boolean; onChanged: () => void }) {
  const { hook } = props;
  const place = usePlace();
  const [outcome, run] = useAction();
  const remove = async () => {
    const answer = await run(api.removeWebhook(props.org, hook.id), "Webhook removed.");
    if (answer.ok) props.onChanged();
  };
  return (
    <Section title={`Webhook #${hook.id}`} actions={health(hook)} level={3}>
      <p class="break mono">
        <Ext text={hook.url} />
      </p>
      <p class="muted">
        {plural(hook.delivered ?? 0, "delivery", "deliveries")}, {(hook.pending ?? 0).toLocaleString("en")} waiting,{" "}
        {plural(hook.failed ?? 0, "failure")}; last delivered {ago(hook.last_delivered_at)}.
      </p>
      {hook.last_error ? (
        <div class="refusal">
          Last error: <Ext text={hook.last_error} />
        </div>
      ) : null}
      <div class="actions">
        <Link href={withQuery(place, { hook: props.open ? null : hook.id })} class="button-link" aria-expanded={props.open}>
          {props.open ? "Hide the delivery log" : "Delivery log"}
        </Link>
        {may("manage") ? (
          <Confirm label="Remove" danger title={`Remove webhook #${hook.id}?`} confirm="Remove" onConfirm={remove}>
            <p>Nothing more is sent to it.</p>
          </Confirm>
        ) : null}
      </div>
      <Outcome outcome={outcome} />
      {props.open ? <Deliveries org={props.org} id={hook.id} /> : null}
    </Section>
  );
}

function AddWebhook(props: { org: number; onAdded: () => void }) {
  const [url, setUrl] = useState("");
  const [secret, setSecret] = useState("");
  const [problems, setProblems] = useState<{ url?: string; secret?: string }>({});
  const [outcome, run] = useAction();
  const add = async (event: Event) => {
    event.preventDefault();
    const found: { url?: string; secret?: string } = {};
    const p = urlProblem(url.trim());
    if (p) found.url = p;
    if (secret.length < 16) found.secret = "At least 16 characters: it signs every delivery (Standard Webhooks).";
    setProblems(found);
    if (Object.keys(found).length > 0) return;
    const answer = await run(api.addWebhook(props.org, { url: url.trim(), secret }), "Webhook added.");
    setSecret("");
    if (answer.ok) {
      setUrl("");
      props.onAdded();
    }
  };
  return (
    <Section title="Add a webhook" level={3}>
      <form class="grid-form" onSubmit={(e) => void add(e)} noValidate>
        <Field label="URL" error={problems.url}>
          {(a) => (
            <input {...a} value={url} placeholder="https://hooks.example.com/gateway" onInput={(e: InputEvent) => setUrl(valueOf(e))} />
          )}
        </Field>
        <Field label="Signing secret" error={problems.secret} hint="Stored encrypted; never shown again.">
          {(a) => (
            <input {...a} type="password" autocomplete="new-password" value={secret} onInput={(e: InputEvent) => setSecret(valueOf(e))} />
          )}
        </Field>
        <div class="form-actions">
          <button type="submit" class="primary">
            Add the webhook
          </button>
        </div>
      </form>
      <Outcome outcome={outcome} />
    </Section>
  );
}

export function SiemPage() {
  const { id: org } = useOrg();
  const place = usePlace();
  const openDest = Number(place.query.get("dest") ?? "0");
  const openHook = Number(place.query.get("hook") ?? "0");
  // An organization holds at most 20 of each (docs/decisions.md, "Limits"): one page holds them all.
  const [destinations, reloadDestinations] = useAnswer(() => api.destinations(org, { limit: 500 }), [org]);
  const [webhooks, reloadWebhooks] = useAnswer(() => api.webhooks(org, { limit: 500 }), [org]);
  return (
    <>
      <PageTitle sub="Where the organization's security events go as they happen: SIEM collectors, and signed webhooks.">
        SIEM and webhooks
      </PageTitle>
      <h2 class="group-title">SIEM destinations</h2>
      <Show loaded={destinations} label="Loading the destinations…">
        {(d) =>
          d.destinations.length === 0 ? (
            <Empty>No SIEM destination yet.</Empty>
          ) : (
            d.destinations.map((dest) => (
              <DestinationCard key={dest.id} org={org} dest={dest} open={openDest === dest.id} onChanged={reloadDestinations} />
            ))
          )
        }
      </Show>
      {may("manage") ? <AddDestination org={org} onAdded={reloadDestinations} /> : null}
      <h2 class="group-title">Webhooks</h2>
      <Show loaded={webhooks} label="Loading the webhooks…">
        {(d) =>
          d.webhooks.length === 0 ? (
            <Empty>No webhook yet.</Empty>
          ) : (
            d.webhooks.map((hook) => (
              <WebhookCard key={hook.id} org={org} hook={hook} open={openHook === hook.id} onChanged={reloadWebhooks} />
            ))
          )
        }
      </Show>
      {may("manage") ? <AddWebhook org={org} onAdded={reloadWebhooks} /> : null}
    </>
  );
}
