import type { Counter, Histogram } from "prom-client";
import type { IngressDeps } from "./deps.js";
import { createRouter, type Handler } from "./router.js";
import { refuse } from "./reply.js";
import type { HttpReply, HttpRequest } from "./types.js";
import { healthz, metrics, getClock, moveClock } from "./system.js";
import { registerAdminRoutes } from "./admin/routes.js";
import { registerPublicRoutes, CORS_PATHS } from "./routes/index.js";

/**
 * The route table. Public endpoints answer under /api/v1/ both as `verify.php` and
 * `verify`; the admin API lives under /admin/v1/.
 */
export function buildApp(deps: IngressDeps) {
  const router = createRouter<IngressDeps>();
  const add = (method: string, path: string, handler: Handler<IngressDeps>) => router.add(method, path, handler);

  add("GET", "/healthz", healthz);
  add("GET", "/metrics", metrics);
  add("GET", "/admin/v1/clock", getClock);
  add("POST", "/admin/v1/clock", moveClock);
  registerAdminRoutes(add);
  registerPublicRoutes(add);

  const requests = deps.metrics.getSingleMetric("gateway_http_requests_total") as Counter<"endpoint" | "status" | "reason"> | undefined;
  const durations = deps.metrics.getSingleMetric("gateway_http_request_duration_seconds") as Histogram<"endpoint" | "reason"> | undefined;
  // prom-client hashes a labels object on every call: keep one child per label set instead.
  const children = new Map<string, { inc(): void; observe(seconds: number): void }>();
  const count = (endpoint: string, status: number, reason: string, startedNs: bigint) => {
    if (!requests || !durations) return;
    const id = `${endpoint}|${status}|${reason}`;
    let child = children.get(id);
    if (!child) {
      const counter = requests.labels(endpoint, String(status), reason);
      const histogram = durations.labels(endpoint, reason);
      child = { inc: () => counter.inc(), observe: (seconds) => histogram.observe(seconds) };
      if (children.size < 10_000) children.set(id, child);
    }
    child.inc();
    child.observe(Number(process.hrtime.bigint() - startedNs) / 1e9);
  };

  return async function dispatch(request: HttpRequest): Promise<HttpReply> {
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
    let reply: HttpReply;
    if (match === null) reply = refuse("unknown_endpoint");
    else if (match === "method") reply = refuse("method_not_allowed");
    else reply = await match.handler(request, deps, match.params);
    const body = reply.body as { reason?: unknown } | null;
    const reason = body !== null && typeof body === "object" && typeof body.reason === "string" ? body.reason : reply.status < 400 ? "ok" : "other";
    count(match && match !== "method" ? endpointLabel(path) : "unknown", reply.status, reason, request.startedNs);
    return reply;
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
  const last = path.split("/").pop() ?? "";
  return last.replace(/\.php$/, "") || "root";
}
