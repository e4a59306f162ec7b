import type { IncidentView, MaintenanceRecord, StatusSnapshot } from "../document.js";
import { escapeXml } from "./escape.js";

/**
 * The Atom 1.0 feed (RFC 4287) of incidents and maintenance: one entry per incident
 * (its updates as the content, newest first) and one per maintenance window. Entry ids
 * are the page URL with a fragment: stable for the life of the record, and a link too.
 * An entry's `updated` is its last change, so readers show edits again.
 */

function incidentHtml(incident: IncidentView): string {
  const updates = incident.updates
    .map((u) => `<p><strong>${escapeXml(u.status)}</strong> (${escapeXml(u.at)}): ${escapeXml(u.body)}</p>`)
    .join("");
  const postmortem = incident.postmortem ? `<h3>Postmortem</h3><p>${escapeXml(incident.postmortem)}</p>` : "";
  const affects = incident.affects.length === 0 ? "all services" : incident.affects.join(", ");
  return `<p>Impact: ${escapeXml(incident.impact)}. Affects: ${escapeXml(affects)}.</p>${updates}${postmortem}`;
}

function maintenanceHtml(window: MaintenanceRecord): string {
  const affects = window.affects.length === 0 ? "all services" : window.affects.join(", ");
  const cancelled = window.cancelled_at ? `<p><strong>Cancelled</strong> at ${escapeXml(window.cancelled_at)}.</p>` : "";
  return (
    `${cancelled}<p>Scheduled from ${escapeXml(window.starts_at)} to ${escapeXml(window.ends_at)}. Affects: ${escapeXml(affects)}.</p>` +
    (window.body ? `<p>${escapeXml(window.body)}</p>` : "")
  );
}

function entry(fields: {
  id: string;
  title: string;
  updated: string;
  published: string;
  link: string;
  html: string;
  category: string;
}): string {
  return `  <entry>
    <id>${escapeXml(fields.id)}</id>
    <title>${escapeXml(fields.title)}</title>
    <updated>${fields.updated}</updated>
    <published>${fields.published}</published>
    <link rel="alternate" type="text/html" href="${escapeXml(fields.link)}"/>
    <category term="${fields.category}"/>
    <content type="html">${escapeXml(fields.html)}</content>
  </entry>`;
}

export function renderAtom(snapshot: StatusSnapshot): string {
  const { page } = snapshot.document;
  const entries = [
    ...snapshot.history.incidents.map((i) => ({
      sortKey: i.updated_at,
      xml: entry({
        id: `${page.url}#incident-${i.id}`,
        title: `${i.status === "resolved" ? "[Resolved] " : ""}${i.title}`,
        updated: i.updated_at,
        published: i.created_at,
        link: `${page.url}#incident-${i.id}`,
        html: incidentHtml(i),
        category: "incident",
      }),
    })),
    ...snapshot.history.maintenance.map((m) => ({
      sortKey: m.updated_at,
      xml: entry({
        id: `${page.url}#maintenance-${m.id}`,
        title: `${m.cancelled_at ? "[Cancelled] " : ""}Maintenance: ${m.title}`,
        updated: m.updated_at,
        published: m.created_at,
        link: `${page.url}#maintenance-${m.id}`,
        html: maintenanceHtml(m),
        category: "maintenance",
      }),
    })),
  ].sort((a, b) => (a.sortKey < b.sortKey ? 1 : a.sortKey > b.sortKey ? -1 : 0));
  const updated = entries[0]?.sortKey ?? page.generated_at;
  return `<?xml version="1.0" encoding="utf-8"?>
<feed xmlns="http://www.w3.org/2005/Atom">
  <id>${escapeXml(page.feed_url)}</id>
  <title>${escapeXml(page.name)}: incidents and maintenance</title>
  <updated>${updated}</updated>
  <author><name>${escapeXml(page.name)}</name></author>
  <link rel="self" type="application/atom+xml" href="${escapeXml(page.feed_url)}"/>
  <link rel="alternate" type="text/html" href="${escapeXml(page.url)}"/>
${entries.map((e) => e.xml).join("\n")}
</feed>
`;
}
