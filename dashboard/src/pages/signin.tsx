import { useState } from "preact/hooks";
import { signInWithToken, type Principal } from "../auth.js";
import type { Refusal } from "../http.js";
import { Field, RefusalBox, type InputEvent, valueOf } from "../ui.js";

/**
 * The dashboard's own way in, at /dashboard/token (docs/dashboard.md "Getting in"): a pasted
 * token (the operator's ADMIN_TOKEN, or an organization token). Members sign in on the
 * pages /dashboard/signin and /dashboard/invitation (ingress/dashboard/pages.ts: passkey,
 * e-mailed link, invitation with passkey registration), which send them back here with the
 * session cookie; auth.ts resumes it through GET /admin/v1/auth/session. Those pages repeat
 * this page's Frame (the .signin card, its brand and sections) in their own HTML, with this
 * style sheet: a change to one is a change to the other.
 */

/** The members' sign-in page, carrying the dashboard address to come back to. */
function memberSignin(next: string | null): string {
  return `/dashboard/signin${next ? `?next=${encodeURIComponent(next)}` : ""}`;
}

function Frame(props: { title: string; children: preact.ComponentChildren }) {
  return (
    <div class="signin">
      <main id="main" class="signin-card">
        <p class="brand">Access gateway</p>
        <h1>{props.title}</h1>
        {props.children}
      </main>
    </div>
  );
}

export function SignInPage(props: { onSignedIn: (principal: Principal, message?: string) => void }) {
  const [token, setToken] = useState("");
  const [refusal, setRefusal] = useState<Refusal | null>(null);
  const [busy, setBusy] = useState(false);
  const next = new URLSearchParams(location.search).get("next");

  const withToken = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setRefusal(null);
    const answer = await signInWithToken(token);
    setBusy(false);
    if (answer.ok) props.onSignedIn(answer.data.principal);
    else setRefusal(answer);
  };

  return (
    <Frame title="Sign in">
      <div aria-live="polite">{refusal ? <RefusalBox refusal={refusal} /> : null}</div>
      <section aria-labelledby="with-passkey">
        <h2 id="with-passkey">Members</h2>
        <p>
          <a class="button-link" href={memberSignin(next)}>
            Sign in with a passkey or an e-mailed link
          </a>
        </p>
        <p class="hint">An invitation e-mail opens the page that creates your first passkey.</p>
      </section>
      <section aria-labelledby="with-token">
        <h2 id="with-token">Operator or API token</h2>
        <form onSubmit={(e) => void withToken(e)} class="stack">
          <Field
            label="Token"
            hint="The operator pastes the ADMIN_TOKEN; an organization token (gwt_…) works too. It is kept in this tab only and forgotten when the tab closes."
          >
            {(a) => (
              <input
                {...a}
                type="password"
                autocomplete="off"
                spellcheck={false}
                required
                value={token}
                onInput={(e: InputEvent) => setToken(valueOf(e))}
              />
            )}
          </Field>
          <p>
            <button type="submit" class="primary" disabled={busy}>
              {busy ? "Checking…" : "Sign in with the token"}
            </button>
          </p>
        </form>
      </section>
    </Frame>
  );
}
