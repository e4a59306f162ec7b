import { browserSupportsWebAuthn, startAuthentication, startRegistration } from "@simplewebauthn/browser";
import { call, messageOf, useCsrfToken, type Answer } from "./api.js";
import { localTime, utcTime } from "../../../dashboard/src/time.js";
import { orgLabel, visible } from "../../platform/visible.js";

/**
 * The script of the sign-in and invitation pages (ingress/dashboard/pages.ts renders their
 * HTML in the dashboard's markup and style sheet; this fills it in). Plain DOM, textContent
 * only, no inline script or style: the pages run under `script-src 'self'; style-src 'self'`,
 * so every look is a class of dashboard/src/style.css. `body[data-state]` says where the page
 * is (loading, link, signed-out, signed-in, invited, invalid), for the browser tests.
 */

const $ = <T extends HTMLElement = HTMLElement>(id: string) => document.getElementById(id) as T;

function setState(state: string): void {
  document.body.setAttribute("data-state", state);
}

/**
 * How #status shows what it says, as the dashboard shows the same things: `done` (a change
 * made), `refusal` (a refusal or a failed ceremony), `loading` (waiting for the server).
 */
type Tone = "done" | "refusal" | "loading";

function say(text: string, tone: Tone): void {
  const status = $("status");
  status.textContent = text;
  status.className = text === "" ? "" : tone;
}

/** The token in the URL fragment (`#link=...`, `#token=...`): never sent to a server by the browser. */
function fragmentToken(name: string): string | null {
  const value = new URLSearchParams(location.hash.slice(1)).get(name);
  return value && /^[A-Za-z0-9_-]{43}$/.test(value) ? value : null;
}

/** Drops the fragment from the address bar and history once the link is spent or refused. */
function forgetFragment(): void {
  history.replaceState(null, "", location.pathname + location.search);
}

/** A WebAuthn ceremony the member cancelled or the browser refused: said, never thrown further. */
async function ceremony<T>(run: () => Promise<T>): Promise<T | null> {
  try {
    return await run();
  } catch (error) {
    const name = error instanceof Error ? error.name : "";
    say(
      name === "NotAllowedError"
        ? "The passkey request was cancelled or timed out."
        : `The browser refused the passkey request (${name || "error"}).`,
      "refusal",
    );
    return null;
  }
}

/** A row of the passkeys' or sessions' list: `lead` (bold when `strong`), the rest, and its button. */
function item(
  lead: { text: string; strong?: boolean },
  rest: (string | Node)[],
  action: { label: string; run: () => void } | null,
): HTMLLIElement {
  const li = document.createElement("li");
  if (lead.strong) {
    const strong = document.createElement("strong");
    strong.textContent = lead.text;
    li.append(strong);
  } else li.append(lead.text);
  li.append(...rest);
  if (action) {
    const button = document.createElement("button");
    button.type = "button";
    button.textContent = action.label;
    button.addEventListener("click", action.run);
    li.append(" ", button);
  }
  return li;
}

/**
 * Where a member goes once signed in: the dashboard, or the dashboard address the SPA sent
 * them from (`?next=/dashboard/...`). The SPA resumes the session there through
 * GET /admin/v1/auth/session. Only a path of this origin under /dashboard, never these pages.
 */
function nextAddress(): string {
  const next = new URLSearchParams(location.search).get("next") ?? "";
  return /^\/dashboard(\/|$|\?)/.test(next) && !/^\/dashboard\/(signin|invitation)\b/.test(next) ? next : "/dashboard";
}

function toDashboard(): void {
  location.assign(nextAddress());
}

/**
 * A time as the dashboard shows it (dashboard/src/time.ts): a `<time>` in the browser's zone,
 * `2026-05-04 11:30 CEST`, with the exact UTC time in its title; "never" without one.
 */
function when(iso: unknown): Node {
  if (typeof iso !== "string" || Number.isNaN(Date.parse(iso))) return document.createTextNode("never");
  const time = document.createElement("time");
  time.dateTime = iso;
  time.title = utcTime(iso) ?? "";
  time.textContent = localTime(iso);
  return time;
}

interface Who {
  member: { name: string; email: string; role: string };
  org: { id: number; name: string };
  passkeys: number;
}

/**
 * Whose account a card names: `Ann (ann@example.com), owner of Acme (organization 12)`. The
 * organization's id is what tells it from another of the same name (anyone can make one and
 * add any address to it), and names come as their maker wrote them: controls and the
 * characters that reorder text are shown as code points, so none can disguise what follows.
 */
function accountOf(who: Who): string {
  return `${visible(who.member.name)} (${visible(who.member.email)}), ${who.member.role} of ${orgLabel(who.org.name, who.org.id)}`;
}

async function refreshLists(): Promise<void> {
  const [sessions, passkeys] = await Promise.all([call("GET", "/sessions"), call("GET", "/passkeys")]);
  if (!sessions.ok || !passkeys.ok) return signedOut(messageOf(sessions.ok ? passkeys : sessions), "refusal");
  const sessionList = $("sessions");
  sessionList.replaceChildren(
    ...(sessions.sessions as Record<string, unknown>[]).map((s) =>
      item(
        { text: s.current ? "This session" : String(s.user_agent || "A browser"), strong: s.current === true },
        [": signed in ", when(s.created_at), ` by ${String(s.method)}, last seen `, when(s.last_seen_at)],
        s.current ? null : { label: "Revoke", run: () => void revoke(`/sessions/${String(s.id)}`, "Session revoked.") },
      ),
    ),
  );
  const list = passkeys.passkeys as Record<string, unknown>[];
  $("passkeys").replaceChildren(
    ...list.map((p) =>
      item(
        { text: String(p.name) },
        [": added ", when(p.created_at), ", last used ", when(p.last_used_at)],
        list.length > 1 ? { label: "Remove", run: () => void revoke(`/passkeys/${String(p.id)}`, "Passkey removed.") } : null,
      ),
    ),
  );
  $("no-passkey").hidden = list.length > 0;
}

async function revoke(path: string, done: string): Promise<void> {
  const answer = await call("DELETE", path);
  say(answer.ok ? done : messageOf(answer), answer.ok ? "done" : "refusal");
  await refreshLists();
}

async function signedIn(who: Who, message: string): Promise<void> {
  useCsrfToken((who as unknown as Answer).csrf_token);
  $("signed-out").hidden = true;
  $("signed-in").hidden = false;
  $("who").textContent = accountOf(who);
  say(message, "done");
  await refreshLists();
  setState("signed-in");
  $("who").focus();
}

function signedOut(message: string, tone: Tone): void {
  useCsrfToken("");
  $("signed-in").hidden = true;
  $("signed-out").hidden = false;
  say(message, tone);
  setState("signed-out");
}

async function signInWithPasskey(): Promise<void> {
  const options = await call("POST", "/signin/options");
  if (!options.ok) return say(messageOf(options), "refusal");
  const response = await ceremony(() =>
    startAuthentication({ optionsJSON: options.options as Parameters<typeof startAuthentication>[0]["optionsJSON"] }),
  );
  if (!response) return;
  const answer = await call("POST", "/signin/verify", { response });
  if (!answer.ok) return say(messageOf(answer), "refusal");
  say("Signed in.", "done");
  toDashboard();
}

async function addPasskey(): Promise<void> {
  const options = await call("POST", "/passkeys/options");
  if (!options.ok) return say(messageOf(options), "refusal");
  const response = await ceremony(() =>
    startRegistration({ optionsJSON: options.options as Parameters<typeof startRegistration>[0]["optionsJSON"] }),
  );
  if (!response) return;
  const answer = await call("POST", "/passkeys/verify", { response });
  say(answer.ok ? "Passkey added." : messageOf(answer), answer.ok ? "done" : "refusal");
  await refreshLists();
}

async function requestLink(event: Event): Promise<void> {
  event.preventDefault();
  const answer = await call("POST", "/signin/link", { email: $<HTMLInputElement>("email").value });
  say(
    answer.ok ? "If this address belongs to a member, a sign-in link is on its way. It works once, within 15 minutes." : messageOf(answer),
    answer.ok ? "done" : "refusal",
  );
}

/** The link whose account the page shows ("Sign in" spends this one), and which reading is the latest. */
let shownLink: string | null = null;
let linkReading = 0;

/**
 * A link in the fragment: shows whose account it signs in to, and spends it only when the
 * member presses "Sign in" (a page elsewhere may send its visitor to a link of its own
 * account: docs/accounts-members.md). Only the latest reading is shown: two links opened in
 * quick succession cannot leave one account on the page and the other's link to spend.
 * False when there is no link.
 */
async function offerLink(): Promise<boolean> {
  const link = fragmentToken("link");
  if (!link) return false;
  const reading = ++linkReading;
  shownLink = null;
  setState("loading");
  $("link-account").hidden = true;
  say("Reading your sign-in link…", "loading");
  const account = await call("POST", "/signin/link/peek", { token: link });
  if (reading !== linkReading) return true;
  if (!account.ok) {
    forgetFragment();
    await showSession(messageOf(account), "refusal");
    return true;
  }
  const who = account as unknown as Who;
  $("signed-out").hidden = true;
  $("signed-in").hidden = true;
  $("link-account-text").textContent = accountOf(who);
  $("link-account").hidden = false;
  $<HTMLButtonElement>("link-signin").disabled = false;
  shownLink = link;
  say("", "done");
  setState("link");
  $("link-account-title").focus();
  return true;
}

/** Spends the link the page shows, once. */
async function consumeLink(): Promise<void> {
  const link = shownLink;
  if (!link) return;
  shownLink = null;
  $<HTMLButtonElement>("link-signin").disabled = true;
  say("Signing in with your link…", "loading");
  const answer = await call("POST", "/signin/link/consume", { token: link });
  forgetFragment();
  $("link-account").hidden = true;
  if (answer.ok) {
    say("Signed in with your link.", "done");
    toDashboard();
  } else signedOut(messageOf(answer), "refusal");
}

/** The page as the session stands: the member's lists, or the ways to sign in. */
async function showSession(message: string, tone: Tone): Promise<void> {
  $("link-account").hidden = true;
  if (message === "") say("Checking your sign-in…", "loading");
  const current = await call("GET", "/session");
  if (current.ok) return signedIn(current as unknown as Who, message);
  signedOut(message !== "" ? message : current.status === 401 && current.reason !== "session_expired" ? "" : messageOf(current), tone);
}

async function signinPage(): Promise<void> {
  $("passkey-signin").addEventListener("click", () => void signInWithPasskey());
  $("link-form").addEventListener("submit", (event) => void requestLink(event));
  $("add-passkey").addEventListener("click", () => void addPasskey());
  $("signout").addEventListener("click", async () => {
    const answer = await call("POST", "/signout");
    if (answer.ok) signedOut("Signed out.", "done");
    else say(messageOf(answer), "refusal");
  });
  $("link-signin").addEventListener("click", () => void consumeLink());
  $("link-not-mine").addEventListener("click", () => {
    shownLink = null;
    linkReading++;
    forgetFragment();
    void showSession("", "refusal");
  });
  $("passkey-signin").hidden = !browserSupportsWebAuthn();
  // A link opened in a tab already on this page changes only the fragment: no new load.
  window.addEventListener("hashchange", () => void offerLink());
  if (await offerLink()) return;
  await showSession("", "refusal");
}

async function invitationPage(): Promise<void> {
  const token = fragmentToken("token");
  if (!token) {
    say("This invitation link is incomplete. Open it again from your e-mail, or ask for a sign-in link.", "refusal");
    $("fallback").hidden = false;
    return setState("invalid");
  }
  say("Reading your invitation…", "loading");
  const invited = await call("POST", "/invitation/accept/options", { token });
  if (!invited.ok) {
    forgetFragment();
    say(messageOf(invited), "refusal");
    $("fallback").hidden = false;
    return setState("invalid");
  }
  const who = invited as unknown as Who & { expires_at: string };
  $("invite-text").textContent =
    `${visible(who.member.name)} (${visible(who.member.email)}): you are invited to ${orgLabel(who.org.name, who.org.id)} as ${who.member.role}. Create a passkey to sign in.`;
  say("", "done");
  $("invited").hidden = false;
  setState("invited");
  $("create-passkey").addEventListener("click", async () => {
    // Fresh options for each try: a challenge lives five minutes and is spent by every verify.
    const options = await call("POST", "/invitation/accept/options", { token });
    if (!options.ok) return say(messageOf(options), "refusal");
    const response = await ceremony(() =>
      startRegistration({ optionsJSON: options.options as Parameters<typeof startRegistration>[0]["optionsJSON"] }),
    );
    if (!response) return;
    const name = $<HTMLInputElement>("passkey-name").value.trim();
    const answer = await call("POST", "/invitation/accept/verify", { token, response, ...(name ? { name } : {}) });
    if (!answer.ok) return say(messageOf(answer), "refusal");
    forgetFragment();
    // The verify answer opened the session: straight on to the dashboard.
    say("Passkey created. Signed in.", "done");
    toDashboard();
  });
}

const page = document.body.getAttribute("data-page");
void (page === "invitation" ? invitationPage() : signinPage());
