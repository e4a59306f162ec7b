import { useState } from "preact/hooks";
import { api, type KeyDetails } from "../api.js";
import { may } from "../auth.js";
import { Field, Outcome, Section, today, useAction, valueOf, type InputEvent } from "../ui.js";
import {
  cidrProblem,
  countryProblem,
  domainProblem,
  fieldOfRefusal,
  firstProblem,
  listOf,
  rateProblem,
  scopeProblem,
  urlProblem,
} from "../validate.js";

/**
 * Every setting of a key (operator-api.md "Keys"), as a form: each rule is checked here
 * and said next to its field; a refusal of the server is put next to the field it names.
 * Only the fields that changed are sent (PATCH), so the activity record names them.
 */

interface Draft {
  name: string;
  domain: string;
  environment: string;
  industry: string;
  scopes: string;
  ip_allow: string;
  ip_deny: string;
  ip_binding: boolean;
  countries_allow: string;
  countries_block: string;
  rate_per_minute: string;
  is_trial: boolean;
  expires_at: string;
  content_origin: string;
  firewall: string;
  bc_enabled: boolean;
  bc_hold_ms: string;
  bc_desktop: boolean;
  bc_tablet: boolean;
  bc_mobile: boolean;
  bc_blocked_url: string;
}

function draftOf(d: KeyDetails): Draft {
  return {
    name: d.name,
    domain: d.domain,
    environment: d.environment,
    industry: d.industry,
    scopes: d.scopes.join(", "),
    ip_allow: d.ip_allow.join("\n"),
    ip_deny: d.ip_deny.join("\n"),
    ip_binding: d.ip_binding,
    countries_allow: d.countries_allow.join(", "),
    countries_block: d.countries_block.join(", "),
    rate_per_minute: String(d.rate_per_minute),
    is_trial: d.is_trial,
    expires_at: (d.hard_expires_at ?? "").slice(0, 10),
    content_origin: d.content_origin ?? "",
    firewall: d.firewall ? JSON.stringify(d.firewall, null, 2) : "",
    bc_enabled: d.botcheck.enabled,
    bc_hold_ms: String(d.botcheck.hold_ms),
    bc_desktop: d.botcheck.allow_desktop,
    bc_tablet: d.botcheck.allow_tablet,
    bc_mobile: d.botcheck.allow_mobile,
    bc_blocked_url: d.botcheck.blocked_url ?? "",
  };
}

type Problems = Partial<Record<string, string>>;

function check(draft: Draft, kind: "client" | "server"): Problems {
  const p: Problems = {};
  if (draft.name.trim() === "") p.name = "Give the key a name.";
  if (kind === "client" && draft.domain.trim() === "") p.domain = "A client key is locked to a domain.";
  else if (draft.domain.trim() !== "") p.domain = domainProblem(draft.domain) ?? undefined;
  p.scopes = firstProblem(listOf(draft.scopes), scopeProblem) ?? undefined;
  p.ip_allow = firstProblem(listOf(draft.ip_allow), cidrProblem) ?? undefined;
  p.ip_deny = firstProblem(listOf(draft.ip_deny), cidrProblem) ?? undefined;
  p.countries_allow = firstProblem(listOf(draft.countries_allow.toUpperCase()), countryProblem) ?? undefined;
  p.countries_block = firstProblem(listOf(draft.countries_block.toUpperCase()), countryProblem) ?? undefined;
  p.rate_per_minute = rateProblem(draft.rate_per_minute) ?? undefined;
  if (draft.expires_at && Date.parse(`${draft.expires_at}T23:59:59Z`) <= Date.now()) p.expires_at = "The end must be in the future.";
  if (draft.content_origin.trim()) p.content_origin = urlProblem(draft.content_origin.trim()) ?? undefined;
  if (draft.bc_blocked_url.trim()) p.botcheck = urlProblem(draft.bc_blocked_url.trim()) ?? undefined;
  if (!/^\d{1,5}$/.test(draft.bc_hold_ms) || Number(draft.bc_hold_ms) > 60_000) p.botcheck = "The hold time is 0 to 60,000 ms.";
  if (draft.firewall.trim()) {
    try {
      const parsed: unknown = JSON.parse(draft.firewall);
      if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) p.firewall = "The rules are a JSON object.";
    } catch {
      p.firewall = "Not valid JSON.";
    }
  }
  for (const k of Object.keys(p)) if (p[k] === undefined) delete p[k];
  return p;
}

/** JSON with every object's keys in order: PostgreSQL's jsonb gives keys back in its own order. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>).sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

const same = (a: unknown, b: unknown) => canonical(a) === canonical(b);

/** The PATCH body: only what differs from the key as loaded. */
function patchOf(draft: Draft, d: KeyDetails): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const put = (field: string, value: unknown, before: unknown) => {
    if (!same(value, before)) out[field] = value;
  };
  put("name", draft.name.trim(), d.name);
  if (d.kind === "client" || draft.domain.trim() !== d.domain) put("domain", draft.domain.trim() || null, d.domain || null);
  put("environment", draft.environment, d.environment);
  put("industry", draft.industry.trim(), d.industry);
  put("scopes", listOf(draft.scopes), d.scopes);
  put("ip_allow", listOf(draft.ip_allow), d.ip_allow);
  put("ip_deny", listOf(draft.ip_deny), d.ip_deny);
  put("ip_binding", draft.ip_binding, d.ip_binding);
  put("countries_allow", listOf(draft.countries_allow.toUpperCase()), d.countries_allow);
  put("countries_block", listOf(draft.countries_block.toUpperCase()), d.countries_block);
  put("rate_per_minute", Number(draft.rate_per_minute), d.rate_per_minute);
  put("is_trial", draft.is_trial, d.is_trial);
  const hard = draft.expires_at ? `${draft.expires_at}T23:59:59Z` : null;
  if ((hard ?? "").slice(0, 10) !== (d.hard_expires_at ?? "").slice(0, 10)) out.expires_at = hard;
  put("content_origin", draft.content_origin.trim() || null, d.content_origin);
  put("firewall", draft.firewall.trim() ? (JSON.parse(draft.firewall) as unknown) : null, d.firewall);
  const botcheck = {
    enabled: draft.bc_enabled,
    hold_ms: Number(draft.bc_hold_ms),
    allow_desktop: draft.bc_desktop,
    allow_tablet: draft.bc_tablet,
    allow_mobile: draft.bc_mobile,
    blocked_url: draft.bc_blocked_url.trim() || null,
  };
  // Compared field by field with what the form edits: the key's botcheck carries more
  // (difficulty), which the server keeps when a PATCH leaves it out.
  const b = d.botcheck;
  const before = {
    enabled: b.enabled,
    hold_ms: b.hold_ms,
    allow_desktop: b.allow_desktop,
    allow_tablet: b.allow_tablet,
    allow_mobile: b.allow_mobile,
    blocked_url: b.blocked_url ?? null,
  };
  put("botcheck", botcheck, before);
  return out;
}

export function KeySettings(props: { details: KeyDetails; onSaved: (details: KeyDetails) => void }) {
  const { details } = props;
  const [draft, setDraft] = useState<Draft>(() => draftOf(details));
  const [problems, setProblems] = useState<Problems>({});
  const [outcome, run, setOutcome] = useAction();
  const editable = may("manage") && details.status !== "revoked";
  const set =
    <K extends keyof Draft>(field: K) =>
    (event: InputEvent) => {
      const target = event.currentTarget as HTMLInputElement;
      setDraft({ ...draft, [field]: target.type === "checkbox" ? target.checked : valueOf(event) });
    };
  const save = async (event: Event) => {
    event.preventDefault();
    const found = check(draft, details.kind);
    setProblems(found);
    if (Object.keys(found).length > 0) {
      setOutcome({
        refusal: {
          ok: false,
          status: 0,
          reason: "check_fields",
          message: `Fix the ${Object.keys(found).length === 1 ? "field" : "fields"} marked below.`,
        },
      });
      return;
    }
    const body = patchOf(draft, details);
    if (Object.keys(body).length === 0) {
      setOutcome({ done: "Nothing changed." });
      return;
    }
    const answer = await run(
      api.patchKey(details.id, body),
      `Saved (${Object.keys(body).join(", ")}): it applies from the very next verify.`,
    );
    if (answer.ok) {
      props.onSaved(answer.data.details);
      setDraft(draftOf(answer.data.details));
    } else {
      const field = fieldOfRefusal(answer.reason, answer.detail);
      if (field) setProblems({ [field]: `${answer.message}${answer.detail ? ` (${answer.detail})` : ""}` });
    }
  };
  const input = (field: keyof Draft, attrs: Record<string, unknown>, extra: Record<string, unknown> = {}) => (
    <input {...attrs} {...extra} value={draft[field] as string} onInput={set(field)} disabled={!editable} />
  );
  const box = (field: keyof Draft, label: string) => (
    <label class="check">
      <input type="checkbox" checked={draft[field] as boolean} onChange={set(field)} disabled={!editable} /> {label}
    </label>
  );
  return (
    <form onSubmit={(e) => void save(e)} noValidate class="settings">
      <Section title="Identity">
        <div class="grid-form">
          <Field label="Name" error={problems.name}>
            {(a) => input("name", a, { maxLength: 200 })}
          </Field>
          <Field
            label="Domain lock"
            error={problems.domain}
            hint={details.kind === "client" ? "Calls for other domains are refused domain_mismatch." : "Optional for server keys."}
          >
            {(a) => input("domain", a, { placeholder: "shop.example.com" })}
          </Field>
          <Field label="Environment">
            {(a) => (
              <select {...a} value={draft.environment} onChange={set("environment")} disabled={!editable}>
                <option>production</option>
                <option>staging</option>
                <option>development</option>
              </select>
            )}
          </Field>
          <Field label="Industry">{(a) => input("industry", a, { maxLength: 100 })}</Field>
        </div>
      </Section>
      <Section title="Who may call">
        <div class="grid-form">
          <Field label="Scopes" hint="Comma separated; empty means full access." error={problems.scopes}>
            {(a) => input("scopes", a, { placeholder: "read, write" })}
          </Field>
          <Field label="Calls per minute" error={problems.rate_per_minute} hint="The key's burst guard (rate_limited beyond it).">
            {(a) => input("rate_per_minute", a, { inputMode: "numeric" })}
          </Field>
          <Field label="Allowed addresses" hint="One address or CIDR block per line; empty allows every address." error={problems.ip_allow}>
            {(a) => (
              <textarea
                {...a}
                rows={3}
                value={draft.ip_allow}
                onInput={set("ip_allow")}
                disabled={!editable}
                spellcheck={false}
                placeholder="203.0.113.0/24"
              />
            )}
          </Field>
          <Field label="Denied addresses" hint="Deny always wins over allow." error={problems.ip_deny}>
            {(a) => (
              <textarea
                {...a}
                rows={3}
                value={draft.ip_deny}
                onInput={set("ip_deny")}
                disabled={!editable}
                spellcheck={false}
                placeholder="2001:db8::/32"
              />
            )}
          </Field>
          <Field
            label="Allowed countries"
            hint="ISO 3166-1 alpha-2 codes, comma separated; empty allows all."
            error={problems.countries_allow}
          >
            {(a) => input("countries_allow", a, { placeholder: "FR, DE" })}
          </Field>
          <Field label="Blocked countries" error={problems.countries_block}>
            {(a) => input("countries_block", a, { placeholder: "KP" })}
          </Field>
          <div class="field">{box("ip_binding", "IP binding: judge the connecting address even when the call sends ip")}</div>
        </div>
      </Section>
      <Section title="Lifetime and content">
        <div class="grid-form">
          <Field
            label="Hard end"
            hint="The key stops working when this day ends in UTC. Empty: the key follows the organization's window."
            error={problems.expires_at}
          >
            {(a) => input("expires_at", a, { type: "date", min: today() })}
          </Field>
          <Field
            label="Content page"
            hint="The page protected content is published on (origin_mismatch elsewhere)."
            error={problems.content_origin}
          >
            {(a) => input("content_origin", a, { type: "url", placeholder: "https://shop.example.com/pricing" })}
          </Field>
          <div class="field">{box("is_trial", "Trial key")}</div>
          <Field label="Firewall rules (JSON object)" hint="Returned to server calls as firewall." error={problems.firewall} class="wide">
            {(a) => (
              <textarea
                {...a}
                rows={4}
                value={draft.firewall}
                onInput={set("firewall")}
                disabled={!editable}
                spellcheck={false}
                class="mono"
              />
            )}
          </Field>
        </div>
      </Section>
      <Section title="Bot check">
        <div class="grid-form">
          <div class="field">{box("bc_enabled", "Bot check on")}</div>
          <Field label="Hold time (ms)" error={problems.botcheck}>
            {(a) => input("bc_hold_ms", a, { inputMode: "numeric" })}
          </Field>
          <fieldset class="field">
            <legend>Devices allowed</legend>
            {box("bc_desktop", "Desktop")}
            {box("bc_tablet", "Tablet")}
            {box("bc_mobile", "Mobile")}
          </fieldset>
          <Field label="Where to send a refused visitor">
            {(a) => input("bc_blocked_url", a, { type: "url", placeholder: "https://shop.example.com/blocked" })}
          </Field>
        </div>
      </Section>
      <Outcome outcome={outcome} />
      {editable ? (
        <div class="form-actions">
          <button type="submit" class="primary">
            Save the settings
          </button>
          <button
            type="button"
            onClick={() => {
              setDraft(draftOf(details));
              setProblems({});
              setOutcome(null);
            }}
          >
            Undo changes
          </button>
        </div>
      ) : (
        <p class="muted">
          {details.status === "revoked" ? "A revoked key cannot change." : "Your role may read these settings, not change them."}
        </p>
      )}
    </form>
  );
}
