// The entry of a WorkerPool thread (worker-pool.ts): runs each task's function, an export of a
// module loaded by URL once, and answers with its value, transferring the buffers it owns whole.
// A function that throws answers with its message; the worker goes on.

import { parentPort } from 'node:worker_threads';
import { transferableOf, type WorkerReply, type WorkerTask } from './worker-pool.js';

const port = parentPort;
if (port === null) throw new Error('worker-thread.ts runs as a worker thread only');

const modules = new Map<string, Promise<Record<string, unknown>>>();

function load(url: string): Promise<Record<string, unknown>> {
  let loaded = modules.get(url);
  if (loaded === undefined) {
    loaded = import(url) as Promise<Record<string, unknown>>;
    modules.set(url, loaded);
  }
  return loaded;
}

async function run(task: WorkerTask): Promise<WorkerReply> {
  try {
    const fn = (await load(task.moduleUrl))[task.exportName];
    if (typeof fn !== 'function') return { id: task.id, ok: false, message: `${task.moduleUrl} exports no function ${task.exportName}` };
    return { id: task.id, ok: true, value: (await (fn as (...args: unknown[]) => unknown)(...task.args)) as unknown };
  } catch (err) {
    return { id: task.id, ok: false, message: err instanceof Error ? err.message : String(err) };
  }
}

port.on('message', (task: WorkerTask) => {
  void run(task).then((reply) => {
    const value = reply.ok ? reply.value : undefined;
    port.postMessage(reply, transferableOf(value));
  });
});
