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
  const add = (method: string, pattern: string, handler: Handler<D>) => {
    routes.push({ method, segments: pattern.split("/").filter(Boolean), handler });
  };
  const match = (method: string, path: string): { handler: Handler<D>; params: RouteParams } | "method" | null => {
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

export type Router<D> = ReturnType<typeof createRouter<D>>;
