import { useState } from "preact/hooks";
import { api, type Member, type TokenDetails } from "../api.js";
import { addPasskey, may, mode } from "../auth.js";
import { useOrg } from "../layout.js";
import {
  Badge,
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
  idle,
  today,
  useAction,
  useAnswer,
  valueOf,
  visible,
  type InputEvent,
} from "../ui.js";
import { ShownOnce } from "./keys.js";

/**
 * The team (operator-api.md section 5): members and their roles, invitations, organization
 * tokens (shown once), and the signed-in member's own sessions and passkeys. An owner (and
 * the operator) also changes a member's role and removes a member (docs/accounts.md
 * "Members"); nobody else is offered either.
 */

const ROLES = ["member", "admin", "owner"] as const;

function Members(props: { org: number }) {
  const [list, reload] = useAnswer(() => api.members(props.org, { limit: 500 }), [props.org]);
  const [name, setName] = useState("");
  const [email, setEmail] = useState("");
  const [role, setRole] = useState("member");
  const [outcome, run] = useAction();
  const owns = may("mint");
  const changeRole = async (id: number, role: string) => {
    await run(api.setMemberRole(props.org, id, role), (d) => `${d.member.email} is now ${d.member.role}, from their next request.`);
    // Refused (the last owner keeps the role) or not, the list shows the roles as they are.
    reload();
  };
  const remove = async (id: number) => {
    const answer = await run(api.removeMember(props.org, id), (d) =>
      [
        `${d.removed.email} is removed: their sessions have ended.`,
        d.tokens_revoked > 0
          ? `${d.tokens_revoked === 1 ? "1 token" : `${d.tokens_revoked} tokens`} they made ${d.tokens_revoked === 1 ? "is" : "are"} revoked.`
          : "",
        d.assignments_unassigned > 0 ? `${d.assignments_unassigned} of their assignments are unassigned.` : "",
        d.default_owner_cleared ? "They were the default owner: new failing findings are no longer assigned automatically." : "",
      ]
        .filter(Boolean)
        .join(" "),
    );
    if (answer.ok) reload();
  };
  const invite = async (event: Event) => {
    event.preventDefault();
    const answer = await run(
      api.addMember(props.org, { name: name.trim(), email: email.trim(), role }),
      (d) => `${d.member.email} is invited: the e-mail has a link to register a passkey.`,
    );
    if (answer.ok) {
      setName("");
      setEmail("");
      reload();
    }
  };
  return (
    <Section title="Members">
      <p class="hint">
        A member reads everything and changes assignments and notes; an admin also manages keys, domains, content, secrets, risks and
        destinations; an owner also manages members, tokens and the organization.
      </p>
      <Show loaded={list} label="Loading the members…">
        {(d) =>
          d.members.length === 0 ? (
            <Empty>No members yet.</Empty>
          ) : (
            <Table caption="Members" head={owns ? ["Name", "E-mail", "Role", "Since", ""] : ["Name", "E-mail", "Role", "Since"]}>
              {d.members.map((m) => {
                // An owner's controls need the member's id (every list answer has it).
                const id = owns ? m.id : undefined;
                return (
                  <tr key={m.email}>
                    <th scope="row" class="break">
                      <Ext text={m.name} />
                    </th>
                    <td class="break">
                      <Ext text={m.email} />
                    </td>
                    <td>
                      {id !== undefined ? (
                        <RoleSelect member={m} onChange={(role) => void changeRole(id, role)} />
                      ) : (
                        <Badge value={m.role === "owner" ? "active" : "plain"} label={m.role} />
                      )}
                    </td>
                    <td data-label="Since">
                      <Time iso={m.created_at} empty="" />
                    </td>
                    {owns ? (
                      <td>
                        {id !== undefined ? (
                          <Confirm
                            label="Remove"
                            danger
                            title={`Remove ${m.name} <${m.email}> from the organization?`}
                            confirm="Remove"
                            onConfirm={() => remove(id)}
                          >
                            <p>
                              Their sessions end at once, and their passkeys, sign-in links and the organization tokens they made stop
                              working. The findings assigned to them become unassigned; the activity record keeps what they did.
                            </p>
                          </Confirm>
                        ) : null}
                      </td>
                    ) : null}
                  </tr>
                );
              })}
            </Table>
          )
        }
      </Show>
      {may("mint") ? (
        <>
          <h3>Invite a member</h3>
          <form class="grid-form" onSubmit={(e) => void invite(e)}>
            <Field label="Name">
              {(a) => <input {...a} required maxLength={200} value={name} onInput={(e: InputEvent) => setName(valueOf(e))} />}
            </Field>
            <Field label="E-mail">
              {(a) => (
                <input {...a} type="email" required value={email} autocomplete="off" onInput={(e: InputEvent) => setEmail(valueOf(e))} />
              )}
            </Field>
            <Field label="Role">
              {(a) => (
                <select {...a} value={role} onChange={(e: InputEvent) => setRole(valueOf(e))}>
                  <option value="member">member</option>
                  <option value="admin">admin</option>
                  <option value="owner">owner</option>
                </select>
              )}
            </Field>
            <div class="form-actions">
              <button type="submit" class="primary">
                Send the invitation
              </button>
            </div>
          </form>
        </>
      ) : (
        <p class="muted">Only an owner invites members or changes their roles.</p>
      )}
      <Outcome outcome={outcome} />
    </Section>
  );
}

/** A member's role, changed as soon as another is chosen (an owner's control). */
function RoleSelect(props: { member: Member; onChange: (role: string) => void }) {
  return (
    <select
      aria-label={`Role of ${visible(props.member.name)}`}
      value={props.member.role}
      onChange={(e: InputEvent) => props.onChange(valueOf(e))}
    >
      {ROLES.map((role) => (
        <option key={role} value={role}>
          {role}
        </option>
      ))}
    </select>
  );
}

function Tokens(props: { org: number }) {
  const [list, reload] = useAnswer(() => api.tokens(props.org), [props.org]);
  const [name, setName] = useState("");
  const [write, setWrite] = useState(false);
  const [expires, setExpires] = useState("");
  const [created, setCreated] = useState<{ token: string; details: TokenDetails } | null>(null);
  const [outcome, run] = useAction();
  const create = async (event: Event) => {
    event.preventDefault();
    const body: { name: string; scopes: string[]; expires_at?: string } = {
      name: name.trim(),
      scopes: write ? ["read", "write"] : ["read"],
    };
    if (expires) body.expires_at = `${expires}T23:59:59Z`;
    const answer = await run(api.createToken(props.org, body), "Token created.");
    if (answer.ok) {
      setCreated(answer.data);
      setName("");
      reload();
    }
  };
  const revoke = async (token: TokenDetails) => {
    const answer = await run(api.revokeToken(props.org, token.id), `Token "${token.name}" revoked: refused from its next call.`);
    if (answer.ok) reload();
  };
  return (
    <Section title="Organization tokens">
      <p class="hint">
        For scripts and the ops command line: the same reach as a member, read or read and write. Tokens never create tokens or members.
      </p>
      <Show loaded={list} label="Loading the tokens…">
        {(d) =>
          d.tokens.length === 0 ? (
            <Empty>No tokens.</Empty>
          ) : (
            <Table caption="Tokens" head={["Name", "Scopes", "Created", "Last used", "Ends", ""]}>
              {d.tokens.map((t) => (
                <tr key={t.id}>
                  <th scope="row">
                    <Ext text={t.name} />
                    <div class="muted mono">{t.prefix}…</div>
                  </th>
                  <td data-label="Scopes">{t.scopes.join(" + ")}</td>
                  <td data-label="Created">
                    <Time iso={t.created_at} />
                  </td>
                  <td data-label="Last used">
                    <Time iso={t.last_used_at} />
                  </td>
                  <td data-label="Ends">
                    <Time iso={t.expires_at} empty="never" />
                  </td>
                  <td>
                    {may("own") ? (
                      <Confirm label="Revoke" danger title={`Revoke the token "${t.name}"?`} confirm="Revoke" onConfirm={() => revoke(t)}>
                        <p>Scripts using it are refused from their next call.</p>
                      </Confirm>
                    ) : null}
                  </td>
                </tr>
              ))}
            </Table>
          )
        }
      </Show>
      {may("mint") ? (
        <>
          <h3>Create a token</h3>
          <form class="grid-form" onSubmit={(e) => void create(e)}>
            <Field label="Name">
              {(a) => <input {...a} required maxLength={200} value={name} onInput={(e: InputEvent) => setName(valueOf(e))} />}
            </Field>
            <Field label="Ends (optional)" hint="The token stops working when this day ends in UTC.">
              {(a) => <input {...a} type="date" min={today()} value={expires} onInput={(e: InputEvent) => setExpires(valueOf(e))} />}
            </Field>
            <div class="field">
              <label class="check">
                <input type="checkbox" checked={write} onChange={(e) => setWrite((e.currentTarget as HTMLInputElement).checked)} /> May
                write too
              </label>
            </div>
            <div class="form-actions">
              <button type="submit" class="primary">
                Create the token
              </button>
            </div>
          </form>
        </>
      ) : (
        <p class="muted">
          {may("own") ? "Only an owner creates tokens: a token never makes another." : "Only an owner creates and revokes tokens."}
        </p>
      )}
      <Outcome outcome={outcome} />
      {created ? <ShownOnce label={`The new token "${created.details.name}"`} value={created.token} /> : null}
    </Section>
  );
}

function Mine() {
  const member = mode() === "session";
  const [sessions, reloadSessions] = useAnswer(() => (member ? api.sessions() : idle<never>()), [member]);
  const [passkeys, reloadPasskeys] = useAnswer(() => (member ? api.passkeys() : idle<never>()), [member]);
  const [outcome, run] = useAction();
  if (!member) {
    return (
      <Section title="My sessions and passkeys">
        <p class="muted">
          You are signed in with a token: sessions and passkeys belong to members who sign in with a passkey or an e-mailed link.
        </p>
      </Section>
    );
  }
  const add = async () => {
    const answer = await run(addPasskey(), "Passkey added.");
    if (answer.ok) reloadPasskeys();
  };
  return (
    <Section title="My sessions and passkeys">
      <Outcome outcome={outcome} />
      <h3>Sessions</h3>
      <Show loaded={sessions}>
        {(d) => (
          <ul class="plain-list">
            {d.sessions.map((s) => (
              <li key={s.id}>
                {s.current ? <strong>This session</strong> : <Ext text={s.user_agent || "A browser"} />}: signed in{" "}
                <Time iso={s.created_at} /> by {s.method}, last seen <Time iso={s.last_seen_at} />{" "}
                {s.current ? null : (
                  <button type="button" onClick={() => void run(api.revokeSession(s.id), "Session revoked.").then(reloadSessions)}>
                    Revoke
                  </button>
                )}
              </li>
            ))}
          </ul>
        )}
      </Show>
      <h3>Passkeys</h3>
      <Show loaded={passkeys}>
        {(d) => (
          <ul class="plain-list">
            {d.passkeys.map((p) => (
              <li key={p.id}>
                <Ext text={p.name} />: added <Time iso={p.created_at} />, last used <Time iso={p.last_used_at} />{" "}
                {d.passkeys.length > 1 ? (
                  <button type="button" onClick={() => void run(api.removePasskey(p.id), "Passkey removed.").then(reloadPasskeys)}>
                    Remove
                  </button>
                ) : null}
              </li>
            ))}
          </ul>
        )}
      </Show>
      <p>
        <button type="button" onClick={() => void add()}>
          Add a passkey
        </button>
      </p>
    </Section>
  );
}

export function TeamPage() {
  const { id: org } = useOrg();
  return (
    <>
      <PageTitle sub="Who may act for the organization, and how.">Team</PageTitle>
      <Members org={org} />
      <Tokens org={org} />
      <Mine />
    </>
  );
}
