import { Counter, type Registry } from "prom-client";
import type { EnforcerMetrics } from "../shared/verify/index.js";
import { PlainCounter, PlainHistogram } from "../shared/platform/metrics/plain.js";

/** What the HTTP layer counts (every request: plain numbers, exported on scrape), one child per label set kept by app.ts. */
export interface HttpMetrics {
  requests: PlainCounter<"endpoint" | "status" | "reason">;
  durations: PlainHistogram<"endpoint" | "reason">;
}

export interface IngressMetrics {
  http: HttpMetrics;
  enforcer: EnforcerMetrics;
  /** Snapshot rebuilds this process started. */
  rebuilds: Counter;
}

/** Every metric the ingress exports, created once at start and passed down typed. */
export function createIngressMetrics(registry: Registry): IngressMetrics {
  const registers = [registry];
  return {
    http: {
      durations: new PlainHistogram({
        name: "gateway_http_request_duration_seconds",
        help: "Time from a request's arrival to its answer, by endpoint and reason",
        labelNames: ["endpoint", "reason"],
        buckets: [0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1, 5, 30],
        registers,
      }),
      requests: new PlainCounter({
        name: "gateway_http_requests_total",
        help: "HTTP requests by endpoint, status and reason",
        labelNames: ["endpoint", "status", "reason"],
        registers,
      }),
    },
    enforcer: {
      scriptRuns: new Counter({
        name: "gateway_verify_script_runs_total",
        help: "Counting script runs (Redis round trips) made by verify",
        registers,
      }),
      countedCalls: new Counter({
        name: "gateway_verify_counted_calls_total",
        help: "Verify calls judged by the counting script",
        registers,
      }),
      snapshotLoads: new Counter({
        name: "gateway_snapshot_loads_total",
        help: "Key snapshot lookups that read Redis (a key not in the ingress's cache, or a reload after a stale answer)",
        registers,
      }),
    },
    rebuilds: new Counter({
      name: "gateway_snapshot_rebuilds_total",
      help: "Snapshot rebuilds this process started because Redis had lost the snapshots",
      registers,
    }),
  };
}
