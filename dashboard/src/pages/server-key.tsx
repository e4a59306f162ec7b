import { useState } from "preact/hooks";
import { clearServerKey, may, rememberServerKey, serverKey } from "../auth.js";
import type { Refusal } from "../http.js";
import { Field, RefusalBox, Section, valueOf, type InputEvent } from "../ui.js";

/**
 * The scans, findings and activity pages read the public security-data endpoints
 * (interface.md 4.5, 4.7-4.9), which take a server key, not a sign-in. This panel holds
 * one for the tab (auth.ts keeps it in sessionStorage). Those calls count against the
 * plan's allowance like any other call of the key.
 */
export function ServerKeyPanel(props: { onChange: () => void }) {
  const held = serverKey();
  const [key, setKey] = useState("");
  const [lock, setLock] = useState("");
  const [refusal, setRefusal] = useState<Refusal | null>(null);
  const [open, setOpen] = useState(held === null);
  const connect = (event: Event) => {
    event.preventDefault();
    const refused = rememberServerKey(key, lock || null);
    setRefusal(refused);
    if (refused) return;
    setKey("");
    setLock("");
    setOpen(false);
    props.onChange();
  };
  if (held && !open) {
    return (
      <p class="key-held">
        Reading with the server key <span class="mono">{held.key.slice(0, 12)}…</span>
        {held.domain ? ` (locked to ${held.domain})` : ""}.{" "}
        <button type="button" class="link-button" onClick={() => setOpen(true)}>
          Use another
        </button>{" "}
        <button
          type="button"
          class="link-button"
          onClick={() => {
            clearServerKey();
            setOpen(true);
            props.onChange();
          }}
        >
          Forget it
        </button>
      </p>
    );
  }
  return (
    <Section title="Connect a server key">
      <p class="hint">
        Scans, findings and the activity record are read through the public API with a server key (sk_…); each call counts like any call of
        the key. The key stays in this tab only.{" "}
        {may("manage")
          ? "Create one on the Keys page: the new key offers to be used here."
          : "Your role does not create keys: ask an admin of the organization for one."}
      </p>
      <form class="grid-form" onSubmit={connect} noValidate>
        <Field label="Server key">
          {(a) => (
            <input
              {...a}
              type="password"
              autocomplete="off"
              spellcheck={false}
              value={key}
              onInput={(e: InputEvent) => setKey(valueOf(e))}
            />
          )}
        </Field>
        <Field label="Its domain lock, if it has one" hint="Sent as domain: a locked key is refused for any other.">
          {(a) => <input {...a} value={lock} placeholder="(none)" onInput={(e: InputEvent) => setLock(valueOf(e))} />}
        </Field>
        <div class="form-actions">
          <button type="submit" class="primary">
            Use this key
          </button>
          {held ? (
            <button type="button" onClick={() => setOpen(false)}>
              Keep the current one
            </button>
          ) : null}
        </div>
      </form>
      {refusal ? <RefusalBox refusal={refusal} /> : null}
    </Section>
  );
}
