import type { ComponentChildren, JSX } from "preact";
import { useCallback, useEffect, useId, useRef, useState } from "preact/hooks";
import type { Answer, Refusal } from "./http.js";
import { Link, navigatedInApp } from "./router.js";
import { localTime, utcTime, utcToday } from "./time.js";

/**
 * The dashboard's small pieces: loading, empty and refusal states, outside text, times,
 * copy fields, confirmation dialogs, form fields, pagers and tabs. Everything renders
 * through Preact's text nodes and attributes: no markup is ever built from a string.
 */

// ---- loading an answer ----

export type Loaded<T> = { state: "loading" } | { state: "ok"; data: T; headers: Headers } | { state: "refused"; refusal: Refusal };

/** Runs `load` when `deps` change; a late answer of an earlier run is dropped. */
export function useAnswer<T>(load: () => Promise<Answer<T>>, deps: readonly unknown[]): [Loaded<T>, () => void] {
  const [loaded, setLoaded] = useState<Loaded<T>>({ state: "loading" });
  const [round, setRound] = useState(0);
  const run = useRef(0);
  useEffect(() => {
    const mine = ++run.current;
    setLoaded((previous) => (previous.state === "ok" ? previous : { state: "loading" }));
    // load() answers refusals as values (http.ts); it does not reject.
    void load().then((answer) => {
      if (mine !== run.current) return;
      setLoaded(answer.ok ? { state: "ok", data: answer.data, headers: answer.headers } : { state: "refused", refusal: answer });
    });
  }, [...deps, round]);
  const reload = useCallback(() => setRound((n) => n + 1), []);
  return [loaded, reload];
}

/** An answer that never comes: for a part that has nothing to ask yet (it stays "loading", and is not shown). */
export function idle<T>(): Promise<Answer<T>> {
  return new Promise<Answer<T>>(() => undefined);
}

export function Loading(props: { label?: string }) {
  return (
    <p class="loading" role="status" aria-busy="true">
      {props.label ?? "Loading…"}
    </p>
  );
}

export function Empty(props: { children: ComponentChildren }) {
  return <p class="empty">{props.children}</p>;
}

/** A refusal as the API said it: the sentence, what to fix, and the reason code. */
export function RefusalBox(props: { refusal: Refusal; title?: string }) {
  const { refusal } = props;
  return (
    <div class="refusal" role="alert">
      {props.title ? <strong>{props.title}: </strong> : null}
      <Ext text={refusal.message} />
      {/* Main's admin refusals already put the detail in the message ("url: ..."): said once. */}
      {refusal.detail && !refusal.message.includes(refusal.detail) ? (
        <>
          {" "}
          (<Ext text={refusal.detail} />)
        </>
      ) : null}{" "}
      <code class="reason">{refusal.reason}</code>
    </div>
  );
}

/** Loading, refused, or the content made from the data. */
export function Show<T>(props: { loaded: Loaded<T>; label?: string; children: (data: T, headers: Headers) => ComponentChildren }) {
  const { loaded } = props;
  if (loaded.state === "loading") return <Loading label={props.label} />;
  if (loaded.state === "refused") return <RefusalBox refusal={loaded.refusal} />;
  return <>{props.children(loaded.data, loaded.headers)}</>;
}

// ---- outside text ----

/** C0 and C1 controls, and the characters that reorder text (bidi embeddings, overrides, isolates, marks). */
const INVISIBLE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]/g;

export function visible(text: string): string {
  return text.replace(INVISIBLE, (c) => `⟨U+${c.codePointAt(0)?.toString(16).toUpperCase().padStart(4, "0")}⟩`);
}

/**
 * Text that came from outside (installation names, evidence from scanned sites, collector
 * errors, incident text): rendered as a text node, in a bidi isolate so a right-to-left
 * override cannot reorder what follows, with invisible controls shown as code points.
 */
export function Ext(props: { text: string | null | undefined; class?: string }) {
  return <bdi class={props.class}>{visible(props.text ?? "")}</bdi>;
}

// ---- times ----

/** An instant in the browser's zone, `2026-11-25 14:20 CET`; a calendar date `YYYY-MM-DD` as it is (time.ts). */
export function isoShort(iso: string): string {
  return localTime(iso);
}

/**
 * A time as a `<time>` element: the ISO value machine-readable, the text in the browser's
 * zone, and the exact UTC time in its title (what logs and the API say). A calendar date is
 * shown as it is, without a title.
 */
export function Time(props: { iso: string | null | undefined; empty?: string }) {
  if (!props.iso) return <span class="muted">{props.empty ?? "never"}</span>;
  return (
    <time dateTime={props.iso} title={utcTime(props.iso) ?? undefined}>
      {localTime(props.iso)}
    </time>
  );
}

/**
 * Today as the service counts days, in UTC: a due date is overdue once its UTC day has
 * ended and refused before the UTC today (`due_in_past`), and the ends the dashboard sends
 * for a date (a key's hard end, a token's end, a risk acceptance) are `<day>T23:59:59Z`. So
 * a date field's earliest day is this one, whatever the browser's zone.
 */
export function today(): string {
  return utcToday();
}

// ---- status badges ----

const TONE: Record<string, string> = {
  active: "good",
  approved: "good",
  operational: "good",
  pass: "good",
  done: "good",
  delivered: "good",
  verified: "good",
  resolved: "good",
  ok: "good",
  pending: "warn",
  suspended: "warn",
  warn: "warn",
  in_progress: "warn",
  degraded: "warn",
  monitoring: "warn",
  identified: "warn",
  expired: "warn",
  revoked: "bad",
  blocked: "bad",
  fail: "bad",
  failed: "bad",
  open: "bad",
  outage: "bad",
  investigating: "bad",
  overdue: "bad",
  dead: "bad",
};

export function Badge(props: { value: string; label?: string }) {
  return <span class={`badge ${TONE[props.value] ?? "plain"}`}>{visible(props.label ?? props.value.replace(/_/g, " "))}</span>;
}

export function Grade(props: { grade: string | null | undefined }) {
  const grade = props.grade ?? "–";
  const tone = /^A/.test(grade) ? "good" : /^[BC]/.test(grade) ? "warn" : /^[DEF]/.test(grade) ? "bad" : "plain";
  return <span class={`grade ${tone}`}>{visible(grade)}</span>;
}

// ---- copying ----

async function copyText(text: string, fallback: HTMLInputElement | HTMLTextAreaElement | null): Promise<boolean> {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    if (!fallback) return false;
    fallback.focus();
    fallback.select();
    return document.execCommand("copy");
  }
}

/** A value to copy: read-only field (selectable by hand too) and a Copy button that says so. */
export function CopyField(props: { label: string; value: string; multiline?: boolean; wrap?: boolean; hint?: string; secret?: boolean }) {
  const id = useId();
  const field = useRef<HTMLInputElement & HTMLTextAreaElement>(null);
  const [said, setSaid] = useState("");
  const copy = async () => setSaid((await copyText(props.value, field.current)) ? "Copied." : "Select the text and copy it by hand.");
  const select = (event: Event) => (event.currentTarget as HTMLInputElement).select();
  return (
    <div class="copy">
      <label for={id}>{props.label}</label>
      {props.hint ? <p class="hint">{props.hint}</p> : null}
      <div class="copy-row">
        {props.multiline ? (
          <textarea
            id={id}
            ref={field}
            readOnly
            rows={props.wrap ? 5 : Math.min(12, props.value.split("\n").length + 1)}
            value={props.value}
            onFocus={select}
            spellcheck={false}
            class={props.wrap ? "wrap" : undefined}
          />
        ) : (
          <input
            id={id}
            ref={field}
            readOnly
            value={props.value}
            onFocus={select}
            spellcheck={false}
            autocomplete="off"
            class={props.secret ? "secret" : undefined}
          />
        )}
        <button type="button" onClick={() => void copy()}>
          Copy
        </button>
      </div>
      <p class="said" role="status">
        {said}
      </p>
    </div>
  );
}

// ---- confirmations ----

/**
 * A button that asks first, in a modal <dialog> (focus moves into it, Escape cancels,
 * focus returns to the button). `children` may hold fields (a grace period, a note).
 */
export function Confirm(props: {
  label: string;
  title: string;
  confirm: string;
  danger?: boolean;
  disabled?: boolean;
  children?: ComponentChildren;
  onConfirm: () => Promise<void> | void;
}) {
  const dialog = useRef<HTMLDialogElement>(null);
  const [busy, setBusy] = useState(false);
  const titleId = useId();
  const open = () => dialog.current?.showModal();
  const close = () => dialog.current?.close();
  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    try {
      await props.onConfirm();
    } finally {
      setBusy(false);
      close();
    }
  };
  return (
    <>
      <button type="button" class={props.danger ? "danger" : undefined} onClick={open} disabled={props.disabled}>
        {props.label}
      </button>
      <dialog ref={dialog} aria-labelledby={titleId}>
        <form method="dialog" onSubmit={(e) => void submit(e)}>
          <h2 id={titleId}>{visible(props.title)}</h2>
          {props.children}
          <div class="actions">
            <button type="button" onClick={close} autofocus>
              Cancel
            </button>
            <button type="submit" class={props.danger ? "danger" : "primary"} disabled={busy}>
              {props.confirm}
            </button>
          </div>
        </form>
      </dialog>
    </>
  );
}

// ---- forms ----

/** A labelled field: the hint and the error are tied to the control by aria-describedby. */
export function Field(props: {
  label: string;
  hint?: string;
  error?: string | null;
  children: (attrs: { id: string; "aria-describedby"?: string; "aria-invalid"?: boolean }) => ComponentChildren;
  class?: string;
}) {
  const id = useId();
  const described = [props.hint ? `${id}-hint` : "", props.error ? `${id}-error` : ""].filter(Boolean).join(" ");
  return (
    <div class={`field ${props.class ?? ""}`}>
      <label for={id}>{props.label}</label>
      {props.children({ id, "aria-describedby": described || undefined, "aria-invalid": props.error ? true : undefined })}
      {props.hint ? (
        <p class="hint" id={`${id}-hint`}>
          {props.hint}
        </p>
      ) : null}
      {props.error ? (
        <p class="error" id={`${id}-error`}>
          {props.error}
        </p>
      ) : null}
    </div>
  );
}

/** The outcome of an action, said politely to screen readers: done, or the refusal. */
export function Outcome(props: { outcome: { done: string } | { refusal: Refusal } | null }) {
  const { outcome } = props;
  return (
    <div class="outcome" aria-live="polite">
      {outcome === null ? null : "done" in outcome ? <p class="done">{outcome.done}</p> : <RefusalBox refusal={outcome.refusal} />}
    </div>
  );
}

export type OutcomeState = { done: string } | { refusal: Refusal } | null;

/** Runs an API call and keeps its outcome for <Outcome>; returns the answer. */
export function useAction(): [
  OutcomeState,
  <T>(call: Promise<Answer<T>>, done: string | ((data: T) => string)) => Promise<Answer<T>>,
  (o: OutcomeState) => void,
] {
  const [outcome, setOutcome] = useState<OutcomeState>(null);
  const run = useCallback(async <T,>(call: Promise<Answer<T>>, done: string | ((data: T) => string)) => {
    setOutcome(null);
    const answer = await call;
    setOutcome(answer.ok ? { done: typeof done === "string" ? done : done(answer.data) } : { refusal: answer });
    return answer;
  }, []);
  return [outcome, run, setOutcome];
}

// ---- lists ----

export function Pager(props: { page: number; hasMore: boolean; total?: number; limit?: number; href: (page: number) => string }) {
  const { page, hasMore, total, limit } = props;
  const pages = total !== undefined && limit ? Math.max(1, Math.ceil(total / limit)) : null;
  if (page <= 1 && !hasMore) return total !== undefined ? <p class="pager muted">{total === 1 ? "1 entry" : `${total} entries`}</p> : null;
  return (
    <nav class="pager" aria-label="Pages">
      {page > 1 ? (
        <Link href={props.href(page - 1)} rel="prev">
          ← Newer
        </Link>
      ) : (
        <span class="muted">← Newer</span>
      )}
      <span>
        Page {page}
        {pages ? ` of ${pages}` : ""}
        {total !== undefined ? ` (${total} entries)` : ""}
      </span>
      {hasMore ? (
        <Link href={props.href(page + 1)} rel="next">
          Older →
        </Link>
      ) : (
        <span class="muted">Older →</span>
      )}
    </nav>
  );
}

export function Tabs(props: { label: string; tabs: { id: string; label: string; href: string }[]; current: string }) {
  return (
    <nav class="tabs" aria-label={props.label}>
      {props.tabs.map((tab) => (
        <Link key={tab.id} href={tab.href} current={tab.id === props.current}>
          {tab.label}
        </Link>
      ))}
    </nav>
  );
}

/**
 * A page's heading, which names the document too. After a change of page inside the app it
 * takes focus, so screen readers announce the new page and Tab goes on from there; on a
 * fresh load focus stays at the top, where the skip link is.
 */
export function PageTitle(props: { children: ComponentChildren; sub?: ComponentChildren }) {
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    document.title = `${heading.current?.textContent ?? "Dashboard"} · Access gateway`;
    if (!navigatedInApp()) return;
    if (document.activeElement === document.body || document.activeElement?.closest("nav, .tabs"))
      heading.current?.focus({ preventScroll: true });
  });
  return (
    <header class="page-title">
      <h1 ref={heading} tabIndex={-1}>
        {props.children}
      </h1>
      {props.sub ? <p class="sub">{props.sub}</p> : null}
    </header>
  );
}

export function Section(props: { title: string; children: ComponentChildren; actions?: ComponentChildren; id?: string; level?: 2 | 3 }) {
  const id = useId();
  const Heading = props.level === 3 ? "h3" : "h2";
  return (
    <section class="card" aria-labelledby={id} id={props.id}>
      <div class="card-head">
        <Heading id={id} class="card-title">
          {visible(props.title)}
        </Heading>
        {props.actions ? <div class="card-actions">{props.actions}</div> : null}
      </div>
      {props.children}
    </section>
  );
}

export function Table(props: { caption: string; head: string[]; children: ComponentChildren; class?: string }) {
  return (
    // biome-ignore lint/a11y/useSemanticElements: a scrollable region must be reachable by keyboard (axe scrollable-region-focusable)
    // biome-ignore lint/a11y/noNoninteractiveTabindex: the same region, focusable so it can be scrolled by keyboard
    <div class="table-wrap" role="region" aria-label={props.caption} tabIndex={0}>
      <table class={props.class}>
        <caption class="visually-hidden">{props.caption}</caption>
        <thead>
          <tr>
            {props.head.map((h) => (
              <th key={h} scope="col">
                {h}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>{props.children}</tbody>
      </table>
    </div>
  );
}

export type InputEvent = JSX.TargetedEvent<HTMLInputElement | HTMLTextAreaElement | HTMLSelectElement, Event>;

export function valueOf(event: InputEvent): string {
  return event.currentTarget.value;
}

export function plural(n: number, one: string, many = `${one}s`): string {
  return `${n.toLocaleString("en")} ${n === 1 ? one : many}`;
}
