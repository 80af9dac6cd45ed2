// npm run bench: every benchmark, each printing its figures next to a baseline from the same run.
// `npm run bench -- log` runs only the named ones.
import { readFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { runCursusBench } from './cursus.js';
import { runFelixBench } from './felix.js';
import { runIggyBench } from './iggy.js';
import { runKafkaBench } from './kafka.js';
import { runLogBench } from './log.js';
import { runProduceGcBench } from './produce-gc.js';
import { runQuicBench } from './quic.js';
import { runRecompressBench } from './recompress.js';
import { runSlowConsumersBench } from './slow-consumers.js';
import { runStallsBench } from './stalls.js';
import { nativeStatus } from '../src/base/native.js';

const benches: Record<string, () => Promise<void>> = {
  log: runLogBench,
  kafka: runKafkaBench,
  iggy: runIggyBench,
  quic: runQuicBench,
  cursus: runCursusBench,
  felix: runFelixBench,
  'slow-consumers': runSlowConsumersBench,
  stalls: runStallsBench,
  recompress: runRecompressBench,
  'produce-gc': runProduceGcBench,
};

const wanted = process.argv.slice(2);
console.log(`# Quartet benchmarks — ${new Date().toISOString()}`);
console.log(`node ${process.version}, ${cpus().length} x ${cpus()[0]?.model ?? 'cpu'}, ${Math.round(totalmem() / 2 ** 30)} GiB`);
console.log(
  nativeStatus.loaded
    ? `native checksum addon: loaded (sse4.2 ${nativeStatus.sse42 ? 'yes' : 'no'}, avx2 ${nativeStatus.avx2 ? 'yes' : 'no'}, vpclmulqdq ${nativeStatus.vpclmul ? 'yes' : 'no'})`
    : `native checksum addon: NOT loaded (${nativeStatus.reason ?? 'unknown'}); CRC32C and XXH3 use the slower @node-rs fallbacks`,
);
/**
 * Memory the guest has handed back to its host (free page reporting, where the kernel exposes the
 * count): a page-cache or socket page allocated from it costs a host fault on first touch, which
 * made plain `write()`s 8x slower on the benchmark machine (docs/benchmarks.md).
 */
function reportedKib(): number | null {
  try {
    return Number(readFileSync('/sys/module/page_reporting/parameters/reported_kib', 'utf8'));
  } catch {
    return null;
  }
}

const reportedBefore = reportedKib();
for (const [name, run] of Object.entries(benches)) {
  if (wanted.length > 0 && !wanted.includes(name)) continue;
  await run();
}
const reportedAfter = reportedKib();
if (reportedBefore !== null && reportedAfter !== null) {
  console.log(`\nfree page reporting: ${Math.round((reportedAfter - reportedBefore) / 1024)} MiB handed back to the host during the run`);
}
