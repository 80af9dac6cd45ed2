// Shared fixtures for the core tests: temp directories and stores.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Broker } from '../../src/core/broker.js';
import { SqliteMetadataStore } from '../../src/core/metadata-store.js';
import { FaultyFileSystem, fsError } from '../../src/log/fs.js';

export function tempDir(t: { after(fn: () => void): void }, prefix = 'quartet-core-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

export function memoryStore(): SqliteMetadataStore {
  return SqliteMetadataStore.open({ path: ':memory:' });
}

/** Cheap scrypt for tests: hashing cost is not what they check. */
export const testScryptCost = { N: 1024, r: 8, p: 1 };

/** A gate a held filesystem call waits at: open() lets it through, fail() makes it throw. */
export interface FsGate {
  /** Resolves once a call is waiting at the gate. */
  readonly reached: Promise<void>;
  open(): void;
  fail(error?: Error): void;
}

/**
 * A FaultyFileSystem whose next writev or fdatasync can be held at a gate: the append it belongs
 * to has its offset but is not written (or not synced) until the test opens or fails the gate.
 */
export class HeldFileSystem extends FaultyFileSystem {
  private writeGate: { gate: FsGate; arrived: () => void; passed: Promise<Error | null> } | null = null;
  private syncGate: { gate: FsGate; arrived: () => void; passed: Promise<Error | null> } | null = null;

  holdNextWrite(): FsGate {
    const held = makeGate();
    this.writeGate = held;
    return held.gate;
  }

  holdNextSync(): FsGate {
    const held = makeGate();
    this.syncGate = held;
    return held.gate;
  }

  override async writev(fd: number, buffers: readonly Buffer[], position: number): Promise<number> {
    const held = this.writeGate;
    this.writeGate = null;
    if (held) {
      held.arrived();
      const error = await held.passed;
      if (error) throw error;
    }
    return super.writev(fd, buffers, position);
  }

  override async fdatasync(fd: number): Promise<void> {
    const held = this.syncGate;
    this.syncGate = null;
    if (held) {
      held.arrived();
      const error = await held.passed;
      if (error) throw error;
    }
    return super.fdatasync(fd);
  }
}

function makeGate(): { gate: FsGate; arrived: () => void; passed: Promise<Error | null> } {
  let arrived!: () => void;
  const reached = new Promise<void>((resolve) => (arrived = resolve));
  let pass!: (error: Error | null) => void;
  const passed = new Promise<Error | null>((resolve) => (pass = resolve));
  return {
    gate: { reached, open: () => pass(null), fail: (error = fsError('EIO', 'injected failure at the gate')) => pass(error) },
    arrived,
    passed,
  };
}

/**
 * Holds the broker's next purge (Broker.purgeTopic) at its first step, deleting the topic's offsets,
 * until release(): requests racing it then surely arrive while it runs.
 */
export function holdPurgeStart(broker: Broker): { inPurge: Promise<void>; release(): void } {
  const deleteTopic = broker.offsets.deleteTopic.bind(broker.offsets);
  let entered!: () => void;
  const inPurge = new Promise<void>((resolve) => (entered = resolve));
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let held = false;
  broker.offsets.deleteTopic = async (id: number) => {
    if (!held) {
      held = true;
      entered();
      await released;
    }
    return deleteTopic(id);
  };
  return { inPurge, release };
}
