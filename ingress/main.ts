import { Counter, Histogram, Registry, collectDefaultMetrics } from "prom-client";
import type { Context } from "../shared/context.js";
import { createSnapshotCache } from "../shared/snapshots/cache.js";
import { createProjector, watchSnapshots } from "../shared/snapshots/projector.js";
import { buildApp } from "./app.js";
import type { IngressDeps } from "./deps.js";
import { listen } from "./http.js";
import { registerStreamMetrics } from "./stream-metrics.js";

export interface RunningIngress {
  port: number;
  deps: IngressDeps;
  stop(): Promise<void>;
}

export async function startIngress(ctx: Context): Promise<RunningIngress> {
  const metrics = new Registry();
  collectDefaultMetrics({ register: metrics });
  new Histogram({
    name: "gateway_http_request_duration_seconds",
    help: "Time from a request's arrival to its answer, by endpoint and reason",
    labelNames: ["endpoint", "reason"],
    buckets: [0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1, 5, 30],
    registers: [metrics],
  });
  new Counter({
    name: "gateway_http_requests_total",
    help: "HTTP requests by endpoint, status and reason",
    labelNames: ["endpoint", "status", "reason"],
    registers: [metrics],
  });
  registerStreamMetrics(metrics, ctx.redis, ctx.keys);
  const projector = createProjector(ctx);
  const snapshots = createSnapshotCache(ctx.redis, ctx.keys);
  await snapshots.subscribe();
  const watcher = watchSnapshots({ ...ctx, projector });
  let port = ctx.config.port;
  const deps: IngressDeps = {
    ...ctx,
    projector,
    snapshots,
    metrics,
    baseUrl: () => `${siteUrl()}/api/v1`,
  };
  // With PORT=0 the site URL default names the port chosen at listen time.
  const siteUrl = () => (ctx.config.siteUrl.endsWith(":0") ? ctx.config.siteUrl.replace(/:0$/, `:${port}`) : ctx.config.siteUrl);
  const server = await listen({ host: ctx.config.host, port, dispatch: buildApp(deps), clock: ctx.clock, logger: ctx.logger });
  port = server.port;
  return {
    port,
    deps,
    async stop() {
      server.close();
      watcher.stop();
      snapshots.close();
    },
  };
}
