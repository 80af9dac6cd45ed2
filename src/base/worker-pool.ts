// A small fixed pool of worker threads that run named pure functions of modules given by URL
// (`run(moduleUrl, exportName, args)`), for work too long for the event loop: transcoding a large
// batch, decompressing one. Arguments and results are structured-cloned; buffers that own their
// whole ArrayBuffer are transferred instead of copied (`transferableOf`). The queue is bounded
// (`tryRun` answers null when it is full, and the caller does the work itself). A worker that dies
// fails the task it was running with a worker_crashed error and is replaced; the pool lives on.
//
// Workers load the entry (worker-thread.ts) by the URL this module resolves it to: compiled, the
// .js beside this file; from the TypeScript sources under tsx, the .ts, which a worker can only
// load once tsx's loader is registered in it (a worker does not run the parent's --import), so
// the worker then starts from a two-line module that registers tsx first.

import { Worker } from 'node:worker_threads';

export interface WorkerPoolOptions {
  /** Worker threads (at least 1). */
  threads: number;
  /** Tasks waiting for a free worker at most; past that, tryRun answers null. */
  queueMax: number;
}

/** What a task failed with: thrown by the function (its message), or the worker died. */
export class WorkerTaskError extends Error {
  constructor(
    message: string,
    readonly code: 'task_failed' | 'worker_crashed' | 'pool_closed',
  ) {
    super(message);
    this.name = 'WorkerTaskError';
  }
}

/** A message to a worker. */
export interface WorkerTask {
  id: number;
  moduleUrl: string;
  exportName: string;
  args: unknown[];
}

/** A worker's answer. */
export type WorkerReply = { id: number; ok: true; value: unknown } | { id: number; ok: false; message: string };

interface Pending {
  task: WorkerTask;
  transfer: ArrayBuffer[];
  resolve(value: unknown): void;
  reject(error: Error): void;
}

interface Slot {
  worker: Worker;
  running: Pending | null;
}

/** Below this, Node's Buffer pool may hold the bytes: copied, never transferred (that would detach the pool). */
const transferBytesMin = 4096;

/**
 * The ArrayBuffers in `value` (a Uint8Array, or arrays and plain objects of them, three levels
 * deep) that may be transferred: those a Uint8Array views whole, large enough not to come from
 * Node's shared Buffer pool. The sender must not touch them afterwards.
 */
export function transferableOf(value: unknown, out: ArrayBuffer[] = [], depth = 3): ArrayBuffer[] {
  if (value instanceof Uint8Array) {
    const ab = value.buffer;
    if (ab instanceof ArrayBuffer && value.byteOffset === 0 && value.byteLength === ab.byteLength && ab.byteLength >= transferBytesMin && !out.includes(ab)) out.push(ab);
  } else if (depth > 0 && Array.isArray(value)) {
    for (const v of value as unknown[]) transferableOf(v, out, depth - 1);
  } else if (depth > 0 && typeof value === 'object' && value !== null && Object.getPrototypeOf(value) === Object.prototype) {
    for (const v of Object.values(value)) transferableOf(v, out, depth - 1);
  }
  return out;
}

/** A copy of `bytes` in an ArrayBuffer of its own, which can be transferred. */
export function ownedCopy(bytes: Uint8Array): Buffer {
  const copy = Buffer.allocUnsafeSlow(bytes.length);
  copy.set(bytes);
  return copy;
}

/** A Uint8Array that came through a message as a Buffer again (same memory). */
export function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

export class WorkerPool {
  private readonly slots: Slot[] = [];
  private readonly queue: Pending[] = [];
  private nextId = 1;
  private closed = false;

  constructor(readonly options: WorkerPoolOptions) {
    if (!(Number.isInteger(options.threads) && options.threads >= 1)) throw new RangeError(`worker threads must be an integer >= 1, got ${options.threads}`);
    if (!(Number.isInteger(options.queueMax) && options.queueMax >= 0)) throw new RangeError(`worker queueMax must be an integer >= 0, got ${options.queueMax}`);
    for (let i = 0; i < options.threads; i++) this.slots.push(this.spawn());
  }

  /** Tasks running or waiting. */
  get pending(): number {
    return this.queue.length + this.slots.filter((s) => s.running !== null).length;
  }

  /**
   * Runs `exportName` of `moduleUrl` with `args` on a worker; `transfer` lists ArrayBuffers of the
   * args handed over (detached here). Null when the queue is full (nothing was sent).
   */
  tryRun<T>(moduleUrl: string, exportName: string, args: unknown[], transfer: ArrayBuffer[] = []): Promise<T> | null {
    if (this.closed) return Promise.reject(new WorkerTaskError('the worker pool is closed', 'pool_closed'));
    const idle = this.slots.find((s) => s.running === null);
    if (idle === undefined && this.queue.length >= this.options.queueMax) return null;
    return new Promise<T>((resolve, reject) => {
      const pending: Pending = { task: { id: this.nextId++, moduleUrl, exportName, args }, transfer, resolve: resolve as (v: unknown) => void, reject };
      if (idle !== undefined) this.start(idle, pending);
      else this.queue.push(pending);
    });
  }

  /** Ends every worker; tasks not finished fail with pool_closed. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const error = new WorkerTaskError('the worker pool is closed', 'pool_closed');
    for (const p of this.queue.splice(0)) p.reject(error);
    await Promise.all(
      this.slots.map(async (slot) => {
        const running = slot.running;
        slot.running = null;
        running?.reject(error);
        await slot.worker.terminate();
      }),
    );
  }

  private start(slot: Slot, pending: Pending): void {
    slot.running = pending;
    // A busy worker keeps the process alive until its task ends; an idle one does not.
    slot.worker.ref();
    slot.worker.postMessage(pending.task, pending.transfer);
  }

  private spawn(): Slot {
    const worker = startWorker();
    const slot: Slot = { worker, running: null };
    worker.unref();
    worker.on('message', (reply: WorkerReply) => {
      const running = slot.running;
      if (running === null || running.task.id !== reply.id) return;
      slot.running = null;
      worker.unref();
      if (reply.ok) running.resolve(reply.value);
      else running.reject(new WorkerTaskError(`${running.task.exportName} failed on a worker thread: ${reply.message}`, 'task_failed'));
      this.next(slot);
    });
    const died = (why: string) => {
      if (this.closed) return;
      const index = this.slots.indexOf(slot);
      if (index < 0) return;
      const running = slot.running;
      slot.running = null;
      running?.reject(new WorkerTaskError(`the worker thread running ${running.task.exportName} ${why}`, 'worker_crashed'));
      // A new worker in its place, which takes the next task.
      const replacement = this.spawn();
      this.slots[index] = replacement;
      void worker.terminate();
      this.next(replacement);
    };
    worker.on('error', (err) => died(`failed: ${err.message}`));
    worker.on('exit', (code) => died(`exited with code ${code}`));
    return slot;
  }

  private next(slot: Slot): void {
    const waiting = this.queue.shift();
    if (waiting !== undefined) this.start(slot, waiting);
  }
}

function startWorker(): Worker {
  const entry = import.meta.resolve('./worker-thread.js');
  if (!entry.endsWith('.ts')) return new Worker(new URL(entry));
  const tsx = import.meta.resolve('tsx/esm/api');
  const boot = `import(${JSON.stringify(tsx)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(entry)}); });`;
  return new Worker(boot, { eval: true });
}
