import type { PlainCounterChild, PlainHistogramChild } from "../shared/platform/metrics/plain.js";
import type { IngressDeps } from "./deps.js";
import { createRouter, type Handler } from "./router.js";
import { fault, refuse } from "./reply.js";
import { RequestGoneError, type HttpReply, type HttpRequest, type RouteParams } from "./types.js";
import { healthz, metrics } from "./system.js";
import { ADMIN_BASE } from "./admin/common.js";
import { registerAdminRoutes } from "./admin/routes.js";
import { registerAuthRoutes } from "./admin/auth/routes.js";
import { registerDashboardRoutes } from "./dashboard/pages.js";
import { registerPublicRoutes, CORS_PATHS } from "./routes/index.js";
import { apiDescriptionRoutes } from "./routes/openapi.js";
import { refundFault } from "./routes/refund.js";
import { registerDashboardSpa } from "./dashboard/spa.js";

/**
 * The route table. Public endpoints answer under /api/v1/ both as `verify.php` and
 * `verify`; the admin API lives under /admin/v1/.
 */
export function buildApp(deps: IngressDeps) {
  const router = createRouter<IngressDeps>();
  const add = (method: string, path: string, handler: Handler<IngressDeps>) => {
    // Every admin route goes through the admin route table, which declares who may call it.
    if (path.startsWith(ADMIN_BASE)) throw new Error(`${method} ${path}: admin routes are registered by admin/routes.ts only`);
    router.add(method, path, handler);
  };

  add("GET", "/healthz", healthz);
  // The admin API's description is no data (docs/api.md): readable without credentials, so
  // outside the admin route table, whose every route resolves and checks a caller.
  router.add("GET", `${ADMIN_BASE}/openapi.json`, apiDescriptionRoutes().adminOpenapi);
  registerAdminRoutes((method, path, handler) => router.add(method, path, handler));
  // The sign-in calls make sessions rather than need a principal: they check their own
  // credentials (a link, a passkey answer, the member's own session with CSRF), so they stay
  // outside the route table, confined to ADMIN_BASE/auth/.
  registerAuthRoutes((method, path, handler) => {
    if (!path.startsWith(`${ADMIN_BASE}/auth/`)) throw new Error(`${method} ${path}: sign-in routes live under ${ADMIN_BASE}/auth/`);
    router.add(method, path, handler);
  });
  registerDashboardRoutes(add);
  registerPublicRoutes(add);
  registerDashboardSpa(add);

  const { requests, durations } = deps.httpMetrics;
  // One pair of children per label set, found by endpoint, status and reason in turn: each
  // is a string the process already holds (its hash cached), where a joined label string
  // would be new on every call and hashed again.
  type Children = { counter: PlainCounterChild; histogram: PlainHistogramChild };
  const children = new Map<string, Map<number, Map<string, Children>>>();
  let held = 0;
  const count = (endpoint: string, status: number, reason: string, startedMs: number) => {
    let byStatus = children.get(endpoint);
    if (byStatus === undefined) children.set(endpoint, (byStatus = new Map()));
    let byReason = byStatus.get(status);
    if (byReason === undefined) byStatus.set(status, (byReason = new Map()));
    let child = byReason.get(reason);
    if (child === undefined) {
      child = { counter: requests.labels(endpoint, String(status), reason), histogram: durations.labels(endpoint, reason) };
      if (held < 10_000) {
        byReason.set(reason, child);
        held++;
      }
    }
    child.counter.inc();
    child.histogram.observe((performance.now() - startedMs) / 1000);
  };

  /**
   * The one route wrapper: whatever a route throws (Redis down, a script fault, a bug) is
   * logged and answered with the one generic fault (reply.ts `fault`), never a refusal. Its
   * reason: `internal_error` (500) for the operator API, where an admin change failed midway
   * (logs say where), and for a route that asks for it (`request.fault`, scan.php as
   * interface.md 8 says); `unavailable` (503) otherwise. CORS for the endpoints browsers read;
   * headers the route adds through `request.fault`.
   */
  function faulted(error: unknown, request: HttpRequest, path: string): Promise<HttpReply> | HttpReply {
    // A client gone before its address was read is no fault of ours (http.ts): nobody reads this answer.
    if (!(error instanceof RequestGoneError)) deps.logger.error({ err: error, requestId: request.requestId, path }, "route fault");
    const hook = request.fault;
    const reason = path.startsWith("/admin/") ? "internal_error" : hook?.reason;
    const cors = CORS_PATHS.includes(path) || CORS_PATHS.includes(`${path}.php`);
    if (hook?.headers === undefined) return fault(request.requestId, cors, { reason });
    const headers = hook.headers.bind(hook);
    return Promise.resolve()
      .then(headers)
      .catch(() => undefined)
      .then((extra) => fault(request.requestId, cors, { reason, headers: extra }));
  }

  /**
   * The route's answer, counted; a promise only when the route answers later (no promise of
   * its own per call, and one step for the fault and the count together).
   */
  function guarded(
    handler: Handler<IngressDeps>,
    request: HttpRequest,
    params: RouteParams,
    path: string,
    counted: (reply: HttpReply) => Promise<HttpReply> | HttpReply,
  ): Promise<HttpReply> | HttpReply {
    const answerFault = (error: unknown): Promise<HttpReply> | HttpReply => {
      const reply = faulted(error, request, path);
      return reply instanceof Promise ? reply.then(counted) : counted(reply);
    };
    let reply: Promise<HttpReply> | HttpReply;
    try {
      reply = handler(request, deps, params);
    } catch (error) {
      return answerFault(error);
    }
    return reply instanceof Promise ? reply.then(counted, answerFault) : counted(reply);
  }

  return function dispatch(request: HttpRequest): Promise<HttpReply> | HttpReply {
    const path = request.path.length > 1 && request.path.endsWith("/") ? request.path.replace(/\/+$/, "") : request.path;
    if (request.method === "OPTIONS") {
      const corsOk = CORS_PATHS.some((p) => path === p || path === p.replace(/\.php$/, ""));
      if (!corsOk) return refuse("method_not_allowed");
      return {
        status: 204,
        headers: {
          "access-control-allow-origin": "*",
          "access-control-allow-methods": "GET, POST, OPTIONS",
          "access-control-allow-headers": "content-type",
          "access-control-max-age": "600",
        },
        body: "",
      };
    }
    const match = router.match(request.method, path);
    const endpoint = match && match !== "method" ? endpointLabel(path) : "unknown";
    // Counted, and a fault (5xx) answered after the gate counted the call: the count is given
    // back before the answer goes out (routes/refund.ts), whichever route and however it failed.
    const counted = (reply: HttpReply): Promise<HttpReply> | HttpReply => {
      const body = reply.body as { reason?: unknown } | null;
      const reason =
        body !== null && typeof body === "object" && typeof body.reason === "string" ? body.reason : reply.status < 400 ? "ok" : "other";
      if (request.charged !== undefined && reply.status >= 500) {
        return refundFault(deps, request, reply).then(() => {
          count(endpoint, reply.status, reason, request.startedMs);
          return reply;
        });
      }
      count(endpoint, reply.status, reason, request.startedMs);
      return reply;
    };
    if (match === null) return counted(refuse("unknown_endpoint"));
    if (match === "method") return counted(refuse("method_not_allowed"));
    return guarded(match.handler, request, match.params, path, counted);
  };
}

/** The internal metrics listener: GET /metrics and nothing else. */
export function metricsOnly(deps: IngressDeps) {
  return (request: HttpRequest): Promise<HttpReply> | HttpReply => {
    if (request.path !== "/metrics") return refuse("unknown_endpoint");
    if (request.method !== "GET" && request.method !== "HEAD") return refuse("method_not_allowed");
    return metrics(request, deps);
  };
}

const labels = new Map<string, string>();

function endpointLabel(path: string): string {
  const known = labels.get(path);
  if (known !== undefined) return known;
  const label = computeLabel(path);
  if (labels.size < 1000) labels.set(path, label);
  return label;
}

function computeLabel(path: string): string {
  if (path.startsWith("/admin/")) return "admin";
  // Every dashboard address is one label: its paths name organizations, keys and domains.
  if (path === "/dashboard" || path.startsWith("/dashboard/")) return "dashboard";
  const last = path.split("/").pop() ?? "";
  return last.replace(/\.php$/, "") || "root";
}
