import { AggregatorRegistry, Histogram, Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { PlainCounter, PlainHistogram } from "../../../../shared/platform/metrics/plain.js";

/** Plain-number metrics must export exactly what prom-client's own would (label order aside). */

/** Prometheus text with each line's labels in name order. */
const normalized = (text: string) =>
  text
    .split("\n")
    .map((line) => line.replace(/\{([^}]*)\}/, (_, labels: string) => `{${labels.split(",").sort().join(",")}}`))
    .sort();

describe("plain counters and histograms", () => {
  it("export the same text as prom-client's histogram for the same observations", async () => {
    const plainRegistry = new Registry();
    const promRegistry = new Registry();
    const definition = { name: "t_seconds", help: "test", labelNames: ["endpoint", "reason"] as const, buckets: [0.001, 0.01, 0.1] };
    const plain = new PlainHistogram({ ...definition, registers: [plainRegistry] });
    const prom = new Histogram({ ...definition, labelNames: [...definition.labelNames], registers: [promRegistry] });
    for (const [labels, value] of [
      [["verify", "ok"], 0.0005],
      [["verify", "ok"], 0.001],
      [["verify", "ok"], 0.05],
      [["verify", "ok"], 3],
      [["scan", "ok"], 0.02],
    ] as const) {
      plain.labels(...labels).observe(value);
      prom.labels(...labels).observe(value);
    }
    expect(normalized(await plainRegistry.metrics())).toEqual(normalized(await promRegistry.metrics()));
  });

  it("keep one child per label set and add up across processes like prom-client's", async () => {
    const registry = new Registry();
    const counter = new PlainCounter({ name: "t_total", help: "test", labelNames: ["endpoint", "status"], registers: [registry] });
    counter.labels("verify", "200").inc();
    counter.labels("verify", "200").inc(2);
    counter.labels("verify", "429").inc();
    expect(await registry.metrics()).toBe(
      '# HELP t_total test\n# TYPE t_total counter\nt_total{endpoint="verify",status="200"} 3\nt_total{endpoint="verify",status="429"} 1\n',
    );
    const json = await registry.getMetricsAsJSON();
    const merged = AggregatorRegistry.aggregate([json, json] as Parameters<typeof AggregatorRegistry.aggregate>[0]);
    expect(await merged.metrics()).toContain('t_total{endpoint="verify",status="200"} 6');
    expect(() => counter.labels("verify")).toThrow(/label values/);
  });
});
