import type { DayBar, IncidentView, MaintenanceView, StatusSnapshot } from "../document.js";
import { escapeXml } from "./escape.js";
import { BASE_CSS, COMPONENT_WORDS, INDICATOR_COLOURS, affectsText, barClass, paragraphs, pct, when } from "./style.js";

/**
 * The human status page (`{site_url}/status`): plain HTML and one inline stylesheet, no
 * script and no external asset, readable on a phone (the bars show the last 30 days
 * below 600 px, 90 above). Rendered from the same cached snapshot as status.php.
 */

const PAGE_CSS = `
.banner{color:#fff;border-radius:8px;padding:18px 20px;font-size:1.25rem;font-weight:600;margin-bottom:24px}
.component{display:flex;justify-content:space-between;align-items:baseline;gap:12px;flex-wrap:wrap}
.bars{display:flex;gap:2px;height:34px;margin:10px 0 4px}
.bars span{flex:1;border-radius:2px;min-width:2px}
.b-ok{background:#2da44e}.b-warn{background:#d4a72c}.b-bad{background:#cf222e}.b-none{background:#d0d7de}
.scale{display:flex;justify-content:space-between}
.scale .short{display:none}
.update{border-left:3px solid #d0d7de;padding:0 0 0 12px;margin:10px 0}
.update p{margin:2px 0}
footer{margin-top:40px;display:flex;flex-wrap:wrap;gap:8px 20px}
@media (max-width:600px){
  main{padding:16px 12px 32px}
  h1{font-size:1.3rem}
  .bars span:nth-child(-n+60){display:none}
  .scale .long{display:none}.scale .short{display:inline}
}`;

function bars(days: readonly DayBar[]): string {
  const spans = days
    .map((d) => {
      const label = `${d.date}: ${d.checks === 0 ? "no checks" : `${pct(d.uptime_pct)} of ${d.checks} checks`}`;
      return `<span class="${barClass(d.uptime_pct)}" title="${escapeXml(label)}"></span>`;
    })
    .join("");
  return `<div class="bars" role="img" aria-label="Daily uptime, oldest first">${spans}</div>
<div class="scale muted"><span><span class="long">90 days ago</span><span class="short">30 days ago</span></span><span>Today</span></div>`;
}

function updates(incident: IncidentView): string {
  return incident.updates
    .map(
      (u) =>
        `<div class="update"><p><strong>${escapeXml(u.status[0].toUpperCase() + u.status.slice(1))}</strong> <span class="muted">${when(u.at)}</span></p>${paragraphs(u.body)}</div>`,
    )
    .join("");
}

function incidentCard(incident: IncidentView, names: Record<string, string>): string {
  const colour =
    incident.status === "resolved" ? "#57606a" : incident.impact === "major" ? INDICATOR_COLOURS.down : INDICATOR_COLOURS.degraded;
  const postmortem = incident.postmortem ? `<h3>Postmortem</h3>${paragraphs(incident.postmortem)}` : "";
  return `<article class="card" id="incident-${incident.id}">
<h3>${escapeXml(incident.title)} <span class="pill" style="background:${colour}">${escapeXml(incident.impact)} · ${escapeXml(incident.status)}</span></h3>
<p class="muted">Affects: ${escapeXml(affectsText(incident.affects, names))} · Started ${when(incident.created_at)}${incident.resolved_at ? ` · Resolved ${when(incident.resolved_at)}` : ""}</p>
${updates(incident)}${postmortem}</article>`;
}

function maintenanceCard(window: MaintenanceView, names: Record<string, string>): string {
  return `<article class="card" id="maintenance-${window.id}">
<h3>${escapeXml(window.title)}</h3>
<p class="muted">${when(window.starts_at)} to ${when(window.ends_at)} · Affects: ${escapeXml(affectsText(window.affects, names))}</p>
${window.body ? paragraphs(window.body) : ""}</article>`;
}

export function renderPage(snapshot: StatusSnapshot): string {
  const doc = snapshot.document;
  const names = Object.fromEntries(doc.components.map((c) => [c.key, c.name]));
  const components = doc.components
    .map((c) => {
      const word = COMPONENT_WORDS[c.status];
      const uptime = doc.uptime_30d?.services[c.key];
      const detail =
        uptime && uptime.checks > 0
          ? `${pct(uptime.uptime_pct)} uptime over 30 days${uptime.typical_ms !== null ? ` · typically ${uptime.typical_ms} ms` : ""}`
          : c.status === "not_configured"
            ? "No health URL set"
            : "No checks yet";
      const serviceBars = snapshot.bars && c.status !== "not_configured" ? bars(snapshot.bars[c.key]) : "";
      return `<section class="card" aria-label="${escapeXml(c.name)}">
<div class="component"><h3>${escapeXml(c.name)}</h3><span class="pill" style="background:${word.colour}">${word.text}</span></div>
${serviceBars}<p class="muted" style="margin:4px 0 0">${detail}</p></section>`;
    })
    .join("\n");
  const section = (title: string, body: string) => (body ? `<h2>${title}</h2>\n${body}` : "");
  const colour = INDICATOR_COLOURS[doc.status.indicator];
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeXml(doc.page.name)}</title>
<link rel="alternate" type="application/atom+xml" title="Incidents and maintenance" href="${escapeXml(doc.page.feed_url)}">
<style>${BASE_CSS}${PAGE_CSS}</style>
</head>
<body>
<main>
<h1>${escapeXml(doc.page.name)}</h1>
<div class="banner" style="background:${colour}" role="status">${escapeXml(doc.status.description)}</div>
${section("Ongoing incidents", doc.incidents.open.map((i) => incidentCard(i, names)).join("\n"))}
${section("Maintenance in progress", doc.maintenance.in_progress.map((m) => maintenanceCard(m, names)).join("\n"))}
<h2>Services</h2>
${components}
${doc.uptime_30d?.overall_pct != null ? `<p class="muted">Overall uptime over 30 days: ${pct(doc.uptime_30d.overall_pct)} (${doc.uptime_30d.checks} checks).</p>` : ""}
${section("Upcoming maintenance", doc.maintenance.upcoming.map((m) => maintenanceCard(m, names)).join("\n"))}
${section("Resolved in the last 14 days", doc.incidents.recent.map((i) => incidentCard(i, names)).join("\n"))}
<footer class="muted">
<a href="${escapeXml(doc.page.feed_url)}">Atom feed</a>
<a href="${escapeXml(doc.page.report_url)}">Quarterly report</a>
<a href="${escapeXml(doc.page.badge_url)}">Status badge</a>
<a href="${escapeXml(doc.page.document_url)}">JSON</a>
<a href="${escapeXml(doc.page.summary_url)}">summary.json</a>
<span>Updated ${when(doc.page.generated_at)}</span>
</footer>
</main>
</body>
</html>
`;
}
