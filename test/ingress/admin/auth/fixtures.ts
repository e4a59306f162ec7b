import type { TestGateway } from "../../../helpers/gateway.js";
import { nextLinks, tokenOf } from "../../../helpers/mail-links.js";
import type { SmtpSink } from "../../../helpers/smtp-sink.js";
import { register, type SoftPasskey } from "../../../helpers/soft-authenticator.js";

/**
 * A member's browser as the HTTP tests play it: a cookie jar of one cookie, the CSRF token
 * of the last sign-in or GET /session, and the site's Origin on every call (as a browser
 * sends on POST and DELETE).
 */
export interface MemberClient {
  call(
    method: string,
    path: string,
    body?: unknown,
    headers?: Record<string, string>,
  ): Promise<{ status: number; body: any; headers: Headers }>;
  cookie: string;
  csrf: string;
}

export function memberClient(gw: TestGateway, site: string): MemberClient {
  const client: MemberClient = {
    cookie: "",
    csrf: "",
    async call(method, path, body, headers = {}) {
      const sent: Record<string, string> = { origin: site, ...(client.cookie ? { cookie: client.cookie } : {}) };
      if (method !== "GET" && client.csrf) sent["x-csrf-token"] = client.csrf;
      // A header given as "" is not sent (a client without Origin, without the token).
      const all = Object.fromEntries(Object.entries({ ...sent, ...headers }).filter(([, value]) => value !== ""));
      const answer = await gw.call(`/admin/v1/auth${path}`, { method, body: method === "GET" ? undefined : (body ?? {}), headers: all });
      const set = answer.headers.get("set-cookie");
      if (set) {
        const value = /^gw_session=([^;]*)/.exec(set)?.[1] ?? "";
        client.cookie = value ? `gw_session=${value}` : "";
      }
      if (typeof answer.body?.csrf_token === "string") client.csrf = answer.body.csrf_token;
      return answer;
    },
  };
  return client;
}

/** The site the gateway believes it is (SITE_URL=http://localhost:0 becomes the chosen port). */
export function siteOf(gw: TestGateway): string {
  return gw.ingress.deps.baseUrl().replace(/\/api\/v1$/, "");
}

export async function advance(gw: TestGateway, seconds: number): Promise<void> {
  const moved = await gw.admin("POST", "/clock", { advance_s: seconds });
  if (moved.status !== 200) throw new Error(`clock not moved: ${moved.status}`);
}

let emails = 0;

/** A new member of the organization, and the token of the invitation it was e-mailed. */
export async function invite(
  gw: TestGateway,
  smtp: SmtpSink,
  orgId: number,
  role = "member",
): Promise<{ id: number; name: string; email: string; token: string }> {
  const email = `m${++emails}-${Math.random().toString(36).slice(2, 8)}@example.com`;
  const before = smtp.mails.length;
  const added = await gw.admin("POST", `/orgs/${orgId}/members`, { name: `Member ${emails}`, email, role });
  if (added.status !== 201) throw new Error(`member not added: ${JSON.stringify(added.body)}`);
  const [link] = await nextLinks(smtp, email, before);
  return { id: added.body.member.id, name: added.body.member.name, email, token: tokenOf(link) };
}

/**
 * Accepts a member's invitation as its page does, with a software passkey (the invitation
 * signs in; that session is signed out again, so the member's list of sessions holds only
 * what the test opens). From then on the membership counts: sign-in links are e-mailed to it.
 */
export async function accept(gw: TestGateway, member: { token: string }): Promise<SoftPasskey> {
  const site = siteOf(gw);
  const client = memberClient(gw, site);
  const options = await client.call("POST", "/invitation/accept/options", { token: member.token });
  if (options.status !== 200) throw new Error(`invitation not opened: ${JSON.stringify(options.body)}`);
  const { passkey, response } = register(options.body.options, site);
  const verified = await client.call("POST", "/invitation/accept/verify", { token: member.token, response, name: "Soft key" });
  if (verified.status !== 201) throw new Error(`invitation not accepted: ${JSON.stringify(verified.body)}`);
  await client.call("POST", "/signout");
  return passkey;
}

/** A new member of the organization who accepted its invitation (one passkey): `invite`, then `accept`. */
export async function joined(
  gw: TestGateway,
  smtp: SmtpSink,
  orgId: number,
  role = "member",
): Promise<{ id: number; name: string; email: string; token: string; passkey: SoftPasskey }> {
  const member = await invite(gw, smtp, orgId, role);
  return { ...member, passkey: await accept(gw, member) };
}

/** Signs a member in with an e-mailed link (the path that needs no authenticator); the member must have accepted its invitation. */
export async function signInByLink(gw: TestGateway, smtp: SmtpSink, email: string): Promise<MemberClient> {
  const client = memberClient(gw, siteOf(gw));
  const before = smtp.mails.length;
  const asked = await client.call("POST", "/signin/link", { email });
  if (asked.status !== 200) throw new Error(`link not requested: ${JSON.stringify(asked.body)}`);
  const [link] = await nextLinks(smtp, email, before);
  const consumed = await client.call("POST", "/signin/link/consume", { token: tokenOf(link) });
  if (consumed.status !== 200) throw new Error(`link not consumed: ${JSON.stringify(consumed.body)}`);
  return client;
}
