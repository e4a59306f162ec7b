import { useState } from "preact/hooks";
import { api, data, type Assignment, type Member } from "../api.js";
import { may, principal, serverKey } from "../auth.js";
import { useOrg } from "../layout.js";
import { Link, setQuery, to, usePlace } from "../router.js";
import {
  Badge,
  Empty,
  Ext,
  Field,
  Loading,
  Outcome,
  PageTitle,
  Section,
  Show,
  Table,
  Time,
  idle,
  today,
  useAction,
  useAnswer,
  valueOf,
  type InputEvent,
  type Loaded,
} from "../ui.js";
import { ServerKeyPanel } from "./server-key.js";

/**
 * The findings board (interface.md 4.7, 4.8, 2.7): who owns which failing finding, by when,
 * and its story. Filters live in the address; owner, status and due date change on the
 * finding's page, with its timeline, its notes and a re-check.
 */

function useMembers(org: number): Loaded<{ members: Member[] }> {
  return useAnswer(() => api.members(org, { limit: 500 }), [org])[0];
}

function ownerLabel(owner: Assignment["owner"]): preact.ComponentChildren {
  return owner ? <Ext text={`${owner.name} <${owner.email}>`} /> : <span class="muted">nobody</span>;
}

function Flags(props: { a: Assignment }) {
  return (
    <>
      {props.a.overdue ? <Badge value="overdue" /> : null} {props.a.past_target ? <Badge value="warn" label="past the fix target" /> : null}
    </>
  );
}

export function FindingsPage() {
  const { id: org } = useOrg();
  const place = usePlace();
  const [round, setRound] = useState(0);
  const owner = place.query.get("owner") ?? "";
  const status = place.query.get("status") ?? "";
  const forDomain = place.query.get("domain") ?? "";
  const overdue = place.query.get("overdue") === "1";
  const members = useMembers(org);
  const [domains] = useAnswer(() => api.domains(org, { limit: 500 }), [org]);
  const [board] = useAnswer(
    () => (serverKey() ? data.assignments({ owner, status, for_domain: forDomain, overdue }) : idle<never>()),
    [owner, status, forDomain, overdue, round],
  );
  return (
    <>
      <PageTitle sub="Failing findings with an owner and a due date; overdue ones first.">Findings</PageTitle>
      <ServerKeyPanel onChange={() => setRound(round + 1)} />
      <form class="filters" onSubmit={(e) => e.preventDefault()} aria-label="Filter the findings">
        <Field label="Owner">
          {(a) => (
            <select {...a} value={owner} onChange={(e: InputEvent) => setQuery({ owner: valueOf(e) })}>
              <option value="">anyone</option>
              {members.state === "ok"
                ? members.data.members.map((m) => (
                    <option key={m.email} value={m.email}>
                      {m.name} ({m.email})
                    </option>
                  ))
                : null}
            </select>
          )}
        </Field>
        <Field label="Status">
          {(a) => (
            <select {...a} value={status} onChange={(e: InputEvent) => setQuery({ status: valueOf(e) })}>
              <option value="">open or in progress</option>
              <option value="open">open</option>
              <option value="in_progress">in progress</option>
              <option value="done">done</option>
              <option value="all">all</option>
            </select>
          )}
        </Field>
        <Field label="Domain">
          {(a) => (
            <select {...a} value={forDomain} onChange={(e: InputEvent) => setQuery({ domain: valueOf(e) })}>
              <option value="">every domain</option>
              {domains.state === "ok"
                ? domains.data.domains
                    .filter((d) => d.verified)
                    .map((d) => (
                      <option key={d.name} value={d.name}>
                        {d.name}
                      </option>
                    ))
                : null}
            </select>
          )}
        </Field>
        <div class="field">
          <label class="check">
            <input
              type="checkbox"
              checked={overdue}
              onChange={(e) => setQuery({ overdue: (e.currentTarget as HTMLInputElement).checked ? "1" : null })}
            />{" "}
            Overdue only
          </label>
        </div>
      </form>
      {serverKey() ? (
        <Show loaded={board} label="Loading the findings…">
          {(d) =>
            d.assignments.length === 0 ? (
              <Empty>No finding matches. Failing findings appear here once a scan found them and someone owns them.</Empty>
            ) : (
              <Table caption="Findings" head={["Finding", "Domain", "Status", "Owner", "Due", "Updated"]}>
                {d.assignments.map((a) => (
                  <tr key={`${a.domain}/${a.finding_key}`} class={a.overdue ? "attention" : undefined}>
                    <th scope="row">
                      <Link href={to.finding(org, a.domain, a.finding_key)}>
                        <Ext text={a.finding} />
                      </Link>
                      <div class="muted mono">{a.finding_key}</div>
                    </th>
                    <td>
                      <Ext text={a.domain} />
                    </td>
                    <td>
                      <Badge value={a.status} /> <Flags a={a} />
                    </td>
                    <td data-label="Owner">{ownerLabel(a.owner)}</td>
                    <td data-label="Due">
                      <Time iso={a.due_at} empty="no date" />
                    </td>
                    <td data-label="Updated">
                      <Time iso={a.updated_at} />
                    </td>
                  </tr>
                ))}
              </Table>
            )
          }
        </Show>
      ) : null}
    </>
  );
}

/** Who the notes and changes name: the signed-in member, or the operator. */
function me(): string {
  const p = principal();
  if (p?.member) return `${p.member.name} <${p.member.email}>`;
  if (p?.kind === "token") return `token ${p.token?.name ?? ""}`.trim();
  return "operator";
}

function AssignForm(props: { domain: string; findingKey: string; current: Assignment | null; members: Member[]; onSaved: () => void }) {
  const { current } = props;
  const [owner, setOwner] = useState(current?.owner?.email ?? "");
  const [status, setStatus] = useState<string>(current?.status ?? "open");
  const [due, setDue] = useState((current?.due_at ?? "").slice(0, 10));
  const [outcome, run] = useAction();
  const save = async (event: Event) => {
    event.preventDefault();
    const body: { for_domain: string; finding_key: string; owner?: string; status?: string; due?: string } = {
      for_domain: props.domain,
      finding_key: props.findingKey,
    };
    if (owner !== (current?.owner?.email ?? "") || !current) body.owner = owner;
    if (status !== (current?.status ?? "") || !current) body.status = status;
    if (due !== (current?.due_at ?? "").slice(0, 10)) body.due = due;
    const answer = await run(data.assign(body), "Saved: the owner hears about it by e-mail and webhook.");
    if (answer.ok) props.onSaved();
  };
  return (
    <form class="grid-form" onSubmit={(e) => void save(e)}>
      <Field label="Owner">
        {(a) => (
          <select {...a} value={owner} onChange={(e: InputEvent) => setOwner(valueOf(e))}>
            <option value="">nobody</option>
            {props.members.map((m) => (
              <option key={m.email} value={m.email}>
                {m.name} ({m.email})
              </option>
            ))}
          </select>
        )}
      </Field>
      <Field label="Status">
        {(a) => (
          <select {...a} value={status} onChange={(e: InputEvent) => setStatus(valueOf(e))}>
            <option value="open">open</option>
            <option value="in_progress">in progress</option>
            <option value="done">done</option>
          </select>
        )}
      </Field>
      <Field label="Due" hint="Today (UTC) or later; overdue once that day has ended in UTC. Empty clears it.">
        {(a) => <input {...a} type="date" min={today()} value={due} onInput={(e: InputEvent) => setDue(valueOf(e))} />}
      </Field>
      <div class="form-actions">
        <button type="submit" class="primary">
          Save
        </button>
      </div>
      <Outcome outcome={outcome} />
    </form>
  );
}

export function FindingPage(props: { domain: string; findingKey: string }) {
  const { id: org } = useOrg();
  const [round, setRound] = useState(0);
  const members = useMembers(org);
  const [story, reload] = useAnswer(
    () => (serverKey() ? data.story(props.domain, props.findingKey) : idle<never>()),
    [props.domain, props.findingKey, round],
  );
  const [note, setNote] = useState("");
  const [noteOutcome, runNote] = useAction();
  const [checkOutcome, runCheck] = useAction();
  const [checking, setChecking] = useState(false);
  const addNote = async (event: Event) => {
    event.preventDefault();
    if (!note.trim()) return;
    const answer = await runNote(api.addNote(org, props.domain, props.findingKey, me(), note.trim()), "Note added.");
    if (answer.ok) {
      setNote("");
      reload();
    }
  };
  const recheck = async () => {
    setChecking(true);
    const answer = await runCheck(data.recheck(props.domain, props.findingKey), (d) =>
      d.passed ? `The re-check passed (${d.check_status}): the finding is done.` : `The re-check did not pass (${d.check_status}).`,
    );
    setChecking(false);
    if (answer.ok) reload();
  };
  const assigned = story.state === "ok" ? story.data.assignment : null;
  return (
    <>
      <p class="crumbs">
        <Link href={to.findings(org)}>Findings</Link> / <Link href={to.scan(org, props.domain)}>{props.domain}</Link> /
      </p>
      <PageTitle sub={<code>{props.findingKey}</code>}>
        {assigned ? <Ext text={assigned.finding} /> : <Ext text={props.findingKey} />}
      </PageTitle>
      <ServerKeyPanel onChange={() => setRound(round + 1)} />
      {!serverKey() ? null : story.state === "loading" ? (
        <Loading label="Loading the finding's story…" />
      ) : (
        <>
          {story.state === "refused" && story.refusal.reason !== "not_found" ? <Outcome outcome={{ refusal: story.refusal }} /> : null}
          <Section title="Owner, status and due date">
            {assigned ? (
              <p>
                <Badge value={assigned.status} /> <Flags a={assigned} /> owned by {ownerLabel(assigned.owner)}, due{" "}
                <Time iso={assigned.due_at} empty="no date" />.
              </p>
            ) : (
              <p class="muted">Nobody owns this finding yet.</p>
            )}
            <AssignForm
              key={assigned?.updated_at ?? "new"}
              domain={props.domain}
              findingKey={props.findingKey}
              current={assigned}
              members={members.state === "ok" ? members.data.members : []}
              onSaved={reload}
            />
          </Section>
          <Section
            title="Re-check"
            actions={
              <button type="button" onClick={() => void recheck()} disabled={checking}>
                {checking ? "Checking… (up to 25 s)" : "Re-check now"}
              </button>
            }
          >
            <p class="hint">Scans this one finding again now; when it passes, the finding is marked done.</p>
            <Outcome outcome={checkOutcome} />
          </Section>
          <Section title="Timeline">
            {story.state === "ok" ? (
              <Timeline history={story.data.history} notes={story.data.notes} />
            ) : (
              <Empty>No history yet: the story starts when someone takes the finding.</Empty>
            )}
            {/* A note is the admin API's (POST), unlike the assignment above (the server key's): a read-only token adds none. */}
            {assigned && may("assign") ? (
              <form class="stack" onSubmit={(e) => void addNote(e)}>
                <Field label="Add a note">
                  {(a) => <textarea {...a} rows={3} maxLength={10_000} value={note} onInput={(e: InputEvent) => setNote(valueOf(e))} />}
                </Field>
                <button type="submit">Add the note</button>
                <Outcome outcome={noteOutcome} />
              </form>
            ) : null}
          </Section>
        </>
      )}
    </>
  );
}

function Timeline(props: { history: { time: string; who: string; what: string }[]; notes: { time: string; who: string; body: string }[] }) {
  const entries = [
    ...props.history.map((h) => ({ time: h.time, who: h.who, text: h.what, note: false })),
    ...props.notes.map((n) => ({ time: n.time, who: n.who, text: n.body, note: true })),
  ].sort((a, b) => a.time.localeCompare(b.time));
  if (entries.length === 0) return <Empty>Nothing has happened to this finding yet.</Empty>;
  return (
    <ol class="timeline">
      {entries.map((e, i) => (
        <li key={i} class={e.note ? "note" : undefined}>
          <span class="when">
            <Time iso={e.time} /> · <Ext text={e.who} />
            {e.note ? " wrote" : ""}
          </span>
          <span class="text-block">
            <Ext text={e.text} />
          </span>
        </li>
      ))}
    </ol>
  );
}
