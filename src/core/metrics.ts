// A small Prometheus registry: counters, gauges and histograms with labels, rendered in the text
// exposition format (version 0.0.4) by GET /metrics. Updates are O(1) map look-ups; nothing here
// allocates on the hot path once a labels object has been seen. Values that cost something to
// compute (consumer lag, disk bytes, process figures) are set by collectors run at scrape time.
// Hand-written rather than prom-client: the hot path keeps its per-object label keys (prom-client
// builds a key from the labels object on every inc), and there is no dependency to keep in step.

type Labels = Record<string, string>;

/**
 * Series keys of label objects already seen. Hot callers keep one labels object per series (a
 * partition's, a listener operation's) and pass it on every update, so the key is built once per
 * object, not on every append. Label objects must not be mutated after first use (a partition's
 * are replaced, not edited, on rename).
 */
const keyOfLabels = new WeakMap<Labels, string>();

function labelKey(labels: Labels): string {
  let key = keyOfLabels.get(labels);
  if (key === undefined) {
    key = Object.keys(labels)
      .sort()
      .map((k) => `${k}="${escapeLabel(labels[k]!)}"`)
      .join(',');
    keyOfLabels.set(labels, key);
  }
  return key;
}

function escapeLabel(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');
}

interface Metric {
  name: string;
  help: string;
  render(out: string[]): void;
}

export class Counter implements Metric {
  private readonly values = new Map<string, number>();
  constructor(
    readonly name: string,
    readonly help: string,
  ) {}
  inc(labels: Labels = {}, by = 1): void {
    const key = labelKey(labels);
    this.values.set(key, (this.values.get(key) ?? 0) + by);
  }
  get(labels: Labels = {}): number {
    return this.values.get(labelKey(labels)) ?? 0;
  }
  /** Drops the series (its subject is gone: a deleted partition). */
  remove(labels: Labels): void {
    this.values.delete(labelKey(labels));
  }
  render(out: string[]): void {
    out.push(`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} counter`);
    for (const [key, value] of this.values) out.push(`${this.name}${key ? `{${key}}` : ''} ${value}`);
  }
}

export class Gauge implements Metric {
  private readonly values = new Map<string, number>();
  constructor(
    readonly name: string,
    readonly help: string,
  ) {}
  set(labels: Labels, value: number): void {
    this.values.set(labelKey(labels), value);
  }
  inc(labels: Labels = {}, by = 1): void {
    const key = labelKey(labels);
    this.values.set(key, (this.values.get(key) ?? 0) + by);
  }
  dec(labels: Labels = {}, by = 1): void {
    this.inc(labels, -by);
  }
  get(labels: Labels = {}): number {
    return this.values.get(labelKey(labels)) ?? 0;
  }
  /** Drops the series (its subject is gone: a deleted partition). */
  remove(labels: Labels): void {
    this.values.delete(labelKey(labels));
  }
  /** Drops every series (a collector that sets them all again at each scrape). */
  clear(): void {
    this.values.clear();
  }
  render(out: string[]): void {
    out.push(`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} gauge`);
    for (const [key, value] of this.values) out.push(`${this.name}${key ? `{${key}}` : ''} ${value}`);
  }
}

/** Latency histogram in seconds, with fixed buckets. */
export class Histogram implements Metric {
  private readonly series = new Map<string, { counts: number[]; sum: number; count: number }>();
  constructor(
    readonly name: string,
    readonly help: string,
    readonly buckets: readonly number[] = [0.0001, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
  ) {}
  observe(labels: Labels, value: number): void {
    const key = labelKey(labels);
    let s = this.series.get(key);
    if (!s) {
      s = { counts: new Array<number>(this.buckets.length).fill(0), sum: 0, count: 0 };
      this.series.set(key, s);
    }
    for (let i = 0; i < this.buckets.length; i++) if (value <= this.buckets[i]!) s.counts[i]!++;
    s.sum += value;
    s.count++;
  }
  count(labels: Labels = {}): number {
    return this.series.get(labelKey(labels))?.count ?? 0;
  }
  render(out: string[]): void {
    out.push(`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} histogram`);
    for (const [key, s] of this.series) {
      const prefix = key ? `${key},` : '';
      this.buckets.forEach((b, i) => out.push(`${this.name}_bucket{${prefix}le="${b}"} ${s.counts[i]}`));
      out.push(`${this.name}_bucket{${prefix}le="+Inf"} ${s.count}`);
      out.push(`${this.name}_sum${key ? `{${key}}` : ''} ${s.sum}`);
      out.push(`${this.name}_count${key ? `{${key}}` : ''} ${s.count}`);
    }
  }
}

/** Sets metrics just before a scrape renders them; a collector that fails is skipped (and counted). */
export type MetricsCollector = () => void | Promise<void>;

export class MetricsRegistry {
  private readonly metrics = new Map<string, Metric>();
  private readonly collectors = new Set<MetricsCollector>();

  /** Runs `collector` before every scrape (collect()); returns the function that removes it. */
  onCollect(collector: MetricsCollector): () => void {
    this.collectors.add(collector);
    return () => void this.collectors.delete(collector);
  }

  /** Runs every collector (GET /metrics does, then render()). */
  async collect(): Promise<void> {
    for (const collector of [...this.collectors]) {
      try {
        await collector();
      } catch {
        this.counter('quartet_metrics_collector_errors_total', 'Scrape-time collectors that failed (their metrics keep their previous values)').inc();
      }
    }
  }

  counter(name: string, help: string): Counter {
    return this.register(name, () => new Counter(name, help), Counter);
  }
  gauge(name: string, help: string): Gauge {
    return this.register(name, () => new Gauge(name, help), Gauge);
  }
  histogram(name: string, help: string, buckets?: readonly number[]): Histogram {
    return this.register(name, () => new Histogram(name, help, buckets), Histogram);
  }

  /** The Prometheus text exposition of every metric. */
  render(): string {
    const out: string[] = [];
    for (const metric of this.metrics.values()) metric.render(out);
    return out.join('\n') + '\n';
  }

  private register<T extends Metric>(name: string, make: () => T, kind: abstract new (...args: never[]) => T): T {
    const existing = this.metrics.get(name);
    if (existing) {
      if (!(existing instanceof kind)) throw new Error(`metric ${name} registered with another type`);
      return existing;
    }
    const metric = make();
    this.metrics.set(name, metric);
    return metric;
  }
}
