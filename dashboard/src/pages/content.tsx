import { useState } from "preact/hooks";
import { api, type ContentItem } from "../api.js";
import { may } from "../auth.js";
import { useOrg } from "../layout.js";
import { setQuery, usePlace } from "../router.js";
import {
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
  useAction,
  useAnswer,
  valueOf,
  type InputEvent,
} from "../ui.js";

/**
 * Managed content and runtime secrets (operator-api.md "Content, secrets"; interface.md
 * 2.3, 2.4). Content is edited by type; a secret is write-only: its value is sent once and
 * never shown again, only its name and when it changed.
 */

const TYPES = ["text", "html", "json", "number", "boolean"] as const;
type ContentType = (typeof TYPES)[number];
const NAME = /^[A-Za-z0-9_.:-]{1,128}$/;

type Listed = ContentItem & { content_key: string };

/** The list answers an array of items (section 5); a content object keyed by content key (2.3) is read too. */
function itemsOf(content: Record<string, ContentItem> | Listed[]): Listed[] {
  return Array.isArray(content) ? content : Object.entries(content).map(([content_key, item]) => ({ content_key, ...item }));
}

function preview(item: ContentItem): string {
  const text = item.type === "json" ? JSON.stringify(item.value) : String(item.value);
  return text.length > 160 ? `${text.slice(0, 160)}…` : text;
}

function editorText(item: ContentItem | null): string {
  if (!item) return "";
  return item.type === "json" ? JSON.stringify(item.value, null, 2) : String(item.value);
}

function parseValue(type: ContentType, raw: string): { value: unknown } | { problem: string } {
  switch (type) {
    case "text":
    case "html":
      return { value: raw };
    case "number":
      return raw.trim() !== "" && Number.isFinite(Number(raw)) ? { value: Number(raw) } : { problem: "A number, like 42 or 9.99." };
    case "boolean":
      return raw === "true" || raw === "false" ? { value: raw === "true" } : { problem: "true or false." };
    case "json":
      try {
        return { value: JSON.parse(raw) as unknown };
      } catch {
        return { problem: "Not valid JSON." };
      }
  }
}

function Editor(props: { org: number; editing: Listed | null; onSaved: () => void }) {
  const { editing } = props;
  const [key, setKey] = useState(editing?.content_key ?? "");
  const [type, setType] = useState<ContentType>((editing?.type as ContentType) ?? "text");
  const [raw, setRaw] = useState(editorText(editing));
  const [problems, setProblems] = useState<{ key?: string; value?: string }>({});
  const [outcome, run] = useAction();
  const save = async (event: Event) => {
    event.preventDefault();
    const found: { key?: string; value?: string } = {};
    if (!NAME.test(key)) found.key = "1 to 128 letters, digits or _ . : -";
    const parsed = parseValue(type, type === "boolean" && raw === "" ? "false" : raw);
    if ("problem" in parsed) found.value = parsed.problem;
    setProblems(found);
    if (Object.keys(found).length > 0 || "problem" in parsed) return;
    const answer = await run(api.putContent(props.org, key, type, parsed.value), `"${key}" published: keys read it from their next call.`);
    if (answer.ok) props.onSaved();
  };
  return (
    <form class="grid-form" onSubmit={(e) => void save(e)} noValidate>
      <Field label="Content key" error={problems.key}>
        {(a) => (
          <input {...a} value={key} readOnly={editing !== null} onInput={(e: InputEvent) => setKey(valueOf(e))} placeholder="banner" />
        )}
      </Field>
      <Field label="Type">
        {(a) => (
          <select {...a} value={type} onChange={(e: InputEvent) => setType(valueOf(e) as ContentType)}>
            {TYPES.map((t) => (
              <option key={t}>{t}</option>
            ))}
          </select>
        )}
      </Field>
      <Field
        label="Value"
        error={problems.value}
        class="wide"
        hint={
          type === "html" ? "Sites receive it as given; here it is always shown as text." : type === "json" ? "Any JSON value." : undefined
        }
      >
        {(a) =>
          type === "boolean" ? (
            <select {...a} value={raw === "true" ? "true" : "false"} onChange={(e: InputEvent) => setRaw(valueOf(e))}>
              <option value="true">true</option>
              <option value="false">false</option>
            </select>
          ) : type === "number" ? (
            <input {...a} inputMode="decimal" value={raw} onInput={(e: InputEvent) => setRaw(valueOf(e))} />
          ) : (
            <textarea
              {...a}
              rows={type === "text" ? 3 : 8}
              class={type === "text" ? undefined : "mono"}
              value={raw}
              onInput={(e: InputEvent) => setRaw(valueOf(e))}
            />
          )
        }
      </Field>
      <div class="form-actions">
        <button type="submit" class="primary">
          Publish
        </button>
        {editing ? (
          <button type="button" onClick={() => setQuery({ edit: null })}>
            Close
          </button>
        ) : null}
      </div>
      <Outcome outcome={outcome} />
    </form>
  );
}

function Secrets(props: { org: number }) {
  const [list, reload] = useAnswer(() => api.secrets(props.org, { limit: 500 }), [props.org]);
  const [name, setName] = useState("");
  const [value, setValue] = useState("");
  const [problem, setProblem] = useState<{ name?: string; value?: string }>({});
  const [outcome, run] = useAction();
  const save = async (event: Event) => {
    event.preventDefault();
    const found: { name?: string; value?: string } = {};
    if (!NAME.test(name)) found.name = "1 to 128 letters, digits or _ . : -";
    if (value === "") found.value = "The value to store.";
    setProblem(found);
    if (Object.keys(found).length > 0) return;
    const answer = await run(api.putSecret(props.org, name, value), `Secret "${name}" stored. Its value is not shown again.`);
    // The value leaves the page as soon as it is sent, stored or not.
    setValue("");
    if (answer.ok) {
      setName("");
      reload();
    }
  };
  const remove = async (secret: string) => {
    const answer = await run(api.deleteSecret(props.org, secret), `Secret "${secret}" deleted.`);
    if (answer.ok) reload();
  };
  return (
    <Section title="Secrets">
      <p class="hint">
        Handed to server keys with an IP allowlist by <code>secret.php</code>. Write-only: a value is never shown again, here or anywhere.
      </p>
      <Show loaded={list} label="Loading the secrets…">
        {(d) =>
          d.secrets.length === 0 ? (
            <Empty>No secrets yet.</Empty>
          ) : (
            <Table caption="Secrets" head={["Name", "Changed", ""]}>
              {d.secrets.map((s) => (
                <tr key={s.name}>
                  <th scope="row" class="mono">
                    <Ext text={s.name} />
                  </th>
                  <td data-label="Changed">
                    <Time iso={s.updated_at} />
                  </td>
                  <td class="row-actions">
                    {may("manage") ? (
                      <>
                        <button type="button" onClick={() => setName(s.name)} aria-label={`Replace the value of ${s.name}`}>
                          Replace
                        </button>
                        <Confirm
                          label="Delete"
                          danger
                          title={`Delete the secret "${s.name}"?`}
                          confirm="Delete"
                          onConfirm={() => remove(s.name)}
                        >
                          <p>Servers asking for it get unknown_secret from now on.</p>
                        </Confirm>
                      </>
                    ) : null}
                  </td>
                </tr>
              ))}
            </Table>
          )
        }
      </Show>
      {may("manage") ? (
        <form class="grid-form" onSubmit={(e) => void save(e)} noValidate>
          <Field label="Name" error={problem.name}>
            {(a) => (
              <input
                {...a}
                value={name}
                class="mono"
                onInput={(e: InputEvent) => setName(valueOf(e))}
                placeholder="STRIPE_KEY"
                autocomplete="off"
              />
            )}
          </Field>
          <Field label="Value" error={problem.value} hint="Sent once, stored encrypted, never shown again.">
            {(a) => (
              <input
                {...a}
                type="password"
                value={value}
                onInput={(e: InputEvent) => setValue(valueOf(e))}
                autocomplete="new-password"
                spellcheck={false}
              />
            )}
          </Field>
          <div class="form-actions">
            <button type="submit" class="primary">
              Store the secret
            </button>
          </div>
        </form>
      ) : null}
      <Outcome outcome={outcome} />
    </Section>
  );
}

export function ContentPage() {
  const { id: org } = useOrg();
  const place = usePlace();
  const edit = place.query.get("edit");
  const [list, reload] = useAnswer(() => api.content(org, { limit: 500 }), [org]);
  const [removed, run] = useAction();
  const items = list.state === "ok" ? itemsOf(list.data.content) : [];
  const editing = edit ? (items.find((i) => i.content_key === edit) ?? null) : null;
  const remove = async (key: string) => {
    const answer = await run(api.deleteContent(org, key), `"${key}" removed.`);
    if (answer.ok) reload();
  };
  return (
    <>
      <PageTitle sub="Values your keys read with content.php, and secrets your servers read with secret.php.">
        Content and secrets
      </PageTitle>
      <Section title="Content">
        <Show loaded={list} label="Loading the content…">
          {() =>
            items.length === 0 ? (
              <Empty>No content yet.</Empty>
            ) : (
              <Table caption="Content" head={["Key", "Type", "Value", "Changed", ""]}>
                {items.map((item) => (
                  <tr key={item.content_key}>
                    <th scope="row" class="mono">
                      <Ext text={item.content_key} />
                    </th>
                    <td>{item.type}</td>
                    <td class="break">
                      <Ext text={preview(item)} class={item.type === "text" ? undefined : "mono"} />
                    </td>
                    <td data-label="Changed">
                      <Time iso={item.updated_at} />
                    </td>
                    <td class="row-actions">
                      {may("manage") ? (
                        <>
                          <button
                            type="button"
                            onClick={() => setQuery({ edit: item.content_key })}
                            aria-label={`Edit ${item.content_key}`}
                          >
                            Edit
                          </button>
                          <Confirm
                            label="Delete"
                            danger
                            title={`Delete "${item.content_key}"?`}
                            confirm="Delete"
                            onConfirm={() => remove(item.content_key)}
                          >
                            <p>Keys asking for it get not_found from now on.</p>
                          </Confirm>
                        </>
                      ) : null}
                    </td>
                  </tr>
                ))}
              </Table>
            )
          }
        </Show>
        <Outcome outcome={removed} />
        {may("manage") ? (
          <>
            <h3>{editing ? `Edit "${editing.content_key}"` : "Publish a value"}</h3>
            <Editor
              key={editing?.content_key ?? "new"}
              org={org}
              editing={editing}
              onSaved={() => {
                reload();
                if (edit) setQuery({ edit: null });
              }}
            />
          </>
        ) : null}
      </Section>
      <Secrets org={org} />
    </>
  );
}
