// A real Broker (in memory, or over a data directory that survives `restart()`) with the Cursus
// groups service on a manual clock and scheduler, for the group and offset handler tests. `ask`
// encodes the request as CRQ2 bytes and decodes them as the connection would, runs the handler,
// and returns the reply; `ok` / `refused` turn it into fields or the error's readable form.

import { testServices } from './services.js';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ManualClock } from '../../../src/base/clock.js';
import { silentLogger } from '../../../src/base/logger.js';
import { Broker } from '../../../src/core/broker.js';
import { ManualScheduler } from '../../../src/core/scheduler.js';
import { decodeCommandPayload, encodeCommandPayload } from '../../../src/protocols/cursus/codec/crq2.js';
import { formatLine } from '../../../src/protocols/cursus/codec/lines.js';
import { CursusGroups, type CursusGroupsOptions } from '../../../src/protocols/cursus/groups.js';
import { CursusFailure, type CursusContext, type CursusReply } from '../../../src/protocols/cursus/handler.js';
import { groupHandlers } from '../../../src/protocols/cursus/handlers/groups.js';
import { testScryptCost } from '../../core/helpers.js';

export interface GroupsHarness {
  readonly clock: ManualClock;
  readonly scheduler: ManualScheduler;
  broker: Broker;
  groups: CursusGroups;
  /** `dialect: 'v1'` sends the request as a Cursus v1 connection's. */
  ask(command: string, fields?: Record<string, string>, dialect?: 'v1'): Promise<CursusReply>;
  /** The fields of a text reply, as a record (fails on anything else). */
  ok(command: string, fields?: Record<string, string>, dialect?: 'v1'): Promise<Record<string, string>>;
  /** The JSON value of a json reply. */
  json(command: string, fields?: Record<string, string>): Promise<Record<string, unknown>>;
  /** The refusal as its readable form writes it, `<code> k=v ...` (fails when the request succeeds). */
  refused(command: string, fields?: Record<string, string>): Promise<string>;
  /** Closes the groups and the broker and opens them again over the same data directory. */
  restart(): Promise<void>;
}

export interface HarnessOptions {
  /** Over a data directory (restart() keeps it); in memory otherwise. */
  durable?: boolean;
  topics?: Record<string, number>;
  groups?: Partial<CursusGroupsOptions>;
  /** An existing broker to use instead of opening one (it is not closed by the harness). */
  broker?: Broker;
}

/** Member id suffixes 0001, 0002, ... in join order (deterministic). */
function counter(): (bound: number) => number {
  let n = 0;
  return (bound) => ++n % bound;
}

export async function groupsHarness(t: { after(fn: () => Promise<void> | void): void }, options: HarnessOptions = {}): Promise<GroupsHarness> {
  const clock = new ManualClock(1_700_000_000_000);
  const scheduler = new ManualScheduler(clock);
  const dataDir = mkdtempSync(join(tmpdir(), 'quartet-cursus-groups-'));
  const random = counter();
  const openBroker = (): Promise<Broker> =>
    Broker.open({ dataDir, memory: options.durable !== true, clock, scheduler, maintenanceIntervalMs: 0, scryptCost: testScryptCost, rootUser: { username: 'root', password: 'pw' } });
  const openGroups = async (broker: Broker): Promise<CursusGroups> => {
    const groups = new CursusGroups({ broker, logger: silentLogger, clock, scheduler, random, ...options.groups });
    await groups.start();
    return groups;
  };
  const h = {} as GroupsHarness;
  h.broker = options.broker ?? (await openBroker());
  for (const [name, partitions] of Object.entries(options.topics ?? {})) await h.broker.createTopic('default', name, { partitions });
  h.groups = await openGroups(h.broker);
  t.after(async () => {
    await h.groups.close();
    if (options.broker === undefined) await h.broker.close();
    rmSync(dataDir, { recursive: true, force: true });
  });
  Object.assign(h, { clock, scheduler });
  const context = (): CursusContext => {
    const services = testServices({ broker: h.broker, logger: silentLogger, clock, groups: h.groups });
    return { services, principal: { name: null, permissions: new Set(['*']) }, peer: '127.0.0.1:50000' };
  };
  let requestId = 0n;
  h.ask = async (command, fields = {}, dialect) => {
    const handler = groupHandlers.find((x) => x.command === command);
    assert.ok(handler, `no handler for ${command}`);
    const decoded = decodeCommandPayload(Buffer.concat(encodeCommandPayload(fields)));
    assert.ok(decoded.ok, decoded.ok ? '' : decoded.reason);
    return handler.handle(context(), { command, requestId: ++requestId, payload: decoded.value, batch: null, ...(dialect !== undefined ? { dialect } : {}) });
  };
  h.ok = async (command, fields, dialect) => {
    const reply = await h.ask(command, fields, dialect);
    assert.equal(reply.kind, 'text', `${command}: ${JSON.stringify(reply)}`);
    return Object.fromEntries(reply.kind === 'text' ? reply.fields : []);
  };
  h.json = async (command, fields) => {
    const reply = await h.ask(command, fields);
    assert.equal(reply.kind, 'json');
    // As the connection sends it: compact JSON text.
    return JSON.parse(JSON.stringify(reply.kind === 'json' ? reply.value : null)) as Record<string, unknown>;
  };
  h.refused = async (command, fields) => {
    try {
      await h.ask(command, fields);
    } catch (err) {
      assert.ok(err instanceof CursusFailure, `${command}: ${String(err)}`);
      return formatLine(err.error.code, err.error.fields);
    }
    assert.fail(`${command} ${JSON.stringify(fields)} succeeded`);
  };
  h.restart = async () => {
    assert.equal(options.durable, true, 'restart needs a durable harness');
    await h.groups.close();
    await h.broker.close();
    h.broker = await openBroker();
    h.groups = await openGroups(h.broker);
  };
  return h;
}
