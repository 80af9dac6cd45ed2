// Process metrics for /metrics: CPU seconds, memory, event-loop delay (perf_hooks
// monitorEventLoopDelay) and garbage collection (a PerformanceObserver on 'gc' entries), with the
// names the Prometheus Node.js clients use, so that existing dashboards read them. CPU, memory and
// the delay percentiles are read at scrape time; GC pauses are counted as they happen (rare).

import { constants, monitorEventLoopDelay, PerformanceObserver, type PerformanceEntry } from 'node:perf_hooks';
import type { MetricsRegistry } from '../core/metrics.js';

/** Resolution of the event-loop delay sampler. */
export const EVENT_LOOP_SAMPLE_MS = 20;

const gcKinds: Record<number, string> = {
  [constants.NODE_PERFORMANCE_GC_MAJOR]: 'major',
  [constants.NODE_PERFORMANCE_GC_MINOR]: 'minor',
  [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental',
  [constants.NODE_PERFORMANCE_GC_WEAKCB]: 'weakcb',
};

/** Starts the samplers and registers the collector; returns the function that stops both. */
export function registerProcessMetrics(metrics: MetricsRegistry): () => void {
  const cpuUser = metrics.gauge('process_cpu_user_seconds_total', 'User CPU time spent by the process, in seconds');
  const cpuSystem = metrics.gauge('process_cpu_system_seconds_total', 'System CPU time spent by the process, in seconds');
  const rss = metrics.gauge('process_resident_memory_bytes', 'Resident memory size, in bytes');
  const heapUsed = metrics.gauge('nodejs_heap_size_used_bytes', 'V8 heap in use, in bytes');
  const heapTotal = metrics.gauge('nodejs_heap_size_total_bytes', 'V8 heap allocated, in bytes');
  const external = metrics.gauge('nodejs_external_memory_bytes', 'Memory of C++ objects bound to JavaScript (Buffers included), in bytes');
  const delay = metrics.gauge('nodejs_eventloop_lag_seconds', 'Event-loop delay since the previous scrape, by quantile (0.5, 0.99) and max, in seconds');
  const gc = metrics.histogram('nodejs_gc_duration_seconds', 'Garbage collection pauses by kind, in seconds', [0.001, 0.01, 0.1, 1, 2, 5]);

  const histogram = monitorEventLoopDelay({ resolution: EVENT_LOOP_SAMPLE_MS });
  histogram.enable();
  const gcLabels = new Map<string, { kind: string }>();
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      const kind = gcKinds[gcKindOf(entry)] ?? 'other';
      let labels = gcLabels.get(kind);
      if (labels === undefined) gcLabels.set(kind, (labels = { kind }));
      gc.observe(labels, entry.duration / 1000);
    }
  });
  observer.observe({ entryTypes: ['gc'] });

  const stopCollecting = metrics.onCollect(() => {
    const cpu = process.cpuUsage();
    cpuUser.set({}, cpu.user / 1e6);
    cpuSystem.set({}, cpu.system / 1e6);
    const memory = process.memoryUsage();
    rss.set({}, memory.rss);
    heapUsed.set({}, memory.heapUsed);
    heapTotal.set({}, memory.heapTotal);
    external.set({}, memory.external);
    // The histogram is in ns; it starts over at every scrape, so each figure covers one interval.
    const seconds = (ns: number): number => (Number.isFinite(ns) ? ns / 1e9 : 0);
    delay.set({ quantile: '0.5' }, seconds(histogram.percentile(50)));
    delay.set({ quantile: '0.99' }, seconds(histogram.percentile(99)));
    delay.set({ quantile: 'max' }, seconds(histogram.max));
    histogram.reset();
  });
  return () => {
    stopCollecting();
    histogram.disable();
    observer.disconnect();
  };
}

/** The GC kind of a 'gc' entry (entry.detail.kind on Node 16+). */
function gcKindOf(entry: PerformanceEntry): number {
  const detail = (entry as PerformanceEntry & { detail?: { kind?: number } | null }).detail;
  return detail?.kind ?? -1;
}
