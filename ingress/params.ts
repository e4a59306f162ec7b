import type { HttpRequest } from "./types.js";

export type Params = Record<string, unknown>;

const OPEN_BRACE = 0x7b;

/** Buffer's own UTF-8 decoder: toString("utf8") without its argument checks (not in @types/node). */
type Utf8Slicer = { utf8Slice(start: number, end: number): string };

/**
 * Public endpoints take their parameters from the query string and the body, JSON or
 * form-encoded, read without trusting the declared content type (interface.md section 1).
 * Body fields win over query fields of the same name. Returns null for a body that is
 * neither (a malformed request).
 */
export function readParams(request: HttpRequest): Params | null {
  const body = request.body;
  // A body that starts with "{" is JSON as it is (JSON.parse allows the whitespace trim() would remove).
  // Buffer's own decoder: toString's argument handling costs as much as decoding a verify body.
  const text =
    body.length === 0
      ? ""
      : body[0] === OPEN_BRACE
        ? (body as unknown as Utf8Slicer).utf8Slice(0, body.length)
        : body.toString("utf8").trim();
  if (text.startsWith("{")) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      return null;
    }
    if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) return null;
    // The common case of the hot path (a JSON body, no query): use the parsed object as
    // it is. JSON.parse makes "__proto__" an own data property, never a prototype.
    if (request.query === "") return parsed as Params;
    const params = fromQuery(request.query);
    for (const [name, value] of Object.entries(parsed)) {
      if (name === "__proto__") continue;
      params[name] = value;
    }
    return params;
  }
  if (text.startsWith("[")) return null;
  const params = fromQuery(request.query);
  if (text !== "") for (const [name, value] of new URLSearchParams(text)) params[name] = value;
  return params;
}

function fromQuery(query: string): Params {
  const params: Params = Object.create(null);
  if (query !== "") for (const [name, value] of new URLSearchParams(query)) params[name] = value;
  return params;
}

/** The admin API reads JSON only. */
export function readJson(request: HttpRequest): Params | null {
  const text = request.body.toString("utf8").trim();
  if (text === "") return Object.create(null) as Params;
  try {
    const parsed: unknown = JSON.parse(text);
    if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) return null;
    return parsed as Params;
  } catch {
    return null;
  }
}

/** A parameter as a string, or undefined when absent or empty-and-optional. */
export function str(params: Params, name: string): string | undefined {
  const value = params[name];
  if (typeof value === "string") return value;
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  return undefined;
}
