import { useState } from "preact/hooks";
import { api, type Incident, type Maintenance, type Service } from "../api.js";
import {
  Badge,
  Confirm,
  Empty,
  Ext,
  Field,
  Outcome,
  Section,
  Show,
  Table,
  Time,
  useAction,
  useAnswer,
  valueOf,
  type InputEvent,
} from "../ui.js";

/**
 * The operator's status page tabs (operator-api.md "Status page"; docs/status.md): each
 * service with its probe's last result and error, incidents with their updates and
 * postmortem, maintenance windows.
 */

const SERVICES = ["website", "api", "dashboard"] as const;
const INCIDENT_STATUSES = ["investigating", "identified", "monitoring", "resolved"];

function ServiceRow(props: { service: Service; onSaved: () => void }) {
  const { service } = props;
  const [name, setName] = useState(service.name);
  const [url, setUrl] = useState(service.url ?? "");
  const [outcome, run] = useAction();
  const check = service.last_probe;
  const save = async (event: Event) => {
    event.preventDefault();
    const answer = await run(
      api.putService(service.key, { name: name.trim(), url: url.trim() || null }),
      "Saved: the prober uses it from its next round.",
    );
    if (answer.ok) props.onSaved();
  };
  return (
    <Section
      title={`${service.name} (${service.key})`}
      level={3}
      actions={
        !service.configured ? (
          <Badge value="plain" label="not configured" />
        ) : check ? (
          <Badge value={check.ok ? "operational" : "outage"} label={check.ok ? "up" : "down"} />
        ) : (
          <Badge value="pending" label="not probed yet" />
        )
      }
    >
      {check ? (
        <p class="muted">
          Last probe <Time iso={check.at} />: {check.ok ? "answered" : "failed"}
          {check.status_code !== null ? ` with HTTP ${check.status_code}` : ""}
          {check.latency_ms !== null ? ` in ${check.latency_ms} ms` : ""}.
        </p>
      ) : null}
      {check?.error ? (
        <div class="refusal">
          Why the last probe failed: <Ext text={check.error} />
        </div>
      ) : null}
      <form class="grid-form" onSubmit={(e) => void save(e)}>
        <Field label="Shown as">
          {(a) => <input {...a} required maxLength={100} value={name} onInput={(e: InputEvent) => setName(valueOf(e))} />}
        </Field>
        <Field label="Probed address" hint="Empty: not probed (shown as not configured).">
          {(a) => (
            <input
              {...a}
              type="url"
              value={url}
              placeholder="https://api.example.com/healthz"
              onInput={(e: InputEvent) => setUrl(valueOf(e))}
            />
          )}
        </Field>
        <div class="form-actions">
          <button type="submit">Save {service.key}</button>
        </div>
      </form>
      <Outcome outcome={outcome} />
    </Section>
  );
}

export function Services() {
  const [list, reload] = useAnswer(() => api.services(), []);
  return (
    <>
      <h2 class="group-title">Status page services</h2>
      <Show loaded={list} label="Loading the services…">
        {(d) => (
          <>
            {SERVICES.map((key) => {
              const service = d.services.find((s) => s.key === key);
              return service ? <ServiceRow key={`${key}${service.updated_at ?? ""}`} service={service} onSaved={reload} /> : null;
            })}
          </>
        )}
      </Show>
    </>
  );
}

function AffectsBoxes(props: { value: string[]; onChange: (value: string[]) => void }) {
  return (
    <fieldset class="field">
      <legend>Affects (none: everything)</legend>
      {SERVICES.map((s) => (
        <label class="check" key={s}>
          <input
            type="checkbox"
            checked={props.value.includes(s)}
            onChange={(e) =>
              props.onChange((e.currentTarget as HTMLInputElement).checked ? [...props.value, s] : props.value.filter((x) => x !== s))
            }
          />{" "}
          {s}
        </label>
      ))}
    </fieldset>
  );
}

function IncidentCard(props: { incident: Incident; onChanged: () => void }) {
  const { incident } = props;
  const [status, setStatus] = useState(incident.status === "resolved" ? "resolved" : incident.status);
  const [body, setBody] = useState("");
  const [postmortem, setPostmortem] = useState(incident.postmortem ?? "");
  const [outcome, run] = useAction();
  const update = async (event: Event) => {
    event.preventDefault();
    const answer = await run(api.updateIncident(incident.id, { status, body }), "Update posted on the status page.");
    if (answer.ok) {
      setBody("");
      props.onChanged();
    }
  };
  const savePostmortem = async (event: Event) => {
    event.preventDefault();
    const answer = await run(api.patchIncident(incident.id, { postmortem: postmortem.trim() || null }), "Postmortem saved.");
    if (answer.ok) props.onChanged();
  };
  return (
    <Section title={incident.title} level={3} actions={<Badge value={incident.status} />}>
      <p class="muted">
        #{incident.id} · {incident.impact} impact · affects {incident.affects.length ? incident.affects.join(", ") : "everything"} · opened{" "}
        <Time iso={incident.created_at} />
        {incident.resolved_at ? (
          <>
            {" "}
            · resolved <Time iso={incident.resolved_at} />
          </>
        ) : null}
      </p>
      <ol class="timeline">
        {[...incident.updates].reverse().map((u, i) => (
          <li key={i}>
            <span class="when">
              <Time iso={u.at} /> · <Badge value={u.status} />
            </span>
            <span class="text-block">
              <Ext text={u.body} />
            </span>
          </li>
        ))}
      </ol>
      {incident.status !== "resolved" ? (
        <form class="grid-form" onSubmit={(e) => void update(e)}>
          <Field label="New status">
            {(a) => (
              <select {...a} value={status} onChange={(e: InputEvent) => setStatus(valueOf(e))}>
                {INCIDENT_STATUSES.map((s) => (
                  <option key={s}>{s}</option>
                ))}
              </select>
            )}
          </Field>
          <Field label="Update" class="wide">
            {(a) => <textarea {...a} required rows={3} maxLength={10_000} value={body} onInput={(e: InputEvent) => setBody(valueOf(e))} />}
          </Field>
          <div class="form-actions">
            <button type="submit" class="primary">
              Post the update
            </button>
          </div>
        </form>
      ) : null}
      <form class="stack" onSubmit={(e) => void savePostmortem(e)}>
        <Field label="Postmortem" hint="Shown with the incident on the status page.">
          {(a) => <textarea {...a} rows={4} maxLength={50_000} value={postmortem} onInput={(e: InputEvent) => setPostmortem(valueOf(e))} />}
        </Field>
        <button type="submit">Save the postmortem</button>
      </form>
      <Outcome outcome={outcome} />
    </Section>
  );
}

export function Incidents() {
  const [list, reload] = useAnswer(() => api.incidents(), []);
  const [title, setTitle] = useState("");
  const [impact, setImpact] = useState("minor");
  const [affects, setAffects] = useState<string[]>([]);
  const [body, setBody] = useState("");
  const [outcome, run] = useAction();
  const open = async (event: Event) => {
    event.preventDefault();
    const answer = await run(
      api.createIncident({ title: title.trim(), impact, affects, status: "investigating", body }),
      "Incident opened on the status page.",
    );
    if (answer.ok) {
      setTitle("");
      setBody("");
      setAffects([]);
      reload();
    }
  };
  return (
    <>
      <h2 class="group-title">Incidents</h2>
      <Section title="Open an incident" level={3}>
        <form class="grid-form" onSubmit={(e) => void open(e)}>
          <Field label="Title">
            {(a) => <input {...a} required maxLength={200} value={title} onInput={(e: InputEvent) => setTitle(valueOf(e))} />}
          </Field>
          <Field label="Impact">
            {(a) => (
              <select {...a} value={impact} onChange={(e: InputEvent) => setImpact(valueOf(e))}>
                <option value="minor">minor</option>
                <option value="major">major</option>
              </select>
            )}
          </Field>
          <AffectsBoxes value={affects} onChange={setAffects} />
          <Field label="What is happening" class="wide">
            {(a) => <textarea {...a} required rows={3} maxLength={10_000} value={body} onInput={(e: InputEvent) => setBody(valueOf(e))} />}
          </Field>
          <div class="form-actions">
            <button type="submit" class="primary">
              Open the incident
            </button>
          </div>
        </form>
        <Outcome outcome={outcome} />
      </Section>
      <Show loaded={list} label="Loading the incidents…">
        {(d) =>
          d.incidents.length === 0 ? (
            <Empty>No incidents.</Empty>
          ) : (
            d.incidents.map((incident) => (
              <IncidentCard
                key={`${incident.id}:${incident.updates.length}:${incident.postmortem ?? ""}`}
                incident={incident}
                onChanged={reload}
              />
            ))
          )
        }
      </Show>
    </>
  );
}

function windowState(m: Maintenance): string {
  if (m.cancelled_at) return "cancelled";
  const now = Date.now();
  if (Date.parse(m.ends_at) <= now) return "over";
  if (Date.parse(m.starts_at) <= now) return "in progress";
  return "upcoming";
}

function localToIso(value: string): string {
  return new Date(value).toISOString();
}

export function MaintenanceTab() {
  const [list, reload] = useAnswer(() => api.maintenance(), []);
  const [title, setTitle] = useState("");
  const [body, setBody] = useState("");
  const [affects, setAffects] = useState<string[]>([]);
  const [starts, setStarts] = useState("");
  const [ends, setEnds] = useState("");
  const [outcome, run] = useAction();
  const plan = async (event: Event) => {
    event.preventDefault();
    if (!starts || !ends) return;
    const answer = await run(
      api.createMaintenance({ title: title.trim(), body, affects, starts_at: localToIso(starts), ends_at: localToIso(ends) }),
      "Maintenance planned: the status page shows it.",
    );
    if (answer.ok) {
      setTitle("");
      setBody("");
      reload();
    }
  };
  const cancel = async (m: Maintenance) => {
    const answer = await run(api.cancelMaintenance(m.id), `"${m.title}" cancelled.`);
    if (answer.ok) reload();
  };
  return (
    <>
      <h2 class="group-title">Maintenance</h2>
      <Section title="Plan a window" level={3}>
        <form class="grid-form" onSubmit={(e) => void plan(e)}>
          <Field label="Title">
            {(a) => <input {...a} required maxLength={200} value={title} onInput={(e: InputEvent) => setTitle(valueOf(e))} />}
          </Field>
          <Field label="Starts (your time)">
            {(a) => <input {...a} type="datetime-local" required value={starts} onInput={(e: InputEvent) => setStarts(valueOf(e))} />}
          </Field>
          <Field label="Ends (your time)">
            {(a) => <input {...a} type="datetime-local" required value={ends} onInput={(e: InputEvent) => setEnds(valueOf(e))} />}
          </Field>
          <AffectsBoxes value={affects} onChange={setAffects} />
          <Field label="Details" class="wide">
            {(a) => <textarea {...a} rows={3} maxLength={10_000} value={body} onInput={(e: InputEvent) => setBody(valueOf(e))} />}
          </Field>
          <div class="form-actions">
            <button type="submit" class="primary">
              Plan it
            </button>
          </div>
        </form>
        <Outcome outcome={outcome} />
      </Section>
      <Show loaded={list} label="Loading the maintenance windows…">
        {(d) =>
          d.maintenance.length === 0 ? (
            <Empty>No maintenance planned.</Empty>
          ) : (
            <Table caption="Maintenance windows" head={["Window", "When", "Affects", "State", ""]}>
              {d.maintenance.map((m) => {
                const state = windowState(m);
                return (
                  <tr key={m.id}>
                    <th scope="row" class="break">
                      <Ext text={m.title} />
                      {m.body ? (
                        <div class="muted text-block">
                          <Ext text={m.body} />
                        </div>
                      ) : null}
                    </th>
                    <td>
                      <Time iso={m.starts_at} /> to <Time iso={m.ends_at} />
                    </td>
                    <td data-label="Affects">{m.affects.length ? m.affects.join(", ") : "everything"}</td>
                    <td>
                      <Badge value={state === "upcoming" ? "pending" : state === "in progress" ? "warn" : "plain"} label={state} />
                    </td>
                    <td>
                      {state === "upcoming" || state === "in progress" ? (
                        <Confirm
                          label="Cancel"
                          danger
                          title={`Cancel "${m.title}"?`}
                          confirm="Cancel the window"
                          onConfirm={() => cancel(m)}
                        >
                          <p>The status page stops announcing it.</p>
                        </Confirm>
                      ) : null}
                    </td>
                  </tr>
                );
              })}
            </Table>
          )
        }
      </Show>
    </>
  );
}
