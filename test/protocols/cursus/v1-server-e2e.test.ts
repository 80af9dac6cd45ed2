// Cursus v1 over the whole server (`npm start -- --cursus-v1-compat`), with raw v1 bytes over TCP
// as the Go, Java and Python SDKs write them: without the switch a v1 connection is closed; with
// it the Cursus port answers v1 byte for byte where the notes say what v1 writes (lines, the
// AckResponse, 0xBA7C batches, READ_STREAM's two frames, STREAM_CONTROL), records cross between
// v1 and Wire v2 clients, and a producer with nanosecond epochs (the Go SDK's) is served.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { silentLogger } from '../../../src/base/logger.js';
import { loadConfig } from '../../../src/server/config.js';
import { startServer, type QuartetServer } from '../../../src/server/server.js';
import { decodeBatch } from '../../../src/protocols/cursus/codec/batch.js';
import { Compression } from '../../../src/protocols/cursus/codec/compression.js';
import { v2EpochOf } from '../../../src/protocols/cursus/v1/epochs.js';
import { CursusWireClient, jsonOf } from './wire-client.js';
import { V1WireClient, v1Envelope } from './v1-wire-client.js';

async function start(dir: string, flags: Record<string, string | boolean>): Promise<QuartetServer> {
  const { config } = loadConfig({
    flags: { 'data-dir': join(dir, 'data'), 'http-addr': '127.0.0.1:0', 'felix-addr': '127.0.0.1:0', 'kafka-addr': '127.0.0.1:0', 'cursus-addr': '127.0.0.1:0', 'iggy-enabled': false, ...flags },
    env: { QUARTET_ROOT_PASSWORD: 'root-password' },
    cwd: dir,
  });
  const server = await startServer(config, { logger: silentLogger, handleSignals: false, stdout: () => {} });
  await server.ready;
  return server;
}

const port = (s: QuartetServer): number => s.listenerAddresses().get('cursus')!.port;
const hex = (s: string): Buffer => Buffer.from(s.replace(/\s+/g, ''), 'hex');

// ---- the 0xBA7C layout (cursus-notes.md §8), written out here independently of the codec ----

interface V1Rec {
  offset?: bigint;
  seq?: bigint;
  producer?: string;
  key?: string;
  epoch?: bigint;
  payload: string;
  eventType?: string;
  schemaVersion?: number;
  aggregateVersion?: bigint;
  metadata?: string;
}

const u16s = (s: string): Buffer => {
  const b = Buffer.from(s, 'utf8');
  const len = Buffer.alloc(2);
  len.writeUInt16BE(b.length, 0);
  return Buffer.concat([len, b]);
};
const u64 = (v: bigint): Buffer => {
  const b = Buffer.alloc(8);
  b.writeBigUInt64BE(BigInt.asUintN(64, v), 0);
  return b;
};
const u32 = (v: number): Buffer => {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(v >>> 0, 0);
  return b;
};

function v1Batch(h: { topic: string; partition: number; acks: string; idempotent: boolean }, recs: V1Rec[]): Buffer {
  const seqs = recs.map((r) => r.seq ?? 0n);
  const parts = [hex('ba7c'), u16s(h.topic), u32(h.partition), Buffer.from([h.acks.length]), Buffer.from(h.acks), Buffer.from([h.idempotent ? 1 : 0]), u64(seqs[0] ?? 0n), u64(seqs[seqs.length - 1] ?? 0n), u32(recs.length)];
  for (const r of recs) {
    const payload = Buffer.from(r.payload, 'utf8');
    parts.push(u64(r.offset ?? 0n), u64(r.seq ?? 0n), u16s(r.producer ?? ''), u16s(r.key ?? ''), u64(r.epoch ?? 0n), u32(payload.length), payload);
    parts.push(u16s(r.eventType ?? ''), u32(r.schemaVersion ?? 0), u64(r.aggregateVersion ?? 0n), u16s(r.metadata ?? ''));
  }
  return Buffer.concat(parts);
}

/** A batch the broker sends: the topic asked for, acks "1", not idempotent (notes §8). */
const served = (topic: string, partition: number, recs: V1Rec[]): string => v1Batch({ topic, partition, acks: '1', idempotent: false }, recs).toString('hex');

const ack = (lastOffset: number, producer: string, epoch: bigint | number, seqStart: number, seqEnd: number): string =>
  `{"status":"OK","last_offset":${lastOffset},"producer_epoch":${epoch},"producer_id":"${producer}","seq_start":${seqStart},"seq_end":${seqEnd}}`;

describe('Cursus v1 with cursus.v1Compat off (the default)', { timeout: 60_000 }, () => {
  let dir: string;
  let server: QuartetServer;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'quartet-cursus-v1-off-'));
    server = await start(dir, {});
  });
  after(async () => {
    await server?.stop('test done');
    rmSync(dir, { recursive: true, force: true });
  });

  it('closes a v1 connection without a reply, and still serves Wire v2', async () => {
    const c = await V1WireClient.connect(port(server));
    // A frame header's worth of v1 bytes (32): the Wire v2 framer refuses the magic and closes.
    c.send('CREATE topic=orders partitions=1');
    await c.whenEnded();
    assert.equal(c.received, 0);
    const v2 = await CursusWireClient.connect(port(server));
    await v2.negotiate([Compression.none]);
    v2.destroy();
  });
});

describe('Cursus v1 over the whole server (--cursus-v1-compat)', { timeout: 120_000 }, () => {
  let dir: string;
  let server: QuartetServer;
  let c: V1WireClient;
  const open: Array<{ destroy(): void }> = [];
  const connect = async (): Promise<V1WireClient> => {
    const client = await V1WireClient.connect(port(server));
    open.push(client);
    return client;
  };

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'quartet-cursus-v1-'));
    server = await start(dir, { 'cursus-v1-compat': true });
    c = await connect();
  });
  after(async () => {
    for (const o of open) o.destroy();
    await server?.stop('test done');
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers text commands, raw and in the Go SDK envelope, and errors, as v1 writes them', async () => {
    assert.equal(await c.line('CREATE topic=orders partitions=1'), 'OK topic=orders partitions=1 cleanup_policy=delete partitioner=hash_key auth_policy=open read_acl= write_acl= retention_hours=0 retention_bytes=0');
    c.writeRaw(hex('00 00 00 04 4c 49 53 54')); // LIST, raw (notes §3)
    assert.equal((await c.next()).toString(), 'OK count=1 topics=orders');
    c.writeRaw(hex('00 00 00 06 00 00 4c 49 53 54')); // LIST in the Go SDK's envelope
    assert.equal((await c.next()).toString(), 'OK count=1 topics=orders');
    assert.match(await c.line('HELP'), /^OK commands=CREATE,DELETE,LIST,PUBLISH,CONSUME,STREAM,JOIN_GROUP,.*,ELECT_LEADER,HELP,EXIT$/);
    assert.equal(await c.line('CONSUME topic=orders'), 'ERROR: invalid_consume_syntax');
    assert.equal(await c.line('CONSUME topic=nope partition=0 offset=0 member=m'), 'ERROR: topic_not_found topic=nope');
    assert.equal(await c.line('PUBLISH topic=orders message=x'), 'ERROR: missing_producer_id command=PUBLISH');
    assert.equal(await c.line('LIST topic=orders'), 'ERROR: unknown_command command="LIST topic=orders"');
    // Not a command name: read as a legacy envelope, which this is not (notes §3).
    assert.equal(await c.line('FROB x=1'), 'ERROR: decode_failed reason="invalid topic length"');

    // An envelope with no command is answered, and the connection closed (notes §3).
    const bad = await connect();
    bad.send(v1Envelope('hello', 't'));
    assert.equal((await bad.next()).toString(), 'ERROR: malformed_input reason=missing_topic_or_payload');
    await bad.whenEnded();
  });

  it('publishes text and a 0xBA7C batch, and CONSUME answers with a 0xBA7C batch (then continues from where it stopped)', async () => {
    assert.equal(await c.line('PUBLISH topic=orders acks=1 producerId=p1 partition=0 message=hello world'), ack(0, 'p1', 0, 0, 0));
    // The notes' worked example (§8), not idempotent: topic "orders", acks "1", producer p1, key k, payload hi.
    const batch = hex(`ba 7c 00 06 6f 72 64 65 72 73 00 00 00 00 01 31 00
      00 00 00 00 00 00 00 01  00 00 00 00 00 00 00 01  00 00 00 01
      00 00 00 00 00 00 00 00  00 00 00 00 00 00 00 01  00 02 70 31  00 01 6b
      00 00 00 00 00 00 00 00  00 00 00 02 68 69  00 00  00 00 00 01
      00 00 00 00 00 00 00 00  00 00`);
    assert.equal(await c.line(batch), ack(1, 'p1', 0, 1, 1));
    // acks=0: nothing at all; the next command's reply comes next.
    c.send('PUBLISH topic=orders acks=0 producerId=p1 partition=0 message=quiet');

    const consumer = await connect();
    consumer.send('CONSUME topic=orders partition=0 offset=0 member=m');
    assert.equal(
      (await consumer.next()).toString('hex'),
      served('orders', 0, [
        { offset: 0n, producer: 'p1', payload: 'hello world' },
        { offset: 1n, seq: 1n, producer: 'p1', key: 'k', payload: 'hi', schemaVersion: 1 },
        { offset: 2n, producer: 'p1', payload: 'quiet' },
      ]),
    );
    // v1's offset cache: the same socket continues at 3 whatever offset= says.
    consumer.send('CONSUME topic=orders partition=0 offset=0 member=m');
    assert.equal((await consumer.next()).toString('hex'), served('orders', 0, []));
  });

  it('CONSUME of a topic pattern reads every matching topic into one batch named by the pattern', async () => {
    for (const t of ['wild-b', 'wild-a']) assert.match(await c.line(`CREATE topic=${t} partitions=1`), /^OK topic=wild-/);
    assert.equal(await c.line('PUBLISH topic=wild-b acks=1 producerId=p1 partition=0 message=from b'), ack(0, 'p1', 0, 0, 0));
    assert.equal(await c.line('PUBLISH topic=wild-a acks=1 producerId=p1 partition=0 message=from a'), ack(0, 'p1', 0, 0, 0));
    const reader = await connect();
    reader.send('CONSUME topic=wild-? partition=0 offset=0 member=m');
    assert.equal(
      (await reader.next()).toString('hex'),
      served('wild-?', 0, [
        { offset: 0n, producer: 'p1', payload: 'from a' },
        { offset: 0n, producer: 'p1', payload: 'from b' },
      ]),
    );
    assert.equal(await reader.line('CONSUME topic=none-* partition=0 offset=0 member=m'), `ERROR: command_failed reason="no topics match pattern 'none-*'"`);
  });

  it('runs a consumer group: JOIN_GROUP, SYNC_GROUP, COMMIT_OFFSET, FETCH_OFFSET', async () => {
    const joined = /^OK generation=1 member=(\S+) assignments=\[0\]$/.exec(await c.line('JOIN_GROUP topic=orders group=g1 member=m1'));
    assert.ok(joined, 'JOIN_GROUP line');
    const member = joined[1]!;
    assert.equal(await c.line(`SYNC_GROUP topic=orders group=g1 member=${member} generation=1`), `OK generation=1 member=${member} assignments=[0]`);
    assert.equal(await c.line(`COMMIT_OFFSET topic=orders partition=0 group=g1 offset=2 member=${member} generation=1`), 'OK');
    assert.equal(await c.line('FETCH_OFFSET topic=orders partition=0 group=g1'), 'OK offset=2');
    assert.match(await c.line(`COMMIT_OFFSET topic=orders partition=0 group=g1 offset=3 member=${member} generation=7`), /^ERROR: GEN_MISMATCH /);
    assert.match(member, /^m1-\d{4}$/, "v1's member id: the member sent, '-', 4 digits");
    const again = /^OK generation=2 member=(\S+) assignments=\[\]$/.exec(await c.line(`JOIN_GROUP topic=orders group=g1 member=${member}`));
    assert.ok(again, 'a fresh JOIN_GROUP of a member still in makes a new member, as v1 does');
    assert.match(again[1]!, new RegExp(`^${member}-\\d{4}$`));
  });

  it('runs a transaction: INIT_PRODUCER_ID, BEGIN_TXN, TXN_PUBLISH, END_TXN', async () => {
    assert.equal(await c.line('CREATE topic=txns partitions=1'), 'OK topic=txns partitions=1 cleanup_policy=delete partitioner=hash_key auth_policy=open read_acl= write_acl= retention_hours=0 retention_bytes=0');
    const init = /^OK transactional_id=tx1 producerId=(\d+) epoch=(\d+)$/.exec(await c.line('INIT_PRODUCER_ID txn=tx1'));
    assert.ok(init, 'INIT_PRODUCER_ID line');
    const [pid, epoch] = [init[1]!, init[2]!];
    const ids = `transactional_id=tx1 producerId=${pid} epoch=${epoch}`;
    assert.equal(await c.line(`BEGIN_TXN ${ids}`), `OK transactional_id=tx1 state=open producerId=${pid} epoch=${epoch}`);
    assert.equal(await c.line(`TXN_PUBLISH ${ids} topic=txns partition=0 seqNum=1 message=in-txn`), 'OK transactional_id=tx1 staged_messages=1 topic=txns partition=0');
    assert.equal(await c.line(`END_TXN ${ids} result=commit`), 'OK transactional_id=tx1 state=committed messages=1 offsets=0');
    const reader = await connect();
    reader.send('CONSUME topic=txns partition=0 offset=0 member=m isolation=read_committed');
    const b = await reader.next();
    assert.equal(b.readUInt16BE(0), 0xba7c);
    assert.ok(b.includes(Buffer.from('in-txn')), 'the committed record is read');
  });

  it('appends to an event stream and reads it back in two frames', async () => {
    assert.match(await c.line('CREATE topic=events partitions=1 event_sourcing=true'), /^OK topic=events partitions=1 /);
    assert.equal(await c.line('APPEND_STREAM topic=events key=a1 version=1 event_type=Created schema_version=2 message={"x":1}'), 'OK version=1 offset=0 partition=0');
    assert.match(await c.line('APPEND_STREAM topic=events key=a1 version=1 message={"x":2}'), /^ERROR: version_conflict current=1 /);
    assert.equal(await c.line('STREAM_VERSION topic=events key=a1'), 'OK version=1');
    c.send('READ_STREAM topic=events key=a1');
    assert.equal((await c.next()).toString(), '{"status":"OK","topic":"events","key":"a1","partition":0,"count":1}');
    const events = await c.next();
    assert.equal(events.readUInt16BE(0), 0xba7c);
    assert.ok(events.includes(Buffer.from('{"x":1}')) && events.includes(u16s('Created')), 'the event, with its type');
    assert.equal(await c.line('READ_STREAM topic=events key=a1 from_version=x'), '{"status":"ERROR","error":"invalid_from_version"}');
  });

  it('streams batches without an OK, and a newer STREAM of the same key closes the first with STREAM_CONTROL', async () => {
    const joined = /member=(\S+)/.exec(await c.line('JOIN_GROUP topic=orders group=gs member=s1'))!;
    const s = await connect();
    s.send(`STREAM topic=orders partition=0 group=gs offset=0 generation=1 member=${joined[1]!}`);
    const first = await s.next();
    assert.equal(first.readUInt16BE(0), 0xba7c, first.toString());
    assert.ok(first.includes(Buffer.from('hello world')));
    const s2 = await connect();
    s2.send(`STREAM topic=orders partition=0 group=gs offset=0 generation=1 member=${joined[1]!}`);
    let last = await s.next();
    for (let i = 0; i < 100 && last.length === 0; i++) last = await s.next(); // keepalives
    assert.match(last.toString(), /^STREAM_CONTROL type=CLOSE reason=replaced offset=\d+$/);
    await s.whenEnded();
  });

  it('lets records cross: published via v1, read by a Wire v2 client, and the reverse', async () => {
    assert.match(await c.line('CREATE topic=cross partitions=1'), /^OK topic=cross /);
    assert.equal(await c.line('PUBLISH topic=cross acks=1 producerId=v1p partition=0 key=k1 message=from v1'), ack(0, 'v1p', 0, 0, 0));
    const v2 = await CursusWireClient.connect(port(server));
    open.push(v2);
    await v2.negotiate([Compression.none]);
    assert.equal(jsonOf((await v2.request('PUBLISH', { topic: 'cross', producerId: 'v2p', message: 'from v2', partition: '0' }))[0]!).last_offset, 1);
    const got = decodeBatch((await v2.request('CONSUME', { topic: 'cross', partition: '0', offset: '0', member: 'm' }))[0]!.payload);
    assert.ok(got.ok);
    assert.deepEqual(got.value.records.map((r) => [r.offset, r.payload.toString(), r.key?.toString()]), [[0, 'from v1', 'k1'], [1, 'from v2', undefined]]);
    const reader = await connect();
    reader.send('CONSUME topic=cross partition=0 offset=1 member=m');
    assert.equal((await reader.next()).toString('hex'), served('cross', 0, [{ offset: 1n, producer: 'v2p', payload: 'from v2' }]));
  });

  it("serves a producer with the Go SDK's nanosecond epochs: acked with its epoch, deduplicated, fenced by a newer one", async () => {
    assert.match(await c.line('CREATE topic=idem partitions=1 idempotent=true'), /^OK topic=idem /);
    const goEpoch = 1_767_225_600_123_456_789n; // time.Now().UnixNano()
    const header = { topic: 'idem', partition: 0, acks: 'all', idempotent: true };
    const batch = (epoch: bigint, seqs: bigint[]): Buffer => v1Batch(header, seqs.map((seq) => ({ seq, producer: 'go-p0', epoch, payload: `m${seq}` })));
    assert.equal(await c.line(batch(goEpoch, [1n, 2n])), ack(1, 'go-p0', goEpoch, 1, 2));
    // The same batch again (a retry) is not written twice.
    assert.equal(await c.line(batch(goEpoch, [1n, 2n])), ack(1, 'go-p0', goEpoch, 1, 2));
    // A newer producer instance (a later start) fences the older one.
    const newer = goEpoch + 5_000_000_000n;
    assert.equal(await c.line(batch(newer, [1n])), ack(2, 'go-p0', newer, 1, 1));
    assert.match(await c.line(batch(goEpoch, [3n])), /^ERROR: (stale_producer_epoch|producer_fenced)/);
    const reader = await connect();
    reader.send('CONSUME topic=idem partition=0 offset=0 member=m');
    const read = await reader.next();
    assert.equal(
      read.toString('hex'),
      served('idem', 0, [
        { offset: 0n, seq: 1n, producer: 'go-p0', epoch: BigInt(v2EpochOf(goEpoch)), payload: 'm1' },
        { offset: 1n, seq: 2n, producer: 'go-p0', epoch: BigInt(v2EpochOf(goEpoch)), payload: 'm2' },
        { offset: 2n, seq: 1n, producer: 'go-p0', epoch: BigInt(v2EpochOf(newer)), payload: 'm1' },
      ]),
    );
  });
});

describe('Cursus v1 with cursus.requireAuth', { timeout: 60_000 }, () => {
  let dir: string;
  let server: QuartetServer;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'quartet-cursus-v1-auth-'));
    server = await start(dir, { 'cursus-v1-compat': true, 'cursus-require-auth': true });
  });
  after(async () => {
    await server?.stop('test done');
    rmSync(dir, { recursive: true, force: true });
  });

  it('authenticates v1 connections with inline principal/auth_token, as Wire v2 does', async () => {
    const c = await V1WireClient.connect(port(server));
    try {
      assert.match(await c.line('CREATE topic=a partitions=1'), /^ERROR: authentication_required /);
      assert.match(await c.line('CREATE topic=a partitions=1 principal=root auth_token=wrong'), /^ERROR: authentication_failed/);
      assert.match(await c.line('CREATE topic=a partitions=1 principal=root auth_token=root-password'), /^OK topic=a /);
      assert.equal(await c.line('LIST'), 'OK count=1 topics=a');
      // Authenticated, bodies may be as large as v1's.
      const big = 'x'.repeat(100 * 1024);
      assert.match(await c.line(`PUBLISH topic=a acks=1 producerId=p partition=0 message=${big}`), /^\{"status":"OK","last_offset":0,/);
    } finally {
      c.destroy();
    }
  });

  it('closes an unauthenticated v1 connection that sends a body over 64 KiB, without a reply', async () => {
    const c = await V1WireClient.connect(port(server));
    c.send(`PUBLISH topic=a acks=1 producerId=p partition=0 message=${'x'.repeat(64 * 1024)}`);
    await c.whenEnded();
    assert.equal(c.received, 0);
  });
});
