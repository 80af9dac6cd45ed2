// A preload (`node --import ./bench/gc-window.mjs …`) that measures the garbage collection of the
// main thread of the process it is loaded into over a window the bench chooses, figures that do
// not depend on how loaded the machine is: the first SIGUSR2 opens the window (v8.GCProfiler),
// the second closes it and writes one line to stderr,
//
//   gc-window {"collections":N,"majors":N,"pauseMsTotal":x,"pauseMsMax":x,"heapMbAllocated":x,"loopDelayMsMax":x}
//
// `loopDelayMsMax` is the longest the main thread's event loop was held over the window
// (perf_hooks.monitorEventLoopDelay, 1 ms resolution): the broker's own stall, apart from how
// long the bench's client took to be scheduled and read the answer.
// `heapMbAllocated` is what the V8 heap grew by between collections (the bytes of JavaScript
// objects allocated; Buffers' memory lies outside it, and their allocation shows instead as
// major collections: V8 starts one as their total grows). Worker threads load it too (they
// inherit --import) and do nothing.
// Plain JavaScript: the bench's brokers run the compiled broker under plain node.

import { isMainThread } from 'node:worker_threads';
import { GCProfiler } from 'node:v8';
import { monitorEventLoopDelay } from 'node:perf_hooks';

if (isMainThread) {
  let profiler = null;
  let loop = null;
  process.on('SIGUSR2', () => {
    if (profiler === null) {
      profiler = new GCProfiler();
      profiler.start();
      loop = monitorEventLoopDelay({ resolution: 1 });
      loop.enable();
      return;
    }
    const { statistics } = profiler.stop();
    loop.disable();
    const loopDelayMsMax = Math.round(loop.max / 1e5) / 10;
    profiler = null;
    loop = null;
    process.stderr.write(`gc-window ${JSON.stringify({ ...summarize(statistics), loopDelayMsMax })}\n`);
  });
}

/** The window's collections summed up (GCProfiler's `cost` is in microseconds). */
function summarize(statistics) {
  let pauseUs = 0;
  let pauseUsMax = 0;
  let majors = 0;
  let heapAllocated = 0;
  let lastUsed = null;
  for (const s of statistics) {
    pauseUs += s.cost;
    pauseUsMax = Math.max(pauseUsMax, s.cost);
    if (s.gcType === 'MarkSweepCompact') majors++;
    if (lastUsed !== null) heapAllocated += Math.max(0, s.beforeGC.heapStatistics.usedHeapSize - lastUsed);
    lastUsed = s.afterGC.heapStatistics.usedHeapSize;
  }
  const mb = (n) => Math.round((n / 1e6) * 10) / 10;
  return {
    collections: statistics.length,
    majors,
    pauseMsTotal: Math.round(pauseUs / 100) / 10,
    pauseMsMax: Math.round(pauseUsMax / 100) / 10,
    heapMbAllocated: mb(heapAllocated),
  };
}
