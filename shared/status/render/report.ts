import type { ReportData, UptimeCell } from "../report.js";
import { escapeXml } from "./escape.js";
import { BASE_CSS, affectsText, paragraphs, pct, when } from "./style.js";

/**
 * The quarterly report: one HTML document styled for print on A4 (margins, no
 * background colours needed, a section per page where it helps, incidents never split
 * across pages). Print it from the browser or with `chromium --print-to-pdf`.
 */

const REPORT_CSS = `
@page{size:A4;margin:18mm 16mm}
body{background:#fff}
main{max-width:none;padding:0}
header{border-bottom:2px solid #1f2328;margin-bottom:16px}
.incident,.window{break-inside:avoid;page-break-inside:avoid;border-top:1px solid #d0d7de;padding-top:8px;margin-top:12px}
.page{break-before:page;page-break-before:always}
.update p{margin:2px 0}
@media screen{main{max-width:900px;margin:0 auto;padding:24px 16px}}
@media print{a{color:inherit;text-decoration:none}}
`;

const MONTH_NAMES = [
  "January",
  "February",
  "March",
  "April",
  "May",
  "June",
  "July",
  "August",
  "September",
  "October",
  "November",
  "December",
];

function monthName(month: string): string {
  return `${MONTH_NAMES[Number(month.slice(5, 7)) - 1]} ${month.slice(0, 4)}`;
}

function td(value: UptimeCell): string {
  return `<td class="num">${value.checks === 0 ? "—" : pct(value.uptime_pct)}</td>`;
}

export function renderReport(data: ReportData): string {
  const names = Object.fromEntries(data.services.map((s) => [s.key, s.name]));
  const uptimeRows = data.services
    .map(
      (s) => `<tr><th scope="row">${escapeXml(s.name)}</th>${s.months.map(td).join("")}${td(s.total)}
<td class="num">${s.total.checks}</td><td class="num">${s.total.typical_ms === null ? "—" : `${s.total.typical_ms} ms`}</td></tr>`,
    )
    .join("\n");
  const incidents =
    data.incidents.length === 0
      ? "<p>No incidents this quarter.</p>"
      : data.incidents
          .map(
            (i) => `<div class="incident">
<h3>${escapeXml(i.title)}</h3>
<p class="muted">Impact ${escapeXml(i.impact)} · ${escapeXml(affectsText(i.affects, names))} · ${when(i.created_at)} to ${i.resolved_at ? when(i.resolved_at) : "still open"}</p>
${[...i.updates]
  .reverse()
  .map(
    (u) =>
      `<div class="update"><p><strong>${escapeXml(u.status)}</strong> <span class="muted">${when(u.at)}</span></p>${paragraphs(u.body)}</div>`,
  )
  .join("")}
${i.postmortem ? `<h3>Postmortem</h3>${paragraphs(i.postmortem)}` : ""}</div>`,
          )
          .join("\n");
  const maintenance =
    data.maintenance.length === 0
      ? "<p>No planned maintenance this quarter.</p>"
      : data.maintenance
          .map(
            (m) => `<div class="window">
<h3>${escapeXml(m.title)}</h3>
<p class="muted">${when(m.starts_at)} to ${when(m.ends_at)} · ${escapeXml(affectsText(m.affects, names))}</p>
${m.body ? paragraphs(m.body) : ""}</div>`,
          )
          .join("\n");
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeXml(data.pageName)}: report ${data.quarter.label}</title>
<style>${BASE_CSS}${REPORT_CSS}</style>
</head>
<body>
<main>
<header><h1>${escapeXml(data.pageName)}: quarterly report ${data.quarter.label}</h1>
<p class="muted">${monthName(data.quarter.months[0])} to ${monthName(data.quarter.months[2])} · generated ${when(data.generatedAt)}</p></header>
<h2>Uptime per service</h2>
<table>
<thead><tr><th>Service</th>${data.quarter.months.map((m) => `<th class="num">${monthName(m)}</th>`).join("")}<th class="num">Quarter</th><th class="num">Checks</th><th class="num">Typical</th></tr></thead>
<tbody>
${uptimeRows}
</tbody>
</table>
<p class="muted">Uptime is the share of successful checks; typical is the median response time of successful checks. — means no checks.</p>
<section class="page"><h2>Incidents (${data.incidents.length})</h2>
${incidents}</section>
<section><h2>Planned maintenance (${data.maintenance.length})</h2>
${maintenance}</section>
</main>
</body>
</html>
`;
}
