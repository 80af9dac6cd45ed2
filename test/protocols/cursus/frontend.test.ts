// The dispatch table and the services handlers get, without sockets: handlers called with
// handler.handle(ctx, request) over a broker in a temporary directory, as each area's handler
// tests do (createCursusServices builds the context's services).

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { silentLogger } from '../../../src/base/logger.js';
import { Broker } from '../../../src/core/broker.js';
import { decodeCommandPayload, encodeCommandPayload } from '../../../src/protocols/cursus/codec/index.js';
import { buildDispatchTable, builtinHandlerTables, createCursusServices } from '../../../src/protocols/cursus/frontend.js';
import { CursusFailure, type CursusCommandHandler, type CursusContext, type CursusRequest } from '../../../src/protocols/cursus/handler.js';
import { topicHandlers } from '../../../src/protocols/cursus/handlers/topics.js';
import { testScryptCost } from './harness.js';

function request(command: string, fields: Record<string, string>): CursusRequest {
  const payload = decodeCommandPayload(Buffer.concat(encodeCommandPayload(fields)));
  assert.ok(payload.ok);
  return { command, requestId: 1n, payload: payload.value, batch: null };
}

test('the dispatch table merges the area tables and refuses a command twice, an unknown one or an internal one', () => {
  const table = buildDispatchTable(builtinHandlerTables);
  for (const name of ['CREATE', 'DELETE', 'TRUNCATE', 'METADATA', 'AUTH', 'EXIT', 'HELP', 'ELECT_LEADER']) assert.ok([...table.values()].some((h) => h.command === name), name);
  const handler = (command: string): CursusCommandHandler => ({ command, permissions: [], handle: () => ({ kind: 'none' }) });
  assert.throws(() => buildDispatchTable([...builtinHandlerTables, [handler('CREATE')]]), /two Cursus handlers for CREATE/);
  assert.throws(() => buildDispatchTable([[handler('SUBSCRIBE')]]), /unknown command SUBSCRIBE/);
  assert.throws(() => buildDispatchTable([[handler('RAFT_APPLY')]]), /broker-internal/);
});

test('topic handlers run on the services createCursusServices builds', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'quartet-cursus-services-'));
  const broker = await Broker.open({ dataDir: dir, memory: true, maintenanceIntervalMs: 0, scryptCost: testScryptCost, rootUser: { username: 'root', password: 'pw' } });
  t.after(async () => {
    await broker.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const services = createCursusServices({ broker, logger: silentLogger });
  await services.topics.start();
  const ctx: CursusContext = { services, principal: services.access.principalOf(null), peer: 'test' };
  const create = topicHandlers.find((h) => h.command === 'CREATE')!;
  const reply = await create.handle(ctx, request('CREATE', { topic: 'orders', partitions: '2', event_sourcing: 'true' }));
  assert.equal(reply.kind, 'text');
  const view = services.topics.view('orders')!;
  assert.equal(view.partitions, 2);
  assert.equal(view.eventSourcing, true);
  assert.equal(services.topics.view('missing'), undefined);
  await assert.rejects(
    Promise.resolve().then(() => create.handle(ctx, request('CREATE', { topic: 'orders', event_sourcing: 'false' }))),
    (e: unknown) => e instanceof CursusFailure && e.error.code === 'invalid_topic_policy',
  );
});
