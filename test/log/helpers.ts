// Shared test helpers for the log tests.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isQuartetError, type CoreErrorCode } from '../../src/base/errors.js';
import { encodeNeutralBatch } from '../../src/log/neutral-format.js';
import { defaultLogConfig, type AppendRequest, type LogConfig } from '../../src/log/types.js';

/** A small config: tiny segments and index intervals so tests cross every boundary. */
export function testConfig(overrides: Partial<LogConfig> = {}): LogConfig {
  return {
    ...defaultLogConfig,
    segmentBytes: 4096,
    indexIntervalBytes: 256,
    retentionMs: -1,
    segmentMs: 0,
    maxBatchBytes: 64 * 1024,
    ...overrides,
  };
}

/** A neutral batch of `count` records whose values are `${tag}-${i}`. */
export function batch(tag: string, count = 1, timestamp = 1_000, key: string | null = null): AppendRequest {
  return encodeNeutralBatch(
    Array.from({ length: count }, (_, i) => ({ key, value: `${tag}-${i}` })),
    { timestamp },
  );
}

export async function rejectsWith(promise: Promise<unknown>, code: CoreErrorCode): Promise<void> {
  await assert.rejects(promise, (error: unknown) => {
    assert.ok(isQuartetError(error), `expected a QuartetError, got ${String(error)}`);
    assert.equal(error.code, code);
    return true;
  });
}

export function tempDir(prefix = 'quartet-log-'): { path: string; remove: () => void } {
  const path = mkdtempSync(join(tmpdir(), prefix));
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}
