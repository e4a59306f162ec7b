import { readFileSync } from "node:fs";
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { adminDocument, publicDocument, type OpenApiDocument } from "../../ingress/openapi/document.js";

/**
 * Two checks of the OpenAPI documents (docs/api.md): each document against the official
 * OpenAPI 3.1 schema (test/fixtures/openapi, schema-base: Schema Objects are checked
 * against the OAS dialect too), and each answer the test helper receives against the
 * document for its path, method and status.
 */

const fixture = (name: string) => JSON.parse(readFileSync(new URL(`../fixtures/openapi/${name}`, import.meta.url), "utf8")) as object;

/** The official meta-schema validator: the errors of `doc`, or null when it is a valid OpenAPI 3.1 document. */
export function openApiErrors(doc: object): string | null {
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
  addFormats.default(ajv);
  ajv.addFormat("media-range", true);
  for (const name of ["oas-3.1-meta-base.schema.json", "oas-3.1-dialect-base.schema.json"]) ajv.addSchema(fixture(name));
  // ajv resolves the document schema's `$dynamicRef: "#meta"` to the innermost anchor (it
  // then checked a parameter's schema as a parameter); bound statically to what the
  // dynamic scope of schema-base names: a Schema Object in the OAS dialect.
  const staticMeta = readFileSync(new URL("../fixtures/openapi/oas-3.1-schema.json", import.meta.url), "utf8").replaceAll(
    '"$dynamicRef": "#meta"',
    `"$ref": "${SCHEMA_BASE}#/$defs/schema"`,
  );
  ajv.addSchema(JSON.parse(staticMeta) as object);
  const validate = ajv.compile(fixture("oas-3.1-schema-base.json"));
  return validate(doc) ? null : ajv.errorsText(validate.errors, { separator: "\n" });
}

const SCHEMA_BASE = "https://spec.openapis.org/oas/3.1/schema-base/2022-10-07";

type PathItem = Record<string, unknown>;

const pointer = (...parts: string[]) => parts.map((p) => p.replaceAll("~", "~0").replaceAll("/", "~1")).join("/");

/** Checks answers against both documents; `check` returns a description of the mismatch or null. */
export function answerChecker(siteUrl: string) {
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
  const documents: [string, OpenApiDocument][] = [
    ["public", publicDocument(siteUrl)],
    ["admin", adminDocument(siteUrl)],
  ];
  for (const [id, doc] of documents) ajv.addSchema(doc, id);
  const compiled = new Map<string, ValidateFunction>();
  const schemaAt = (ref: string) => {
    let validate = compiled.get(ref);
    if (!validate) {
      validate = ajv.compile({ $ref: ref });
      compiled.set(ref, validate);
    }
    return validate;
  };

  const find = (path: string): { id: string; template: string; item: PathItem } | null => {
    for (const [id, doc] of documents) {
      for (const [template, raw] of Object.entries(doc.paths)) {
        const pattern = new RegExp(`^${template.replace(/[.]/g, "\\.").replace(/\{[a-z_]+\}/g, "[^/]+")}$`);
        if (!pattern.test(path)) continue;
        const ref = (raw as { $ref?: string }).$ref;
        const resolved = ref ? ref.slice("#/paths/".length).replaceAll("~1", "/").replaceAll("~0", "~") : template;
        return { id, template: resolved, item: doc.paths[resolved] };
      }
    }
    return null;
  };

  return function check(method: string, path: string, status: number, body: unknown, contentType: string): string | null {
    if (method === "OPTIONS") return null;
    const bare = path.split("?")[0].replace(/\/+$/, "") || "/";
    const found = find(bare);
    const refusalRef = bare.startsWith("/admin/v1/") ? "admin#/components/schemas/AdminRefusal" : "public#/components/schemas/Refusal";
    // Outside both documents (the status page, /healthz, /botcheck.js, routes outside the
    // admin route table): only the 404 and 405 refusals of an API path are described.
    if (!found && !((bare.startsWith("/api/v1/") || bare.startsWith("/admin/v1/")) && (status === 404 || status === 405))) return null;
    let ref: string;
    const operation = found?.item[method.toLowerCase() === "head" && !found.item.head ? "get" : method.toLowerCase()] as
      | { responses: Record<string, { content?: Record<string, unknown> }> }
      | undefined;
    if (!found || !operation) {
      ref = refusalRef;
    } else {
      const response = operation.responses[String(status)];
      if (!response) return `${method} ${found.template}: status ${status} is not in the document`;
      const media = Object.keys(response.content ?? {})[0];
      if (media !== "application/json") return null;
      ref = `${found.id}#/${pointer("paths", found.template, method.toLowerCase() === "head" && !found.item.head ? "get" : method.toLowerCase(), "responses", String(status), "content", "application/json", "schema")}`;
    }
    if (method === "HEAD") return null;
    if (!contentType.includes("json"))
      return `${method} ${bare} ${status}: answered ${contentType || "no content type"}, the document says JSON`;
    const validate = schemaAt(ref);
    if (validate(body)) return null;
    return `${method} ${bare} ${status}: the answer does not match the document (${ref}): ${ajv.errorsText(validate.errors)}\n${JSON.stringify(body).slice(0, 600)}`;
  };
}
