import { useEffect, useState } from "preact/hooks";
import {
  acceptInvitation, passkeysSupported, readInvitation, requestSigninLink, signInWithLink, signInWithPasskey, signInWithToken, type Invitation,
  type Principal,
} from "../auth.js";
import type { Refusal } from "../http.js";
import { Ext, Field, Loading, RefusalBox, type InputEvent, valueOf } from "../ui.js";

/**
 * The way in (docs/dashboard.md "Getting in"): a member's passkey or e-mailed link, or a
 * pasted token (the operator's ADMIN_TOKEN, or an organization token). The invitation
 * page registers a new member's first passkey.
 */

function fragmentValue(name: string): string | null {
  const value = new URLSearchParams(location.hash.slice(1)).get(name);
  return value && /^[A-Za-z0-9_-]{20,200}$/.test(value) ? value : null;
}

function forgetFragment(): void {
  history.replaceState(null, "", location.pathname + location.search);
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
  const [email, setEmail] = useState("");
  const [refusal, setRefusal] = useState<Refusal | null>(null);
  const [said, setSaid] = useState("");
  const [busy, setBusy] = useState<"" | "token" | "passkey" | "link" | "consume">(fragmentValue("link") ? "consume" : "");

  useEffect(() => {
    const link = fragmentValue("link");
    if (!link) return;
    void signInWithLink(link).then((answer) => {
      forgetFragment();
      setBusy("");
      if (answer.ok) props.onSignedIn(answer.data.principal, answer.data.passkeys === 0 ? "Signed in. Add a passkey on the Team page to sign in without e-mail next time." : undefined);
      else setRefusal(answer);
    });
  }, []);

  const withToken = async (event: Event) => {
    event.preventDefault();
    setBusy("token");
    setRefusal(null);
    const answer = await signInWithToken(token);
    setBusy("");
    if (answer.ok) props.onSignedIn(answer.data.principal);
    else setRefusal(answer);
  };
  const withPasskey = async () => {
    setBusy("passkey");
    setRefusal(null);
    const answer = await signInWithPasskey();
    setBusy("");
    if (answer.ok) props.onSignedIn(answer.data.principal);
    else setRefusal(answer);
  };
  const askLink = async (event: Event) => {
    event.preventDefault();
    setBusy("link");
    setRefusal(null);
    const answer = await requestSigninLink(email);
    setBusy("");
    if (answer.ok) setSaid("If this address belongs to a member, a sign-in link is on its way. It works once, within 15 minutes.");
    else setRefusal(answer);
  };

  if (busy === "consume") {
    return (
      <Frame title="Signing you in">
        <Loading label="Checking your sign-in link…" />
      </Frame>
    );
  }
  return (
    <Frame title="Sign in">
      <div aria-live="polite">
        {refusal ? <RefusalBox refusal={refusal} /> : null}
        {said ? <p class="done">{said}</p> : null}
      </div>
      <section aria-labelledby="with-passkey">
        <h2 id="with-passkey">Members</h2>
        {passkeysSupported() ? (
          <p>
            <button type="button" class="primary wide" onClick={() => void withPasskey()} disabled={busy !== ""}>
              {busy === "passkey" ? "Waiting for your passkey…" : "Sign in with a passkey"}
            </button>
          </p>
        ) : (
          <p class="hint">This browser cannot use passkeys: ask for a sign-in link below.</p>
        )}
        <form onSubmit={(e) => void askLink(e)} class="stack">
          <Field label="E-mail address" hint="Lost your passkey, or your invitation expired? We e-mail you a link that signs you in once.">
            {(a) => <input {...a} type="email" autocomplete="email" required value={email} onInput={(e: InputEvent) => setEmail(valueOf(e))} />}
          </Field>
          <p>
            <button type="submit" disabled={busy !== ""}>
              E-mail me a sign-in link
            </button>
          </p>
        </form>
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
            <button type="submit" class="primary" disabled={busy !== ""}>
              {busy === "token" ? "Checking…" : "Sign in with the token"}
            </button>
          </p>
        </form>
      </section>
    </Frame>
  );
}

export function InvitationPage(props: { onDone: () => void }) {
  const [token] = useState(() => fragmentValue("token"));
  const [invitation, setInvitation] = useState<Invitation | null>(null);
  const [refusal, setRefusal] = useState<Refusal | null>(null);
  const [name, setName] = useState("");
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    if (!token) return;
    void readInvitation(token).then((answer) => {
      if (answer.ok) setInvitation(answer.data);
      else {
        forgetFragment();
        setRefusal(answer);
      }
    });
  }, []);
  const accept = async (event: Event) => {
    event.preventDefault();
    if (!token) return;
    setBusy(true);
    const answer = await acceptInvitation(token, name);
    setBusy(false);
    if (!answer.ok) return setRefusal(answer);
    forgetFragment();
    props.onDone();
  };
  if (!token) {
    return (
      <Frame title="Accept your invitation">
        <p>This invitation link is incomplete. Open it again from your e-mail, or ask for a sign-in link.</p>
        <p>
          <a href="/dashboard/signin">Go to the sign-in page</a>
        </p>
      </Frame>
    );
  }
  return (
    <Frame title="Accept your invitation">
      <div aria-live="polite">{refusal ? <RefusalBox refusal={refusal} /> : null}</div>
      {invitation === null && refusal === null ? <Loading label="Reading your invitation…" /> : null}
      {invitation ? (
        <form onSubmit={(e) => void accept(e)} class="stack">
          <p>
            <Ext text={invitation.member.name} /> (<Ext text={invitation.member.email} />): you are invited to <Ext text={invitation.org.name} /> as{" "}
            {invitation.member.role}. Create a passkey to sign in.
          </p>
          <Field label="Name of this passkey (optional)" hint="Say which device it is on, to tell your passkeys apart later.">
            {(a) => <input {...a} type="text" maxLength={100} autocomplete="off" value={name} onInput={(e: InputEvent) => setName(valueOf(e))} />}
          </Field>
          <p>
            <button type="submit" class="primary" disabled={busy || !passkeysSupported()}>
              {busy ? "Waiting for your passkey…" : "Create a passkey and sign in"}
            </button>
          </p>
        </form>
      ) : null}
    </Frame>
  );
}
