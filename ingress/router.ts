import type { HttpReply, HttpRequest, RouteParams } from "./types.js";

export type Handler<D> = (request: HttpRequest, deps: D, params: RouteParams) => Promise<HttpReply> | HttpReply;

interface Route<D> {
  method: string;
  segments: string[];
  handler: Handler<D>;
}

/**
 * A small table router: exact segments and `:name` captures. Routes are matched in
 * registration order; a path that matches with another method gives 405.
 */
export function createRouter<D>() {
  const routes: Route<D>[] = [];
  // Paths without captures (every public endpoint) are found by one map lookup.
  const exact = new Map<string, Map<string, Handler<D>>>();
  const noParams: RouteParams = Object.freeze({});
  const add = (method: string, pattern: string, handler: Handler<D>) => {
    const segments = pattern.split("/").filter(Boolean);
    routes.push({ method, segments, handler });
    if (!segments.some((s) => s.startsWith(":"))) {
      const path = `/${segments.join("/")}`;
      const methods = exact.get(path) ?? new Map<string, Handler<D>>();
      if (!methods.has(method)) methods.set(method, handler);
      exact.set(path, methods);
    }
  };
  const match = (method: string, path: string): { handler: Handler<D>; params: RouteParams } | "method" | null => {
    const methods = exact.get(path);
    if (methods) {
      const handler = methods.get(method) ?? (method === "HEAD" ? methods.get("GET") : undefined) ?? methods.get("*");
      if (handler) return { handler, params: noParams };
    }
    const parts = path.split("/").filter(Boolean);
    let pathMatched = false;
    for (const route of routes) {
      if (route.segments.length !== parts.length) continue;
      const params: Record<string, string> = {};
      let ok = true;
      for (let i = 0; i < parts.length; i++) {
        const segment = route.segments[i];
        if (segment.startsWith(":")) {
          try {
            params[segment.slice(1)] = decodeURIComponent(parts[i]);
          } catch {
            ok = false;
            break;
          }
        } else if (segment !== parts[i]) {
          ok = false;
          break;
        }
      }
      if (!ok) continue;
      pathMatched = true;
      if (route.method === method || route.method === "*" || (method === "HEAD" && route.method === "GET")) {
        return { handler: route.handler, params };
      }
    }
    return pathMatched ? "method" : null;
  };
  return { add, match };
}
