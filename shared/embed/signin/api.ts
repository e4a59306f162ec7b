/**
 * The sign-in API as the page calls it (docs/accounts-members.md): same origin, the session
 * cookie sent by the browser, and on every change the session's CSRF token in X-CSRF-Token
 * (the browser adds Origin itself).
 */

export const API = "/admin/v1/auth";

export interface Answer {
  status: number;
  ok: boolean;
  reason?: string;
  [field: string]: unknown;
}

let csrfToken = "";

/** Kept from the answer of a sign-in or of GET /session; sent with every change. */
export function useCsrfToken(token: unknown): void {
  if (typeof token === "string") csrfToken = token;
}

export async function call(method: "GET" | "POST" | "DELETE", path: string, body?: unknown): Promise<Answer> {
  const headers: Record<string, string> = {};
  if (method !== "GET") {
    headers["content-type"] = "application/json";
    if (csrfToken !== "") headers["x-csrf-token"] = csrfToken;
  }
  let response: Response;
  try {
    response = await fetch(API + path, {
      method,
      headers,
      credentials: "same-origin",
      cache: "no-store",
      body: method === "GET" ? undefined : JSON.stringify(body ?? {}),
    });
  } catch {
    return { status: 0, ok: false, reason: "network" };
  }
  let parsed: Record<string, unknown> = {};
  try {
    parsed = (await response.json()) as Record<string, unknown>;
  } catch {
    /* no JSON: the status says enough */
  }
  return {
    ...parsed,
    status: response.status,
    ok: parsed.ok === true,
    reason: typeof parsed.reason === "string" ? parsed.reason : undefined,
  };
}

/** What a member reads for a refusal, by reason. */
const MESSAGES: Record<string, string> = {
  invalid_link: "This link is unknown, expired or already used. Ask for a new sign-in link.",
  invalid_passkey: "The passkey could not be verified. Try again.",
  signin_rate_limited: "Too many attempts. Wait a few minutes and try again.",
  session_expired: "Your session has ended. Sign in again.",
  reauthentication_required: "For your safety, sign in again before adding a passkey.",
  csrf_rejected: "The request was refused. Reload the page and try again.",
  conflict: "That is not possible: this passkey is registered already, or it is your last one.",
  network: "The service could not be reached. Check your connection and try again.",
};

export function messageOf(answer: Answer): string {
  return (answer.reason && MESSAGES[answer.reason]) || `Something went wrong (${answer.reason ?? answer.status}). Try again.`;
}
