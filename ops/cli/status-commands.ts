import { segment } from "./admin-client.js";
import type { AnswerBase } from "./admin-client.js";
import { type AdminContext, type Body, json } from "./admin-commands.js";
import type { ActivityView, IncidentView, MaintenanceView, ProbeView, ServiceView } from "./answers.js";
import { idArgument, listOption, requiredOption, stringOption } from "./args.js";
import { adminCommand, type Command } from "./command.js";
import { lines, table, text } from "./format.js";
import { EXIT, print, UsageError } from "./io.js";

/** The status page's admin calls (operator-api.md "Status page", docs/status.md). */

const SERVICES = ["website", "api", "dashboard"];

function limitQuery(c: AdminContext): string {
  const raw = stringOption(c.parsed, "limit");
  return raw === undefined ? "" : `?limit=${idArgument(raw, "--limit")}`;
}

/** Copies the string options given into the body under their field names. */
function fields(c: AdminContext, body: Body, names: readonly (readonly [string, string])[]): Body {
  for (const [option, field] of names) {
    const value = stringOption(c.parsed, option);
    if (value !== undefined) body[field] = value;
  }
  const affects = listOption(c.parsed, "affects");
  if (affects !== undefined) body.affects = affects;
  return body;
}

function incidentLines(i: IncidentView): string {
  const updates = (i.updates ?? []).map((u) => `\n    ${text(u.at)}  ${text(u.status)}: ${text(u.body)}`).join("");
  return (
    lines([
      ["status", i.status],
      ["impact", i.impact],
      ["affects", i.affects],
      ["created", i.created_at],
      ["resolved", i.resolved_at],
      ["postmortem", i.postmortem],
    ]) + (updates ? `\n  updates${updates}` : "")
  );
}

function showIncident(c: AdminContext, answer: AnswerBase & { incident: IncidentView }, what: string): number {
  if (c.json) return json(c, answer);
  const i = answer.incident;
  print(c.io, `Incident ${text(i.id)} "${text(i.title)}"${what}`);
  print(c.io, incidentLines(i));
  return EXIT.ok;
}

function showMaintenance(c: AdminContext, answer: AnswerBase & { maintenance: MaintenanceView }, what: string): number {
  if (c.json) return json(c, answer);
  const m = answer.maintenance;
  print(c.io, `Maintenance ${text(m.id)} "${text(m.title)}"${what}`);
  print(
    c.io,
    lines([
      ["window", `${text(m.starts_at)} → ${text(m.ends_at)}`],
      ["affects", m.affects],
      ["cancelled", m.cancelled_at],
      ["body", m.body],
    ]),
  );
  return EXIT.ok;
}

/** `ok 200 at ...`, or the reason the newest probe failed (an SSRF refusal names the setting). */
function lastProbe(probe: ProbeView | null | undefined): string {
  if (probe === null || probe === undefined) return "-";
  const p = probe;
  return p.ok
    ? `ok ${text(p.status_code)} at ${text(p.at)}`
    : `failed at ${text(p.at)}: ${text(p.error ?? `status ${text(p.status_code)}`)}`;
}

async function serviceList(c: AdminContext): Promise<number> {
  const { body: answer } = await c.client.call<{ services: ServiceView[] }>("GET", "/status/services");
  if (c.json) return json(c, answer);
  print(
    c.io,
    table(
      ["SERVICE", "NAME", "PROBED", "URL", "LAST PROBE"],
      answer.services.map((s) => [text(s.key), text(s.name), s.configured ? "yes" : "no", text(s.url), lastProbe(s.last_probe)]),
    ),
  );
  return EXIT.ok;
}

/** URL `none` stops probing the service. */
async function serviceSet(c: AdminContext): Promise<number> {
  const service = c.args[0];
  if (service === undefined || !SERVICES.includes(service)) throw new UsageError(`the service must be one of ${SERVICES.join(", ")}`);
  const url = c.args[1];
  if (url === undefined || url === "") throw new UsageError("the health URL is required (none: stop probing)");
  const body = { name: requiredOption(c.parsed, "name"), url: url === "none" ? null : url };
  const { body: answer } = await c.client.call<{ service: ServiceView }>("PUT", `/status/services/${segment(service)}`, body);
  if (c.json) return json(c, answer);
  const s = answer.service;
  print(c.io, `Service ${text(s.key)} "${text(s.name)}" ${s.url ? `is probed at ${text(s.url)}` : "is not probed"}.`);
  return EXIT.ok;
}

async function incidentList(c: AdminContext): Promise<number> {
  const { body: answer } = await c.client.call<{ incidents: IncidentView[] }>("GET", `/status/incidents${limitQuery(c)}`);
  if (c.json) return json(c, answer);
  const rows = answer.incidents;
  if (rows.length === 0) print(c.io, "No incidents.");
  else
    print(
      c.io,
      table(
        ["ID", "STATUS", "IMPACT", "CREATED", "TITLE"],
        rows.map((i) => [text(i.id), text(i.status), text(i.impact), text(i.created_at), text(i.title)]),
      ),
    );
  return EXIT.ok;
}

async function incidentGet(c: AdminContext): Promise<number> {
  const id = idArgument(c.args[0], "the incident id");
  return showIncident(c, (await c.client.call<{ incident: IncidentView }>("GET", `/status/incidents/${id}`)).body, "");
}

async function incidentCreate(c: AdminContext): Promise<number> {
  const body = fields(c, { title: requiredOption(c.parsed, "title"), body: requiredOption(c.parsed, "body") }, [
    ["impact", "impact"],
    ["status", "status"],
  ]);
  return showIncident(c, (await c.client.call<{ incident: IncidentView }>("POST", "/status/incidents", body)).body, " opened.");
}

async function incidentUpdate(c: AdminContext): Promise<number> {
  const id = idArgument(c.args[0], "the incident id");
  const body = { status: requiredOption(c.parsed, "status"), body: requiredOption(c.parsed, "body") };
  return showIncident(
    c,
    (await c.client.call<{ incident: IncidentView }>("POST", `/status/incidents/${id}/updates`, body)).body,
    " updated.",
  );
}

/** `--postmortem none` removes the postmortem. */
async function incidentEdit(c: AdminContext): Promise<number> {
  const id = idArgument(c.args[0], "the incident id");
  const body = fields(c, {}, [
    ["title", "title"],
    ["impact", "impact"],
  ]);
  const postmortem = stringOption(c.parsed, "postmortem");
  if (postmortem !== undefined) body.postmortem = postmortem === "none" ? null : postmortem;
  if (Object.keys(body).length === 0) throw new UsageError("nothing to change: pass --title, --impact, --affects or --postmortem");
  return showIncident(c, (await c.client.call<{ incident: IncidentView }>("PATCH", `/status/incidents/${id}`, body)).body, " changed.");
}

async function maintenanceList(c: AdminContext): Promise<number> {
  const { body: answer } = await c.client.call<{ maintenance: MaintenanceView[] }>("GET", `/status/maintenance${limitQuery(c)}`);
  if (c.json) return json(c, answer);
  const rows = answer.maintenance;
  if (rows.length === 0) print(c.io, "No maintenance.");
  else
    print(
      c.io,
      table(
        ["ID", "STARTS", "ENDS", "CANCELLED", "TITLE"],
        rows.map((m) => [text(m.id), text(m.starts_at), text(m.ends_at), text(m.cancelled_at), text(m.title)]),
      ),
    );
  return EXIT.ok;
}

async function maintenanceGet(c: AdminContext): Promise<number> {
  const id = idArgument(c.args[0], "the maintenance id");
  return showMaintenance(c, (await c.client.call<{ maintenance: MaintenanceView }>("GET", `/status/maintenance/${id}`)).body, "");
}

const MAINTENANCE_FIELDS = [
  ["title", "title"],
  ["body", "body"],
  ["starts-at", "starts_at"],
  ["ends-at", "ends_at"],
] as const;

async function maintenanceCreate(c: AdminContext): Promise<number> {
  for (const required of ["title", "starts-at", "ends-at"]) requiredOption(c.parsed, required);
  const body = fields(c, {}, MAINTENANCE_FIELDS);
  return showMaintenance(c, (await c.client.call<{ maintenance: MaintenanceView }>("POST", "/status/maintenance", body)).body, " planned.");
}

async function maintenanceEdit(c: AdminContext): Promise<number> {
  const id = idArgument(c.args[0], "the maintenance id");
  const body = fields(c, {}, MAINTENANCE_FIELDS);
  if (Object.keys(body).length === 0) throw new UsageError("nothing to change: pass --title, --body, --starts-at, --ends-at or --affects");
  return showMaintenance(
    c,
    (await c.client.call<{ maintenance: MaintenanceView }>("PATCH", `/status/maintenance/${id}`, body)).body,
    " changed.",
  );
}

async function maintenanceCancel(c: AdminContext): Promise<number> {
  const id = idArgument(c.args[0], "the maintenance id");
  return showMaintenance(
    c,
    (await c.client.call<{ maintenance: MaintenanceView }>("POST", `/status/maintenance/${id}/cancel`)).body,
    " cancelled.",
  );
}

async function statusActivity(c: AdminContext): Promise<number> {
  const { body: answer } = await c.client.call<{ activity: ActivityView[] }>("GET", `/status/activity${limitQuery(c)}`);
  if (c.json) return json(c, answer);
  for (const a of answer.activity) print(c.io, `${text(a.time)}  ${text(a.who)}: ${text(a.action)}`);
  return EXIT.ok;
}

const LIMIT = { limit: "string" } as const;
const INCIDENT = { title: "string", body: "string", impact: "string", affects: "string", status: "string" } as const;
const MAINTENANCE = { title: "string", body: "string", affects: "string", "starts-at": "string", "ends-at": "string" } as const;

export const STATUS_COMMANDS: Command[] = [
  adminCommand("status", "service list", "status service list", "The three status services, their names and probe URLs.", {}, serviceList),
  adminCommand(
    "status",
    "service set",
    "status service set website|api|dashboard URL|none --name NAME",
    "Name a service and the health URL the prober checks (none: stop probing).",
    { name: "string" },
    serviceSet,
  ),
  adminCommand("status", "incident list", "status incident list [--limit N]", "Latest incidents, newest first.", LIMIT, incidentList),
  adminCommand("status", "incident get", "status incident get ID", "An incident with its updates.", {}, incidentGet),
  adminCommand(
    "status",
    "incident create",
    "status incident create --title T --body TEXT [--impact minor|major] [--affects website,api] [--status S]",
    "Open an incident on the public status page.",
    INCIDENT,
    incidentCreate,
  ),
  adminCommand(
    "status",
    "incident update",
    "status incident update ID --status investigating|identified|monitoring|resolved --body TEXT",
    "Post an update (resolved is final).",
    { status: "string", body: "string" },
    incidentUpdate,
  ),
  adminCommand(
    "status",
    "incident edit",
    "status incident edit ID [--title T] [--impact I] [--affects a,b] [--postmortem TEXT|none]",
    "Change an incident's title, impact, services or postmortem.",
    { title: "string", impact: "string", affects: "string", postmortem: "string" },
    incidentEdit,
  ),
  adminCommand(
    "status",
    "maintenance list",
    "status maintenance list [--limit N]",
    "Planned maintenance, newest first.",
    LIMIT,
    maintenanceList,
  ),
  adminCommand("status", "maintenance get", "status maintenance get ID", "One maintenance window.", {}, maintenanceGet),
  adminCommand(
    "status",
    "maintenance create",
    "status maintenance create --title T --starts-at TIME --ends-at TIME [--body TEXT] [--affects a,b]",
    "Plan maintenance (ISO 8601 times).",
    MAINTENANCE,
    maintenanceCreate,
  ),
  adminCommand(
    "status",
    "maintenance edit",
    "status maintenance edit ID [--title T] [--body TEXT] [--starts-at TIME] [--ends-at TIME] [--affects a,b]",
    "Change planned maintenance (not once it is over or cancelled).",
    MAINTENANCE,
    maintenanceEdit,
  ),
  adminCommand("status", "maintenance cancel", "status maintenance cancel ID", "Cancel planned maintenance.", {}, maintenanceCancel),
  adminCommand("status", "activity", "status activity [--limit N]", "Who changed the status page, newest first.", LIMIT, statusActivity),
];
