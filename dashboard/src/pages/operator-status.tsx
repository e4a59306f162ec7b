import type { ComponentChildren, Ref } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";
import { api, type Incident, type Maintenance, type Service } from "../api.js";
import { navigatedInApp, setQuery, usePlace } from "../router.js";
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
  visible,
  type InputEvent,
  type OutcomeState,
} from "../ui.js";

/**
 * The operator's status page tabs (operator-api.md "Status page"; docs/status.md): each
 * service with its probe's last result and error, incidents with their updates and
 * postmortem, maintenance windows. An incident's title, impact and services, and an
 * upcoming or running window, are edited in a panel that `?edit=<id>` opens.
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

/** The services ticked, in the page's order (the API keeps them as sent). */
function ordered(affects: string[]): string[] {
  return SERVICES.filter((s) => affects.includes(s));
}

function sameServices(a: string[], b: string[]): boolean {
  return ordered(a).join(",") === ordered(b).join(",");
}

/** What a saved PATCH changed, in the forms' words. */
const FIELD_WORDS: Record<string, string> = { starts_at: "start", ends_at: "end", affects: "services", body: "details" };
function said(patch: object): string {
  return Object.keys(patch)
    .map((name) => FIELD_WORDS[name] ?? name)
    .join(", ");
}

/**
 * Focus to an editor's first field when it opens from the page (its Edit button, the back
 * button); on a fresh load of an address that opens it, focus stays at the top as on any page.
 */
function useFocusOnOpen(): Ref<HTMLInputElement> {
  const first = useRef<HTMLInputElement>(null);
  useEffect(() => {
    if (navigatedInApp()) first.current?.focus();
  }, []);
  return first;
}

/**
 * An editor's panel: its own heading, the form of its fields with the save button and
 * Close (not "Cancel": a window's row has a Cancel that cancels the window itself), and
 * the outcome of its save.
 */
function EditPanel(props: {
  id: string;
  heading: string;
  save: string;
  onSave: (event: Event) => void;
  onClose: () => void;
  outcome: OutcomeState;
  children: ComponentChildren;
}) {
  const headingId = `${props.id}-heading`;
  return (
    <section class="edit-panel" id={props.id} aria-labelledby={headingId}>
      <h4 id={headingId}>{props.heading}</h4>
      <form class="grid-form" onSubmit={props.onSave}>
        {props.children}
        <div class="form-actions">
          <button type="submit" class="primary">
            {props.save}
          </button>
          <button type="button" onClick={props.onClose}>
            Close
          </button>
        </div>
      </form>
      <Outcome outcome={props.outcome} />
    </section>
  );
}

/** The title of an incident or a window (the status page's heading for it). */
function TitleField(props: { value: string; onChange: (value: string) => void; inputRef?: Ref<HTMLInputElement> }) {
  return (
    <Field label="Title">
      {(a) => (
        <input
          {...a}
          ref={props.inputRef}
          required
          maxLength={200}
          value={props.value}
          onInput={(e: InputEvent) => props.onChange(valueOf(e))}
        />
      )}
    </Field>
  );
}

/** What an incident is opened with and corrected to. */
interface IncidentDraft {
  title: string;
  impact: string;
  affects: string[];
}

/** An incident's title, impact and affected services: the fields of opening one and of correcting it. */
function IncidentFields(props: { draft: IncidentDraft; onChange: (draft: IncidentDraft) => void; titleRef?: Ref<HTMLInputElement> }) {
  const { draft, onChange } = props;
  return (
    <>
      <TitleField value={draft.title} onChange={(title) => onChange({ ...draft, title })} inputRef={props.titleRef} />
      <Field label="Impact">
        {(a) => (
          <select {...a} value={draft.impact} onChange={(e: InputEvent) => onChange({ ...draft, impact: valueOf(e) })}>
            <option value="minor">minor</option>
            <option value="major">major</option>
          </select>
        )}
      </Field>
      <AffectsBoxes value={draft.affects} onChange={(affects) => onChange({ ...draft, affects })} />
    </>
  );
}

/**
 * The incident's title, impact and affected services, corrected with one PATCH of what
 * changed (a resolved incident too). Takes focus when opened; `onDone` closes it.
 */
function IncidentEditor(props: { incident: Incident; id: string; onDone: (saved: string | null) => void }) {
  const { incident } = props;
  const [draft, setDraft] = useState<IncidentDraft>({ title: incident.title, impact: incident.impact, affects: incident.affects });
  const [outcome, run, setOutcome] = useAction();
  const first = useFocusOnOpen();
  const save = async (event: Event) => {
    event.preventDefault();
    const body: { title?: string; impact?: string; affects?: string[] } = {};
    if (draft.title.trim() !== incident.title) body.title = draft.title.trim();
    if (draft.impact !== incident.impact) body.impact = draft.impact;
    if (!sameServices(draft.affects, incident.affects)) body.affects = ordered(draft.affects);
    if (Object.keys(body).length === 0) {
      setOutcome({ done: "Nothing changed." });
      return;
    }
    const answer = await run(api.patchIncident(incident.id, body), "Saved.");
    if (answer.ok) props.onDone(`Saved (${said(body)}): the status page shows it.`);
  };
  return (
    <EditPanel
      id={props.id}
      heading={`Edit incident #${incident.id}`}
      save="Save the incident"
      onSave={(e) => void save(e)}
      onClose={() => props.onDone(null)}
      outcome={outcome}
    >
      <IncidentFields draft={draft} onChange={setDraft} titleRef={first} />
    </EditPanel>
  );
}

function IncidentCard(props: { incident: Incident; editing: boolean; onChanged: () => void }) {
  const { incident } = props;
  const [status, setStatus] = useState(incident.status === "resolved" ? "resolved" : incident.status);
  const [body, setBody] = useState("");
  const [postmortem, setPostmortem] = useState(incident.postmortem ?? "");
  const [outcome, run] = useAction();
  const [edited, setEdited] = useState<OutcomeState>(null);
  const editButton = useRef<HTMLButtonElement>(null);
  const panelId = `incident-${incident.id}-edit`;
  const toggle = () => {
    setEdited(null);
    setQuery({ edit: props.editing ? null : incident.id });
  };
  const done = (saved: string | null) => {
    // Focus goes back to the button before the panel (and the field that had it) goes away.
    editButton.current?.focus();
    setQuery({ edit: null });
    if (saved) {
      setEdited({ done: saved });
      props.onChanged();
    }
  };
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
    <Section
      title={incident.title}
      level={3}
      actions={
        <>
          <Badge value={incident.status} />
          <button
            type="button"
            ref={editButton}
            onClick={toggle}
            aria-expanded={props.editing}
            aria-controls={props.editing ? panelId : undefined}
            aria-label={`Edit incident #${incident.id}`}
          >
            Edit
          </button>
        </>
      }
    >
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
      {props.editing ? <IncidentEditor incident={incident} id={panelId} onDone={done} /> : null}
      <Outcome outcome={edited} />
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
  const editing = usePlace().query.get("edit");
  const [list, reload] = useAnswer(() => api.incidents(), []);
  const [draft, setDraft] = useState<IncidentDraft>({ title: "", impact: "minor", affects: [] });
  const [body, setBody] = useState("");
  const [outcome, run] = useAction();
  const open = async (event: Event) => {
    event.preventDefault();
    const answer = await run(
      api.createIncident({ ...draft, title: draft.title.trim(), status: "investigating", body }),
      "Incident opened on the status page.",
    );
    if (answer.ok) {
      setDraft({ ...draft, title: "", affects: [] });
      setBody("");
      reload();
    }
  };
  return (
    <>
      <h2 class="group-title">Incidents</h2>
      <Section title="Open an incident" level={3}>
        <form class="grid-form" onSubmit={(e) => void open(e)}>
          <IncidentFields draft={draft} onChange={setDraft} />
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
                editing={editing === String(incident.id)}
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

/** An ISO time as a datetime-local input's value, `YYYY-MM-DDTHH:MM` in the browser's zone. */
function isoToLocal(iso: string): string {
  const d = new Date(iso);
  const two = (n: number) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${two(d.getMonth() + 1)}-${two(d.getDate())}T${two(d.getHours())}:${two(d.getMinutes())}`;
}

type MaintenancePatch = Parameters<typeof api.patchMaintenance>[1];

/** What a window is planned with and edited to; the times as datetime-local values, in the browser's zone. */
interface WindowDraft {
  title: string;
  starts: string;
  ends: string;
  affects: string[];
  body: string;
}

/** A time typed on the browser's clock (a datetime-local value, `YYYY-MM-DDTHH:MM`). */
function LocalTimeField(props: { label: string; value: string; onChange: (value: string) => void; error?: string | null }) {
  return (
    <Field label={props.label} error={props.error ?? null}>
      {(a) => <input {...a} type="datetime-local" required value={props.value} onInput={(e: InputEvent) => props.onChange(valueOf(e))} />}
    </Field>
  );
}

/** A window's title, times, services and details: the fields of planning one and of editing it. */
function WindowFields(props: {
  draft: WindowDraft;
  onChange: (draft: WindowDraft) => void;
  titleRef?: Ref<HTMLInputElement>;
  endsError?: string | null;
}) {
  const { draft, onChange } = props;
  return (
    <>
      <TitleField value={draft.title} onChange={(title) => onChange({ ...draft, title })} inputRef={props.titleRef} />
      <LocalTimeField label="Starts (your time)" value={draft.starts} onChange={(starts) => onChange({ ...draft, starts })} />
      <LocalTimeField
        label="Ends (your time)"
        value={draft.ends}
        onChange={(ends) => onChange({ ...draft, ends })}
        error={props.endsError}
      />
      <AffectsBoxes value={draft.affects} onChange={(affects) => onChange({ ...draft, affects })} />
      <Field label="Details" class="wide">
        {(a) => (
          <textarea
            {...a}
            rows={3}
            maxLength={10_000}
            value={draft.body}
            onInput={(e: InputEvent) => onChange({ ...draft, body: valueOf(e) })}
          />
        )}
      </Field>
    </>
  );
}

/**
 * An upcoming or running window's title, times, services and details, saved with one PATCH
 * of what changed. The times are shown and typed in the browser's zone; a time left as it
 * was is not sent (the field holds it to the minute only). The API judges the rest: an end
 * not after the start is refused next to "Ends", a window over or cancelled meanwhile with
 * 409 conflict.
 */
function MaintenanceEditor(props: { window: Maintenance; id: string; onDone: (saved: string | null) => void }) {
  const m = props.window;
  const [draft, setDraft] = useState<WindowDraft>({
    title: m.title,
    starts: isoToLocal(m.starts_at),
    ends: isoToLocal(m.ends_at),
    affects: m.affects,
    body: m.body,
  });
  const [endsError, setEndsError] = useState<string | null>(null);
  const [outcome, run, setOutcome] = useAction();
  const first = useFocusOnOpen();
  const save = async (event: Event) => {
    event.preventDefault();
    setEndsError(null);
    if (!draft.starts || !draft.ends) return;
    const patch: MaintenancePatch = {};
    if (draft.title.trim() !== m.title) patch.title = draft.title.trim();
    if (draft.starts !== isoToLocal(m.starts_at)) patch.starts_at = localToIso(draft.starts);
    if (draft.ends !== isoToLocal(m.ends_at)) patch.ends_at = localToIso(draft.ends);
    if (!sameServices(draft.affects, m.affects)) patch.affects = ordered(draft.affects);
    if (draft.body !== m.body) patch.body = draft.body;
    if (Object.keys(patch).length === 0) {
      setOutcome({ done: "Nothing changed." });
      return;
    }
    const answer = await run(api.patchMaintenance(m.id, patch), "Saved.");
    if (answer.ok) props.onDone(`Window saved (${said(patch)}): the status page shows it.`);
    else if (answer.reason === "bad_ends_at") setEndsError("Must be after the start.");
  };
  return (
    <EditPanel
      id={props.id}
      heading="Edit the window"
      save="Save the window"
      onSave={(e) => void save(e)}
      onClose={() => props.onDone(null)}
      outcome={outcome}
    >
      <WindowFields draft={draft} onChange={setDraft} titleRef={first} endsError={endsError} />
    </EditPanel>
  );
}

/** A window's row; while it is edited, a second row under it holds the editor. */
function MaintenanceRow(props: {
  window: Maintenance;
  editing: boolean;
  onCancel: (m: Maintenance) => Promise<void>;
  /** The Edit button pressed: what was said of the list is old news. */
  onToggle: () => void;
  /** Closed, saved (what to say) or not: the list is read again (a refusal may mean the window changed meanwhile). */
  onClosed: (saved: string | null) => void;
}) {
  const m = props.window;
  const state = windowState(m);
  const editable = state === "upcoming" || state === "in progress";
  const editButton = useRef<HTMLButtonElement>(null);
  const panelId = `maintenance-${m.id}-edit`;
  const done = (saved: string | null) => {
    // Focus goes back to the button before the panel (and the field that had it) goes away.
    editButton.current?.focus();
    setQuery({ edit: null });
    props.onClosed(saved);
  };
  return (
    <>
      <tr>
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
        <td class="row-actions">
          {editable ? (
            <>
              <button
                type="button"
                ref={editButton}
                onClick={() => {
                  props.onToggle();
                  setQuery({ edit: props.editing ? null : m.id });
                }}
                aria-expanded={props.editing}
                aria-controls={props.editing ? panelId : undefined}
                aria-label={`Edit "${visible(m.title)}"`}
              >
                Edit
              </button>
              <Confirm label="Cancel" danger title={`Cancel "${m.title}"?`} confirm="Cancel the window" onConfirm={() => props.onCancel(m)}>
                <p>The status page stops announcing it.</p>
              </Confirm>
            </>
          ) : null}
        </td>
      </tr>
      {props.editing && editable ? (
        <tr class="edit-row">
          <td colSpan={5}>
            <MaintenanceEditor window={m} id={panelId} onDone={done} />
          </td>
        </tr>
      ) : null}
    </>
  );
}

export function MaintenanceTab() {
  const editing = usePlace().query.get("edit");
  const [list, reload] = useAnswer(() => api.maintenance(), []);
  // What happened to a window of the list (cancelled, edited), said under the table.
  const [listed, runListed, setListed] = useAction();
  const [draft, setDraft] = useState<WindowDraft>({ title: "", starts: "", ends: "", affects: [], body: "" });
  const [outcome, run] = useAction();
  const plan = async (event: Event) => {
    event.preventDefault();
    const { title, body, affects, starts, ends } = draft;
    if (!starts || !ends) return;
    const answer = await run(
      api.createMaintenance({ title: title.trim(), body, affects, starts_at: localToIso(starts), ends_at: localToIso(ends) }),
      "Maintenance planned: the status page shows it.",
    );
    if (answer.ok) {
      setDraft({ ...draft, title: "", body: "" });
      reload();
    }
  };
  const cancel = async (m: Maintenance) => {
    const answer = await runListed(api.cancelMaintenance(m.id), `"${m.title}" cancelled.`);
    if (answer.ok) reload();
  };
  const closed = (saved: string | null) => {
    setListed(saved ? { done: saved } : null);
    reload();
  };
  return (
    <>
      <h2 class="group-title">Maintenance</h2>
      <Section title="Plan a window" level={3}>
        <form class="grid-form" onSubmit={(e) => void plan(e)}>
          <WindowFields draft={draft} onChange={setDraft} />
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
              {d.maintenance.map((m) => (
                <MaintenanceRow
                  key={m.id}
                  window={m}
                  editing={editing === String(m.id)}
                  onCancel={cancel}
                  onToggle={() => setListed(null)}
                  onClosed={closed}
                />
              ))}
            </Table>
          )
        }
      </Show>
      <Outcome outcome={listed} />
    </>
  );
}
