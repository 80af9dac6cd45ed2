// Runs the deterministic simulation of the core (simulation.ts) over a set of seeds. A failing
// seed prints itself and replays exactly:
//   QUARTET_SIM_SEED=<n> node --import tsx --test test/simulation/core.test.ts
// QUARTET_SIM_SEEDS=<count> runs that many seeds from QUARTET_SIM_FIRST_SEED (default 1), a soak;
// QUARTET_SIM_STEPS=<n> sets the steps per seed, QUARTET_SIM_FAULT_PERCENT=<p> the share of steps
// run with a fault armed. docs/testing.md describes it.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Simulation } from './simulation.js';

const seedsDefault = 3;
const stepsDefault = 60;

function envInt(name: string): number | null {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return null;
  const n = Number(raw);
  if (!Number.isSafeInteger(n) || n < 0) throw new Error(`${name} must be a non-negative integer, got '${raw}'`);
  return n;
}

const one = envInt('QUARTET_SIM_SEED');
const count = envInt('QUARTET_SIM_SEEDS') ?? seedsDefault;
const first = envInt('QUARTET_SIM_FIRST_SEED') ?? 1;
const steps = envInt('QUARTET_SIM_STEPS') ?? stepsDefault;
/** Percent of steps run with a fault armed (default: the simulation's). */
const faultPercent = envInt('QUARTET_SIM_FAULT_PERCENT');
const faultRate = faultPercent === null ? {} : { faultRate: Math.min(faultPercent, 100) / 100 };
const seeds = one !== null ? [one] : Array.from({ length: count }, (_, i) => first + i);

test(`the core keeps its invariants under seeded workloads, faults and restarts (${seeds.length} seeds x ${steps} steps)`, { timeout: 60_000 + seeds.length * 30_000 }, async (t) => {
  for (const seed of seeds) {
    await t.test(`seed ${seed}`, async () => {
      const report = await new Simulation({ seed, steps, ...faultRate }).run();
      t.diagnostic(`seed ${seed}: ${report.recordsAcked} records acknowledged (${report.recordsCompacted} compacted away), ${report.faultsFired} faults fired, ${report.restarts} restarts, ${report.crashes} crashes`);
    });
  }
});

test('a seed replays exactly: the same steps, faults and answers', { timeout: 120_000 }, async () => {
  const seed = one ?? 3;
  const a = await new Simulation({ seed, steps: 25 }).run();
  const b = await new Simulation({ seed, steps: 25 }).run();
  assert.ok(a.faultsFired + a.restarts + a.crashes > 0, 'the run met a fault or a restart');
  assert.deepEqual(b, a);
});
