// System commands end to end: stats, me/client/clients, cluster metadata for this single node,
// describe options (the topic catalog), and a snapshot that is a real ZIP.

import { readFileSync } from 'node:fs';
import { parseProcIo } from '../../../../src/protocols/iggy/process-usage.js';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CommandCode, IggyErrorCode } from '../../../../src/protocols/iggy/codec/index.js';
import { topicOptionKeys } from '../../../../src/protocols/iggy/topic-options.js';
import { readZip } from '../../../../src/protocols/iggy/zip.js';
import { sendRequest, sid, startIggy } from '../harness.js';
import { LogTail, createLogger } from '../../../../src/base/logger.js';

describe('parseProcIo', () => {
  it('reads read_bytes and write_bytes, and refuses text without them', () => {
    const text = 'rchar: 10\nwchar: 20\nsyscr: 1\nsyscw: 2\nread_bytes: 4096\nwrite_bytes: 12288\ncancelled_write_bytes: 0\n';
    assert.deepEqual(parseProcIo(text), { readBytes: 4096n, writtenBytes: 12288n });
    assert.equal(parseProcIo('rchar: 10\n'), null);
  });
});

describe('iggy system commands', () => {
  it('reports stats, clients and cluster metadata', async (t) => {
    const h = await startIggy(t);
    const c = await h.root();
    await c.ok(CommandCode.createTopic, { streamId: sid('default'), partitionsCount: 2, name: 's', options: [] });
    await c.ok(CommandCode.sendMessages, sendRequest(sid('default'), sid('s'), ['a', 'b']));
    const ioBefore = parseProcIo(readFileSync('/proc/self/io', 'utf8'))!;
    const stats = await c.ok(CommandCode.getStats, {});
    assert.equal(stats.processId, process.pid);
    assert.equal(stats.streamsCount, 1);
    assert.equal(stats.topicsCount, 1);
    assert.equal(stats.partitionsCount, 2);
    assert.equal(stats.messagesCount, 2n);
    // Segments as GetTopic counts them (at least one per partition, the empty one included).
    const topic = await c.ok(CommandCode.getTopic, { streamId: sid('default'), topicId: sid('s') });
    assert.equal(stats.segmentsCount, topic!.partitions.reduce((n, p) => n + p.segmentsCount, 0));
    assert.ok(stats.segmentsCount >= 2);
    assert.equal(stats.clientsCount, 1);
    // This process has done work since it started: the first call averages over all of it.
    assert.ok(stats.cpuUsage > 0, `cpu usage ${stats.cpuUsage}`);
    assert.ok(stats.totalCpuUsage >= 0 && stats.totalCpuUsage <= 100, `total cpu usage ${stats.totalCpuUsage}`);
    // Written bytes are this process's /proc/self/io write_bytes (0 only where storage is tmpfs).
    const ioAfter = parseProcIo(readFileSync('/proc/self/io', 'utf8'))!;
    assert.ok(stats.writtenBytes >= ioBefore.writtenBytes && stats.writtenBytes <= ioAfter.writtenBytes, 'written bytes come from /proc/self/io');
    assert.ok(stats.readBytes >= ioBefore.readBytes && stats.readBytes <= ioAfter.readBytes, 'read bytes come from /proc/self/io');
    const me = await c.ok(CommandCode.getMe, {});
    assert.equal(me?.userId, 0);
    assert.equal(me?.transport, 1);
    const other = await h.client();
    const clients = await c.ok(CommandCode.getClients, {});
    assert.equal(clients.length, 2);
    assert.equal(clients.find((x) => x.clientId !== me?.clientId)?.userId, 0xffff_ffff, 'not logged in');
    assert.equal((await c.ok(CommandCode.getClient, { clientId: me!.clientId }))?.clientId, me!.clientId);
    assert.equal(await c.ok(CommandCode.getClient, { clientId: 424242 }), null);
    other.destroy();
    const meta = await c.ok(CommandCode.getClusterMetadata, {});
    // A reference server without a cluster: cluster single-node, node iggy-node, the leader, healthy.
    assert.equal(meta.name, 'single-node');
    assert.deepEqual(meta.nodes.map((n) => [n.name, n.role, n.status, n.quicPort, n.httpPort, n.websocketPort]), [['iggy-node', 0, 0, 0, 0, 0]]);
    assert.equal(meta.nodes[0]!.tcpPort, h.port);
    assert.equal(meta.nodes[0]!.ip, '127.0.0.1');
    assert.equal(meta.nodes[0]!.role, 0);
    // Bound to every interface (as `npm start`): each peer is told the address it dialled.
    h.frontend.setBoundAddress({ host: '0.0.0.0', port: 8090 });
    assert.deepEqual(h.frontend.advertised({ localHost: '::ffff:10.1.2.3' } as never), { host: '10.1.2.3', port: 8090 });
    assert.deepEqual(h.frontend.advertised({ localHost: 'fd00::7' } as never), { host: 'fd00::7', port: 8090 });
    assert.deepEqual(h.frontend.advertised(), { host: '127.0.0.1', port: 8090 });
    assert.equal((await c.ok(CommandCode.getClusterMetadata, {})).nodes[0]!.ip, '127.0.0.1', 'this test client dialled 127.0.0.1');
  });

  it('describes the topic option catalog in order; stream and user scopes are empty; others status 3', async (t) => {
    const h = await startIggy(t);
    const c = await h.root();
    const topic = await c.ok(CommandCode.describeOptions, { scope: 1 });
    assert.deepEqual(topic.map((o) => o.key), topicOptionKeys);
    assert.deepEqual(await c.ok(CommandCode.describeOptions, { scope: 2 }), []);
    assert.deepEqual(await c.ok(CommandCode.describeOptions, { scope: 3 }), []);
    assert.deepEqual(await c.call(CommandCode.describeOptions, { scope: 9 }), { status: IggyErrorCode.invalidCommand });
  });

  it('returns a snapshot ZIP with the requested types, stored or deflated', async (t) => {
    const h = await startIggy(t);
    const c = await h.root();
    const stored = await c.ok(CommandCode.getSnapshot, { compression: 1, snapshotTypes: [1, 4] });
    assert.deepEqual(stored.subarray(0, 4), Buffer.from('PK\x03\x04', 'latin1'));
    assert.deepEqual(readZip(stored).map((e) => e.name), ['filesystem_overview.txt', 'test.txt']);
    const all = await c.ok(CommandCode.getSnapshot, { compression: 2, snapshotTypes: [100] });
    const entries = readZip(all);
    assert.equal(entries.length, 6);
    assert.equal(entries.find((e) => e.name === 'test.txt')?.data.toString(), 'test\n');
    assert.deepEqual(await c.call(CommandCode.getSnapshot, { compression: 1, snapshotTypes: [42] }), { status: IggyErrorCode.invalidCommand });
  });

  it("puts the broker's last log lines in the snapshot's server_logs.txt", async (t) => {
    const written: string[] = [];
    const logger = createLogger('info', (line) => written.push(line), {}, new LogTail());
    const h = await startIggy(t, { logger: logger.child({ listener: 'iggy' }) });
    logger.info('a line before the snapshot', { n: 1 });
    const c = await h.root();
    const logs = readZip(await c.ok(CommandCode.getSnapshot, { compression: 2, snapshotTypes: [5] }));
    assert.deepEqual(logs.map((e) => e.name), ['server_logs.txt']);
    const lines = logs[0]!.data.toString().trimEnd().split('\n');
    assert.ok(lines.length >= 1);
    assert.deepEqual(lines, written.slice(0, lines.length), 'the lines written, in order');
    assert.ok(lines.some((l) => (JSON.parse(l) as { msg: string }).msg === 'a line before the snapshot'));
  });
});
