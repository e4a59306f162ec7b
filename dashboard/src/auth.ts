import { startRegistration } from "@simplewebauthn/browser";
import { send, sentenceFor, type Answer, type Refusal } from "./http.js";

/**
 * Every piece of the dashboard's authentication, in this one module (docs/dashboard.md,
 * "Getting in"). Nothing else reads a credential or sets an auth header.
 *
 * Two ways to be signed in (operator-api.md section 5, "Principals"):
 *
 * - **bearer**: a token pasted on the sign-in page: the operator's `ADMIN_TOKEN` (this is
 *   how the operator signs in) or an organization token (`gwt_...`). It is kept in
 *   sessionStorage (this tab only; closing the tab forgets it) and sent as
 *   `Authorization: Bearer`. Cookies are not sent with it (`credentials: "omit"`), so the
 *   server always sees exactly one principal.
 * - **session**: a member who signed in with a passkey or an e-mailed link on the plain
 *   pages /dashboard/signin and /dashboard/invitation (ingress/dashboard/pages.ts): the
 *   HttpOnly session cookie (`credentials: "same-origin"`), resumed on load through
 *   `GET /auth/session`, and on every change the session's CSRF token (`csrfHeaders()`).
 *
 * And one credential that is not a sign-in: the **server key** the public security-data
 * endpoints take as `key` (scan.php, assignments.php, activity.php: interface.md 4.5,
 * 4.7-4.9). The scan, findings and activity pages ask for one, keep it in sessionStorage
 * beside the token, and send it in the body (in the query only where the contract reads
 * with GET).
 */

export const ADMIN_API = "/admin/v1";
const AUTH_API = `${ADMIN_API}/auth`;
const BEARER_SLOT = "gw.dashboard.bearer";
const DATA_KEY_SLOT = "gw.dashboard.server-key";

export type Role = "owner" | "admin" | "member";

/** `GET /admin/v1/me`'s principal (operator-api.md section 5). */
export interface Principal {
  kind: "operator" | "token" | "member";
  org?: { id: number; name: string };
  scopes?: string[];
  role?: Role;
  member?: { id: number; name: string; email: string };
  token?: { id: number; name: string };
}

export type Mode = "bearer" | "session";

interface State {
  mode: Mode | null;
  /** The session's CSRF token (session mode), from the sign-in answer or GET /auth/session. */
  csrf: string;
  principal: Principal | null;
}

// The one piece of mutable module state: who this tab is signed in as.
const state: State = { mode: null, csrf: "", principal: null };

function storage(): Storage | null {
  try {
    return window.sessionStorage;
  } catch {
    return null; // storage disabled: the token lives as long as the page
  }
}

let memoryToken: string | null = null;

function storedToken(): string | null {
  return storage()?.getItem(BEARER_SLOT) ?? memoryToken;
}

function storeToken(token: string | null): void {
  memoryToken = token;
  const slot = storage();
  if (!slot) return;
  if (token === null) slot.removeItem(BEARER_SLOT);
  else slot.setItem(BEARER_SLOT, token);
}

/**
 * The CSRF proof sent with every state change in session mode: the session's token in
 * `X-CSRF-Token` (the browser adds `Origin` itself). The lead adapts this one function if
 * the accounts branch settles on another header.
 */
export function csrfHeaders(): Record<string, string> {
  return state.mode === "session" && state.csrf !== "" ? { "x-csrf-token": state.csrf } : {};
}

/** Headers and credentials mode for one admin API call, by the current sign-in. */
export function requestInit(method: string): { headers: Record<string, string>; credentials: RequestCredentials } {
  const headers: Record<string, string> = { accept: "application/json" };
  if (method !== "GET" && method !== "HEAD") headers["content-type"] = "application/json";
  if (state.mode === "bearer") {
    const token = storedToken();
    if (token) headers.authorization = `Bearer ${token}`;
    return { headers, credentials: "omit" };
  }
  if (method !== "GET" && method !== "HEAD") Object.assign(headers, csrfHeaders());
  return { headers, credentials: "same-origin" };
}

export function principal(): Principal | null {
  return state.principal;
}

export function mode(): Mode | null {
  return state.mode;
}

/**
 * What the signed-in principal may do, as the role table of operator-api.md section 5 says:
 * `own` is an owner's change (revoking a token), `mint` making a token or a member, which an
 * organization token never does, whatever its scopes.
 */
export function may(action: "read" | "assign" | "manage" | "own" | "mint" | "operate"): boolean {
  const p = state.principal;
  if (!p) return false;
  if (p.kind === "operator") return true;
  if (action === "operate") return false;
  if (p.kind === "token") {
    // Tokens never mint tokens or members; a read token only reads.
    if (action === "read") return true;
    if (action === "mint") return false;
    return (p.scopes ?? []).includes("write");
  }
  const rank = { member: 0, admin: 1, owner: 2 }[p.role ?? "member"];
  const needed = { read: 0, assign: 0, manage: 1, own: 2, mint: 2 }[action];
  return rank >= needed;
}

function whoAmI(init: { headers: Record<string, string>; credentials: RequestCredentials }): Promise<Answer<{ principal: Principal }>> {
  return send<{ principal: Principal }>(`${ADMIN_API}/me`, { method: "GET", ...init });
}

/** Signs in with a pasted token: kept only if `GET /me` accepts it. */
export async function signInWithToken(raw: string): Promise<Answer<{ principal: Principal }>> {
  const token = raw.trim();
  if (token === "") return { ok: false, status: 0, reason: "missing_token", message: "Paste a token first." };
  const answer = await whoAmI({ headers: { accept: "application/json", authorization: `Bearer ${token}` }, credentials: "omit" });
  if (answer.ok) {
    storeToken(token);
    state.mode = "bearer";
    state.csrf = "";
    state.principal = answer.data.principal;
  }
  return answer;
}

interface SignedInAnswer {
  member: { id: number; name: string; email: string; role: Role };
  org: { id: number; name: string };
  csrf_token?: string;
  passkeys?: number;
}

function enterSession(answer: SignedInAnswer): Principal {
  state.mode = "session";
  state.csrf = answer.csrf_token ?? "";
  const { id, name, email, role } = answer.member;
  state.principal = { kind: "member", org: answer.org, role, member: { id, name, email } };
  return state.principal;
}

/**
 * On page load: the token of this tab if any, else the member's session cookie
 * (`GET /admin/v1/auth/session` answers who and the CSRF token). Null: signed out.
 */
export async function resume(): Promise<Principal | null> {
  const token = storedToken();
  if (token) {
    const answer = await whoAmI({ headers: { accept: "application/json", authorization: `Bearer ${token}` }, credentials: "omit" });
    if (answer.ok) {
      state.mode = "bearer";
      state.principal = answer.data.principal;
      return state.principal;
    }
    if (answer.status !== 401) return null;
    storeToken(null);
    clearServerKey();
  }
  const session = await send<SignedInAnswer>(`${AUTH_API}/session`, {
    method: "GET",
    credentials: "same-origin",
    headers: { accept: "application/json" },
  });
  if (session.ok) return enterSession(session.data);
  // No credential left (credentialsLost says why the key goes too); an outage keeps it.
  if (session.status === 401) clearServerKey();
  return null;
}

/** Forgets every credential of this tab; a session is also ended on the server. */
export async function signOut(): Promise<void> {
  if (state.mode === "session") {
    await send(`${AUTH_API}/signout`, {
      method: "POST",
      credentials: "same-origin",
      headers: { "content-type": "application/json", ...csrfHeaders() },
      body: "{}",
    });
  }
  storeToken(null);
  clearServerKey();
  state.mode = null;
  state.csrf = "";
  state.principal = null;
}

/**
 * The API said 401: the credential is gone (expired session, revoked token). The server key
 * the tab held goes with it: it was entered under that credential, and whoever signs in next
 * in this tab must not query with it.
 */
export function credentialsLost(): void {
  if (state.mode === "bearer") storeToken(null);
  clearServerKey();
  state.mode = null;
  state.principal = null;
}

function ceremony(path: string, body: unknown): Promise<Answer<Record<string, unknown>>> {
  return send<Record<string, unknown>>(`${AUTH_API}${path}`, {
    method: "POST",
    credentials: "same-origin",
    headers: { "content-type": "application/json", accept: "application/json", ...csrfHeaders() },
    body: JSON.stringify(body),
  });
}

/** A WebAuthn ceremony the person cancelled or the browser refused, as a refusal to show. */
function browserRefusal(error: unknown): Refusal {
  const name = error instanceof Error ? error.name : "";
  const message =
    name === "NotAllowedError"
      ? "The passkey request was cancelled or timed out."
      : `The browser refused the passkey request (${name || "error"}).`;
  return { ok: false, status: 0, reason: "passkey_cancelled", message };
}

type OptionsJSON<F extends (...args: never[]) => unknown> = Parameters<F>[0] extends { optionsJSON: infer O } ? O : never;

/** Adds a passkey to the signed-in member (the team page). */
export async function addPasskey(): Promise<Answer<Record<string, unknown>>> {
  const options = await ceremony("/passkeys/options", {});
  if (!options.ok) return options;
  let response: unknown;
  try {
    response = await startRegistration({ optionsJSON: options.data.options as OptionsJSON<typeof startRegistration> });
  } catch (error) {
    return browserRefusal(error);
  }
  return ceremony("/passkeys/verify", { response });
}

/** The member's own sessions and passkeys: session mode only (a token has none). */
export function authPath(path: string): string {
  return `${AUTH_API}${path}`;
}

// ---- the server key of the security-data endpoints ----

export interface ServerKey {
  key: string;
  /** The domain the key is locked to, sent as `domain` (null: not locked). */
  domain: string | null;
}

export function serverKey(): ServerKey | null {
  const raw = storage()?.getItem(DATA_KEY_SLOT);
  if (!raw) return null;
  try {
    const parsed = JSON.parse(raw) as ServerKey;
    return typeof parsed.key === "string"
      ? { key: parsed.key, domain: typeof parsed.domain === "string" && parsed.domain !== "" ? parsed.domain : null }
      : null;
  } catch {
    return null;
  }
}

export function rememberServerKey(key: string, domain: string | null): Refusal | null {
  const trimmed = key.trim();
  if (!/^sk_(live|test)_\S+$/.test(trimmed)) {
    return {
      ok: false,
      status: 0,
      reason: "server_key_required",
      message: `${sentenceFor("server_key_required")} Server keys start sk_live_ or sk_test_.`,
    };
  }
  storage()?.setItem(DATA_KEY_SLOT, JSON.stringify({ key: trimmed, domain: domain?.trim() || null }));
  return null;
}

export function clearServerKey(): void {
  storage()?.removeItem(DATA_KEY_SLOT);
}
