import type { Registry } from "prom-client";

/**
 * Labelled counters and histograms for the request path, counted in plain numbers and
 * turned into Prometheus values only when scraped. prom-client validates and hashes the
 * label set on every `inc`/`observe`, even through a child from `labels()`: measured at
 * about 7% of an in-process verify. Here a caller keeps the child of its label set (one
 * Map lookup) and a call adds to numbers. Registered in a prom-client Registry like any
 * metric (the registry only needs `name`, `get()` and the aggregator for merging processes).
 */

type Labels = Record<string, string>;

interface MetricValue {
  labels: Record<string, string | number>;
  value: number;
  metricName?: string;
}

interface Exported {
  name: string;
  help: string;
  type: "counter" | "histogram";
  values: MetricValue[];
  aggregator: "sum";
}

interface Definition<L extends string> {
  name: string;
  help: string;
  labelNames: readonly L[];
  registers: readonly Registry[];
}

function labelsOf<L extends string>(names: readonly L[], values: readonly string[]): Labels {
  if (values.length !== names.length) throw new Error(`expected ${names.length} label values, got ${values.length}`);
  return Object.fromEntries(names.map((name, i) => [name, values[i]]));
}

function register(metric: { name: string }, registers: readonly Registry[]): void {
  for (const registry of registers) registry.registerMetric(metric as unknown as Parameters<Registry["registerMetric"]>[0]);
}

export interface PlainCounterChild {
  inc(by?: number): void;
}

export class PlainCounter<L extends string> {
  readonly name: string;
  readonly help: string;
  readonly type = "counter";
  readonly aggregator = "sum";
  private readonly children = new Map<string, { labels: Labels; value: number; inc(by?: number): void }>();

  constructor(private readonly definition: Definition<L>) {
    this.name = definition.name;
    this.help = definition.help;
    register(this, definition.registers);
  }

  /** The child of one label set (the same one each time): keep it, its `inc` is one addition. */
  labels(...values: string[]): PlainCounterChild {
    const id = values.join("\u0000");
    const known = this.children.get(id);
    if (known) return known;
    const child = {
      labels: labelsOf(this.definition.labelNames, values),
      value: 0,
      inc(by = 1) {
        child.value += by;
      },
    };
    this.children.set(id, child);
    return child;
  }

  async get(): Promise<Exported> {
    const values = [...this.children.values()].map((child) => ({ labels: { ...child.labels }, value: child.value }));
    return { name: this.name, help: this.help, type: "counter", values, aggregator: "sum" };
  }
}

export interface PlainHistogramChild {
  observe(value: number): void;
}

interface HistogramChild extends PlainHistogramChild {
  labels: Labels;
  /** Per bucket (not cumulative), the last one past every bound. */
  counts: Float64Array;
  sum: number;
  count: number;
}

export class PlainHistogram<L extends string> {
  readonly name: string;
  readonly help: string;
  readonly type = "histogram";
  readonly aggregator = "sum";
  private readonly bounds: readonly number[];
  private readonly children = new Map<string, HistogramChild>();

  constructor(private readonly definition: Definition<L> & { buckets: readonly number[] }) {
    this.name = definition.name;
    this.help = definition.help;
    this.bounds = [...definition.buckets].sort((a, b) => a - b);
    register(this, definition.registers);
  }

  /** The child of one label set (the same one each time): keep it, its `observe` adds to numbers. */
  labels(...values: string[]): PlainHistogramChild {
    const id = values.join("\u0000");
    const known = this.children.get(id);
    if (known) return known;
    const bounds = this.bounds;
    const child: HistogramChild = {
      labels: labelsOf(this.definition.labelNames, values),
      counts: new Float64Array(bounds.length + 1),
      sum: 0,
      count: 0,
      observe(value) {
        let i = 0;
        while (i < bounds.length && value > bounds[i]) i++;
        child.counts[i]++;
        child.sum += value;
        child.count++;
      },
    };
    this.children.set(id, child);
    return child;
  }

  async get(): Promise<Exported> {
    const values: MetricValue[] = [];
    for (const { labels, counts, sum, count } of this.children.values()) {
      let cumulative = 0;
      this.bounds.forEach((bound, i) => {
        cumulative += counts[i];
        values.push({ labels: { ...labels, le: bound }, value: cumulative, metricName: `${this.name}_bucket` });
      });
      values.push({ labels: { ...labels, le: "+Inf" }, value: count, metricName: `${this.name}_bucket` });
      values.push({ labels: { ...labels }, value: sum, metricName: `${this.name}_sum` });
      values.push({ labels: { ...labels }, value: count, metricName: `${this.name}_count` });
    }
    return { name: this.name, help: this.help, type: "histogram", values, aggregator: "sum" };
  }
}
