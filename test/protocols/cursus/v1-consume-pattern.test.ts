// Cursus v1 CONSUME of a topic pattern (src/protocols/cursus/v1/session.ts consumePattern): `*`
// and `?` match topic names as v1's matchTopicPattern does; the same partition of every match is
// read in name order, each from its own place, into one 0xBA7C batch named by the pattern. The
// v2 handlers are a fake dispatch here: LIST names the topics, CONSUME answers per topic.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { encodeBatch } from '../../../src/protocols/cursus/codec/index.js';
import { CursusFailure, type CursusReply, type CursusRequest } from '../../../src/protocols/cursus/handler.js';
import { decodeV1Batch, V1Framer, V1Session, type V1Output } from '../../../src/protocols/cursus/v1/index.js';

class Peer implements V1Output {
  readonly written: Buffer[] = [];
  private readonly abort = new AbortController();
  readonly closed = this.abort.signal;
  write(chunks: readonly Buffer[]): void {
    this.written.push(Buffer.concat(chunks));
  }
  end(): void {}
  bodies(): Buffer[] {
    return new V1Framer().push(Buffer.concat(this.written)).map((r) => {
      assert.ok(r.ok);
      return r.body;
    });
  }
}

const topics = ['payments', 'orders-us', 'orders-eu', 'orders-usa'];

/** Each topic's partition 0 holds records whose payloads are `<topic>@<offset>`; offsets 0..n-1. */
const logs: Record<string, number> = { 'orders-eu': 2, 'orders-us': 1, 'orders-usa': 1, payments: 3 };

function field(req: CursusRequest, key: string): string | undefined {
  return req.payload?.fields.get(key)?.toString('utf8');
}

function read(req: CursusRequest): CursusReply {
  const topic = field(req, 'topic')!;
  const from = Number(field(req, 'offset'));
  const end = Math.min(logs[topic] ?? 0, from + Number(field(req, 'batch')));
  const records = [];
  for (let o = from; o < end; o++) records.push({ topic, partition: 0, offset: o, payload: Buffer.from(`${topic}@${o}`) });
  return { kind: 'batch', chunks: encodeBatch({ idempotent: false, topic, partition: 0, acks: '1', batchStart: 0, batchEnd: 0, records }) };
}

function session(consume: (req: CursusRequest) => CursusReply = read): { s: V1Session; peer: Peer; requests: CursusRequest[] } {
  const peer = new Peer();
  const requests: CursusRequest[] = [];
  const s = new V1Session({
    dispatch: async (req) => {
      requests.push(req);
      if (req.command === 'LIST') return { kind: 'text', fields: [['count', String(topics.length)], ['topics', topics.join(',')]] };
      assert.equal(req.command, 'CONSUME');
      return consume(req);
    },
    output: peer,
  });
  return { s, peer, requests };
}

/** The one reply body as a decoded v1 batch: its topic, partition and record payloads. */
function batchOf(body: Buffer): { topic: string; partition: number; payloads: string[] } {
  const b = decodeV1Batch(body);
  assert.ok(b.ok, b.ok ? '' : b.reason);
  return { topic: b.value.topic.toString(), partition: b.value.partition, payloads: b.value.records.map((r) => r.payload.toString()) };
}

const consumes = (requests: CursusRequest[]): string[] => requests.filter((r) => r.command === 'CONSUME').map((r) => `${field(r, 'topic')}@${field(r, 'offset')} batch=${field(r, 'batch')}`);

describe('Cursus v1 CONSUME of a topic pattern', () => {
  it('reads the partition of every matching topic in name order into one batch named by the pattern, then continues each from where it stopped', async () => {
    const { s, peer, requests } = session();
    await s.handle(Buffer.from('CONSUME topic=orders-* partition=0 offset=0 member=m group=g'));
    assert.deepEqual(consumes(requests), ['orders-eu@0 batch=8192', 'orders-us@0 batch=8190', 'orders-usa@0 batch=8189']);
    assert.deepEqual(batchOf(peer.bodies()[0]!), { topic: 'orders-*', partition: 0, payloads: ['orders-eu@0', 'orders-eu@1', 'orders-us@0', 'orders-usa@0'] });
    assert.equal(field(requests[1]!, 'group'), 'g', 'each read is the group member\'s');

    requests.length = 0;
    await s.handle(Buffer.from('CONSUME topic=orders-* partition=0 offset=0 member=m group=g'));
    assert.deepEqual(consumes(requests), ['orders-eu@2 batch=8192', 'orders-us@1 batch=8192', 'orders-usa@1 batch=8192'], "each topic's offset cache, not offset=");
    assert.deepEqual(batchOf(peer.bodies()[1]!).payloads, []);
  });

  it('`?` is one character; batch= bounds the records over all topics', async () => {
    const { s, peer, requests } = session();
    await s.handle(Buffer.from('CONSUME topic=orders-?s partition=0 offset=0 member=m'));
    assert.deepEqual(consumes(requests), ['orders-us@0 batch=8192'], 'orders-usa has one character too many');
    const other = session();
    await other.s.handle(Buffer.from('CONSUME topic=orders-* partition=0 offset=0 member=m batch=3'));
    assert.deepEqual(consumes(other.requests), ['orders-eu@0 batch=3', 'orders-us@0 batch=1'], 'the reads stop once 3 records are in');
    assert.deepEqual(batchOf(other.peer.bodies()[0]!), { topic: 'orders-*', partition: 0, payloads: ['orders-eu@0', 'orders-eu@1', 'orders-us@0'] });
    assert.equal(peer.bodies().length, 1);
  });

  it("answers v1's lines for a pattern that matches nothing or is too long, and a read's OFFSET_OUT_OF_RANGE as it is", async () => {
    const { s, peer } = session((req) => {
      if (field(req, 'topic') === 'orders-us') throw CursusFailure.of('OFFSET_OUT_OF_RANGE', [['requested', '9'], ['earliest', '0'], ['latest', '1']]);
      return read(req);
    });
    await s.handle(Buffer.from('CONSUME topic=zz* partition=0 offset=0 member=m'));
    await s.handle(Buffer.from(`CONSUME topic=${'a'.repeat(256)}* partition=0 offset=0 member=m`));
    await s.handle(Buffer.from('CONSUME topic=orders-* partition=0 offset=9 member=m'));
    assert.deepEqual(peer.bodies().map((b) => b.toString()), [
      'ERROR: command_failed reason="no topics match pattern \'zz*\'"',
      'ERROR: command_failed reason="topic pattern exceeds maximum length of 256 characters"',
      'ERROR: OFFSET_OUT_OF_RANGE requested=9 earliest=0 latest=1',
    ]);
  });

  it('with wait_ms and nothing to read, looks again until a topic has records', async () => {
    let calls = 0;
    const { s, peer, requests } = session((req) => {
      calls++;
      // Records appear in orders-us once every topic was read twice.
      if (calls <= 6 || field(req, 'topic') !== 'orders-us') return read({ ...req, payload: { positional: [], fields: new Map([...req.payload!.fields, ['batch', Buffer.from('0')]]) } });
      return read(req);
    });
    await s.handle(Buffer.from('CONSUME topic=orders-* partition=0 offset=0 member=m wait_ms=30000'));
    assert.deepEqual(batchOf(peer.bodies()[0]!).payloads, ['orders-us@0']);
    assert.ok(requests.every((r) => field(r, 'wait_ms') === undefined), 'each read returns at once');
  });
});
