import { createHash } from "node:crypto";
import { REASONS } from "../../shared/platform/reasons.js";
import type { OpenApiDocument } from "./document.js";

/**
 * The API reference page: static HTML rendered from the two OpenAPI documents (endpoints,
 * parameters, bodies, answers, the reasons table). No script, no remote resource: the one
 * style sheet is inline and allowed by its hash (`contentSecurityPolicy`).
 */

const escape = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c] ?? c);

const STYLE = `body{font:15px/1.5 system-ui,sans-serif;margin:0 auto;max-width:980px;padding:1.5rem;color:#1b1f24}
h1{font-size:1.6rem}h2{margin-top:2.5rem;border-bottom:1px solid #d0d7de}h3{font-size:1rem;margin:1.5rem 0 .3rem}
code,pre{font:13px ui-monospace,monospace}pre{background:#f6f8fa;padding:.5rem;overflow:auto;max-height:16rem}
table{border-collapse:collapse;width:100%;margin:.3rem 0}th,td{border:1px solid #d0d7de;padding:.2rem .4rem;text-align:left;vertical-align:top}
.m{display:inline-block;min-width:3.6rem;font-weight:700}.get{color:#0969da}.post{color:#1a7f37}.put,.patch{color:#9a6700}.delete{color:#cf222e}.head{color:#6e7781}
nav a{margin-right:1rem}`;

const STYLE_HASH = createHash("sha256").update(STYLE).digest("base64");

/** The page's CSP: nothing but its own inline style. */
export const contentSecurityPolicy = `default-src 'none'; style-src 'sha256-${STYLE_HASH}'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`;

type Operation = {
  summary?: string;
  parameters?: { name: string; in: string; required?: boolean; schema?: unknown }[];
  requestBody?: { content: Record<string, { schema: unknown }> };
  responses: Record<string, { content?: Record<string, { schema: unknown }> }>;
};

const METHODS = ["get", "head", "post", "put", "patch", "delete"];

function typeOf(schema: unknown): string {
  if (schema === null || typeof schema !== "object") return "";
  const s = schema as Record<string, unknown>;
  if ("const" in s) return JSON.stringify(s.const);
  if (typeof s.$ref === "string") return s.$ref.split("/").pop() ?? "";
  if (Array.isArray(s.oneOf)) return (s.oneOf as unknown[]).map(typeOf).join(" or ");
  if (Array.isArray(s.enum)) return (s.enum as unknown[]).map(String).join(" | ");
  if (Array.isArray(s.anyOf)) return (s.anyOf as unknown[]).map(typeOf).join(" or ");
  const type = Array.isArray(s.type) ? (s.type as string[]).join(" | ") : String(s.type ?? "any");
  return s.format ? `${type} (${String(s.format)})` : type;
}

function fields(schema: unknown): string {
  const s = (schema ?? {}) as { properties?: Record<string, unknown>; required?: string[] };
  const open = (schema as { "x-loose"?: boolean } | null)?.["x-loose"] === true;
  const rows = Object.entries(s.properties ?? {}).map(
    ([name, prop]) =>
      `<tr><td><code>${escape(name)}</code></td><td>${escape(typeOf(prop))}</td><td>${s.required?.includes(name) ? "required" : ""}</td></tr>`,
  );
  if (open) rows.push(`<tr><td colspan="3"><em>Described loosely: other fields may appear.</em></td></tr>`);
  return rows.length ? `<table><tr><th>Field</th><th>Type</th><th></th></tr>${rows.join("")}</table>` : "";
}

function operationHtml(path: string, method: string, op: Operation): string {
  const params = (op.parameters ?? []).map(
    (p) =>
      `<tr><td><code>${escape(p.name)}</code></td><td>${p.in}</td><td>${escape(typeOf(p.schema))}</td><td>${p.required ? "required" : ""}</td></tr>`,
  );
  const body = op.requestBody ? Object.values(op.requestBody.content)[0]?.schema : undefined;
  // Answers that share a schema (the refusals) share one row.
  const rows = new Map<string, string[]>();
  for (const [status, r] of Object.entries(op.responses)) {
    const schema = r.content ? Object.values(r.content)[0]?.schema : undefined;
    const ref = (schema as { $ref?: string } | undefined)?.$ref;
    const cell = ref
      ? `${escape(ref.split("/").pop() ?? "")}: <code>reason</code> names it (see Reasons)`
      : fields(schema) || escape(Object.keys(r.content ?? {})[0] ?? "no body");
    rows.set(cell, [...(rows.get(cell) ?? []), status]);
  }
  const statuses = [...rows].map(([cell, codes]) => `<tr><td>${codes.join(", ")}</td><td>${cell}</td></tr>`);
  return `<h3 id="${escape(`${method}-${path}`)}"><span class="m ${method}">${method.toUpperCase()}</span> <code>${escape(path)}</code></h3>
${op.summary ? `<p>${escape(op.summary)}</p>` : ""}
${params.length ? `<table><tr><th>Parameter</th><th>In</th><th>Type</th><th></th></tr>${params.join("")}</table>` : ""}
${body ? `<p>Body</p>${fields(body)}` : ""}
<table><tr><th>Status</th><th>Answer</th></tr>${statuses.join("")}</table>`;
}

function documentHtml(id: string, doc: OpenApiDocument): string {
  const info = doc.info as { title: string; description?: string };
  const parts: string[] = [`<h2 id="${id}">${escape(info.title)}</h2>`, info.description ? `<p>${escape(info.description)}</p>` : ""];
  for (const [path, item] of Object.entries(doc.paths)) {
    if ("$ref" in item) {
      parts.push(`<p><code>${escape(path)}</code>: the same as <code>${escape(`${path}.php`)}</code>.</p>`);
      continue;
    }
    for (const method of METHODS) if (item[method]) parts.push(operationHtml(path, method, item[method] as Operation));
  }
  return parts.join("\n");
}

export function referenceHtml(publicDoc: OpenApiDocument, adminDoc: OpenApiDocument, siteUrl: string): string {
  const reasons = Object.entries(REASONS).map(
    ([name, r]) =>
      `<tr><td><code>${name}</code></td><td>${r.status}</td><td>${r.counts ? "yes" : "no"}</td><td>${escape(r.message)}</td></tr>`,
  );
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>Access gateway API reference</title><style>${STYLE}</style></head>
<body><h1>Access gateway API reference</h1>
<nav><a href="#public">Public API</a><a href="#admin">Admin API</a><a href="#reasons">Reasons</a></nav>
<p>Generated from the OpenAPI 3.1 documents <a href="${escape(siteUrl)}/api/v1/openapi.json">/api/v1/openapi.json</a> and <a href="${escape(siteUrl)}/admin/v1/openapi.json">/admin/v1/openapi.json</a>.</p>
${documentHtml("public", publicDoc)}
${documentHtml("admin", adminDoc)}
<h2 id="reasons">Reasons</h2>
<p>Every refusal carries one of these in <code>reason</code>; the admin API also names a field (<code>bad_&lt;field&gt;</code>, <code>missing_&lt;field&gt;</code>, status 400).</p>
<table><tr><th>reason</th><th>Status</th><th>Counts against the allowance</th><th>Message</th></tr>${reasons.join("")}</table>
</body></html>
`;
}
