import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { decodeBatch, decodeCommandPayload, encodeBatch, encodeCommandPayload, encodeStreamClose, type CursusRecord } from '../../../src/protocols/cursus/codec/index.js';
import { CursusFailure, type CursusReply, type CursusRequest } from '../../../src/protocols/cursus/handler.js';
import { V1Framer, V1Session, type V1Output } from '../../../src/protocols/cursus/v1/index.js';
import { vectorsDir } from '../../vectors/cursus-v1/build.js';

const text = (s: string): Buffer => Buffer.from(s, 'utf8');

/** A v1 frame around a body. */
function frame(body: Buffer | string): Buffer {
  const b = typeof body === 'string' ? text(body) : body;
  const len = Buffer.alloc(4);
  len.writeUInt32BE(b.length, 0);
  return Buffer.concat([len, b]);
}

/** The Go SDK's legacy envelope (util.EncodeMessage with an empty topic). */
function envelope(command: string, topic = ''): Buffer {
  const t = text(topic);
  const len = Buffer.alloc(2);
  len.writeUInt16BE(t.length, 0);
  return Buffer.concat([len, t, text(command)]);
}

function vector(name: string): Buffer {
  return Buffer.from(readFileSync(path.join(vectorsDir, `${name}.hex`), 'utf8').trim(), 'hex');
}

/** A fake connection: what the session writes, and whether it ended. */
class Peer implements V1Output {
  readonly written: Buffer[] = [];
  ended = false;
  private readonly abort = new AbortController();
  readonly closed = this.abort.signal;

  write(chunks: readonly Buffer[]): void {
    this.written.push(Buffer.concat(chunks));
  }
  end(): void {
    this.ended = true;
  }
  /** Every body written, in order, as the SDK's framer would read them. */
  bodies(): Buffer[] {
    const f = new V1Framer();
    return f.push(Buffer.concat(this.written)).map((r) => {
      assert.ok(r.ok);
      return r.body;
    });
  }
  lines(): string[] {
    return this.bodies().map((b) => b.toString('utf8'));
  }
}

type Handler = (req: CursusRequest) => CursusReply | Promise<CursusReply>;

function session(handler: Handler, options: { compression?: 'gzip' } = {}): { s: V1Session; peer: Peer; requests: CursusRequest[] } {
  const peer = new Peer();
  const requests: CursusRequest[] = [];
  const s = new V1Session({
    dispatch: async (req) => {
      requests.push(req);
      return handler(req);
    },
    output: peer,
    ...options,
  });
  return { s, peer, requests };
}

/**
 * Feeds v1 frames through a framer into the session, one body at a time, as the connection does;
 * the bytes arrive in 7-byte chunks, so most frames straddle chunks.
 */
async function feed(s: V1Session, bytes: Buffer): Promise<void> {
  const framer = new V1Framer();
  for (let off = 0; off < bytes.length; off += 7) {
    for (const r of framer.push(bytes.subarray(off, off + 7))) {
      assert.ok(r.ok);
      await s.handle(r.body);
    }
  }
  assert.equal(framer.bufferedBytes, 0, 'every frame was whole');
}

/** A request's CRQ2 fields as text, after a CRQ2 encode/decode round trip (they must be valid CRQ2). */
function crq2(req: CursusRequest): Record<string, string> {
  assert.ok(req.payload !== null, `${req.command} carries CRQ2 fields`);
  const round = decodeCommandPayload(Buffer.concat(encodeCommandPayload(req.payload.fields)));
  assert.ok(round.ok, round.ok ? '' : round.reason);
  return Object.fromEntries([...round.value.fields].map(([k, v]) => [k, v.toString('utf8')]));
}

const rec = (r: Partial<CursusRecord> & { offset: number; payload: Buffer }): CursusRecord => ({ topic: 'orders', partition: 0, ...r });

/** What the v2 CONSUME handler would return for offsets 7 and 8 (the records of batch_consume.hex). */
function consumeReply(): CursusReply {
  return { kind: 'batch', chunks: consumedChunks() };
}

function consumedChunks(): Buffer[] {
  return encodeBatch({
    idempotent: false,
    topic: 'orders',
    partition: 0,
    acks: '1',
    batchStart: 0,
    batchEnd: 0,
    records: [
      rec({ offset: 7, payload: text('hello'), producerId: 'p1', producerEpoch: 5, seqNum: 3 }),
      rec({ offset: 8, payload: text('{"n":1}'), producerId: 'p1', producerEpoch: 5, seqNum: 4, key: text('k'), eventType: 'Created', schemaVersion: 2, aggregateVersion: 1, metadata: '{}' }),
    ],
  });
}

const ack = { status: 'OK', last_offset: 0, producer_id: 'p1', producer_epoch: 0, seq_start: 1, seq_end: 1 };

/** A fake v2 dispatcher for the transcript: what the v2 handlers would answer. */
const transcriptHandler: Handler = (req) => {
  switch (req.command) {
    case 'PUBLISH':
      return { kind: 'json', value: req.batch !== null ? { ...ack, last_offset: 6 } : { ...ack, last_offset: 5, seq_start: 0, seq_end: 0 } };
    case 'JOIN_GROUP':
      return { kind: 'text', fields: [['generation', '1'], ['member', 'c1-0042'], ['assignments', '[0]']] };
    case 'CONSUME': {
      const f = crq2(req);
      if (f.topic === 'nope') throw CursusFailure.of('topic_not_found', [['topic', 'nope']], 'the topic does not exist');
      return consumeReply();
    }
    case 'COMMIT_OFFSET':
      return { kind: 'text', fields: [] };
    default:
      throw new Error(`unexpected ${req.command}`);
  }
};

describe('V1Session transcript', () => {
  it('answers PUBLISH, a 0xBA7C batch, JOIN_GROUP, CONSUME, COMMIT_OFFSET and an error with the bytes a v1 SDK reads', async () => {
    const { s, peer, requests } = session(transcriptHandler);
    const input = Buffer.concat([
      frame(envelope('PUBLISH topic=orders acks=1 producerId=p1 message=hello world=1')),
      vector('batch_publish_idempotent'),
      frame(envelope('JOIN_GROUP topic=orders group=g member=c1')),
      frame('CONSUME topic=orders partition=0 offset=7 member=c1-0042 group=g'),
      frame('COMMIT_OFFSET topic=orders partition=0 group=g offset=9 generation=1 member=c1-0042'),
      frame('CONSUME topic=nope partition=0 offset=0 member=c1-0042'),
    ]);
    await feed(s, input);

    const expected = Buffer.concat([
      frame('{"status":"OK","last_offset":5,"producer_epoch":0,"producer_id":"p1","seq_start":0,"seq_end":0}'),
      frame('{"status":"OK","last_offset":6,"producer_epoch":0,"producer_id":"p1","seq_start":1,"seq_end":1}'),
      frame('OK generation=1 member=c1-0042 assignments=[0]'),
      vector('batch_consume'),
      frame('OK'),
      frame('ERROR: topic_not_found topic=nope'),
    ]);
    assert.equal(Buffer.concat(peer.written).toString('hex'), expected.toString('hex'));
    assert.equal(peer.ended, false);

    assert.deepEqual(
      requests.map((r) => r.command),
      ['PUBLISH', 'PUBLISH', 'JOIN_GROUP', 'CONSUME', 'COMMIT_OFFSET', 'CONSUME'],
    );
    assert.deepEqual(crq2(requests[0]!), { topic: 'orders', acks: '1', producerId: 'p1', message: 'hello world=1' });
    const batch = requests[1]!.batch;
    assert.ok(batch !== null && requests[1]!.payload === null);
    const cbv2 = decodeBatch(batch.bytes);
    assert.ok(cbv2.ok);
    assert.deepEqual(cbv2.value.records.map((r) => [r.producerId, r.seqNum, r.payload.toString()]), [['p1', 1, 'hi']]);
    assert.deepEqual(crq2(requests[2]!), { topic: 'orders', group: 'g', member: 'c1' });
    assert.deepEqual(crq2(requests[3]!), { topic: 'orders', partition: '0', offset: '7', member: 'c1-0042', group: 'g' });
    assert.deepEqual(crq2(requests[4]!), { topic: 'orders', partition: '0', group: 'g', offset: '9', generation: '1', member: 'c1-0042' });
    assert.deepEqual(new Set(requests.map((r) => r.requestId)).size, requests.length, 'each request has its own id');
  });

  it('adds class= and retryable= to errors once structured_errors_v1 is negotiated, and only then', async () => {
    const { s, peer } = session(transcriptHandler);
    await feed(
      s,
      Buffer.concat([
        frame('CONSUME topic=nope partition=0 offset=0 member=m'),
        frame('NEGOTIATE version=1 features=structured_errors_v1'),
        frame('CONSUME topic=nope partition=0 offset=0 member=m'),
        frame('PROTOCOL_INFO'),
        frame('NEGOTIATE version=1'),
        frame('CONSUME topic=nope partition=0 offset=0 member=m'),
      ]),
    );
    const lines = peer.lines();
    assert.equal(lines[0], 'ERROR: topic_not_found topic=nope');
    assert.equal(lines[1], 'OK protocol_version=1 enabled=structured_errors_v1 unsupported=');
    assert.equal(lines[2], 'ERROR: topic_not_found class=not_found retryable=false topic=nope');
    assert.match(lines[3]!, /^OK protocol=cursus min_version=1 max_version=1 /);
    assert.equal(lines[4], 'OK protocol_version=1 enabled= unsupported=');
    assert.equal(lines[5], 'ERROR: topic_not_found topic=nope', 'a later NEGOTIATE without the feature turns it off');
  });
});

describe('V1Session: what v1 answers before any handler runs', () => {
  it('answers v1\'s own syntax and argument errors without dispatching', async () => {
    const { s, peer, requests } = session(() => {
      throw new Error('not reached');
    });
    await feed(
      s,
      Buffer.concat([
        frame('CONSUME topic=orders partition=0 member=m'),
        frame('STREAM topic=orders partition=0 member=m'),
        frame('PUBLISH topic=orders producerId=p'),
        frame('PUBLISH topic=orders message=x'),
        frame('JOIN_GROUP group=g member=m'),
        frame('LIST topic=orders'),
        frame('RAFT_APPLY type=REGISTER'),
        frame('INTERNAL_BATCH payload=x'),
        frame('EXIT'),
        frame(''),
      ]),
    );
    assert.deepEqual(peer.lines(), [
      'ERROR: invalid_consume_syntax',
      'ERROR: invalid_stream_syntax',
      'ERROR: missing_message command=PUBLISH',
      'ERROR: missing_producer_id command=PUBLISH',
      'ERROR: missing_topic command=JOIN_GROUP',
      'ERROR: unknown_command command="LIST topic=orders"',
      'ERROR: internal_command_unauthorized command=RAFT_APPLY',
      'ERROR: internal_command_unauthorized command=INTERNAL_BATCH',
      'ERROR: decode_failed reason="invalid topic length"',
      'ERROR: decode_failed reason="data too short"',
    ]);
    assert.deepEqual(requests, []);
    assert.equal(peer.ended, false);
  });

  it('answers HELP itself, and closes after an envelope that holds no command', async () => {
    const { s, peer } = session(() => {
      throw new Error('not reached');
    });
    await feed(s, Buffer.concat([frame(envelope('HELP')), frame(envelope('EXIT')), frame('LIST')]));
    const lines = peer.lines();
    assert.equal(lines.length, 2, 'nothing is read after the close');
    assert.match(lines[0]!, /^OK commands=CREATE,DELETE,LIST,PUBLISH,/);
    assert.equal(lines[1], 'ERROR: malformed_input reason=missing_topic_or_payload');
    assert.equal(peer.ended, true);
    assert.equal(s.ended, true);
  });

  it('refuses an undecodable batch with batch_decode_failed and an unknown acks with invalid_acks', async () => {
    const { s, peer, requests } = session(() => {
      throw new Error('not reached');
    });
    const bad = vector('bad_batch_truncated_payload');
    const acks = Buffer.from(vector('batch_publish_idempotent'));
    acks[4 + 2 + 2 + 6 + 4 + 1] = 0x32; // acks "1" -> "2"
    await feed(s, Buffer.concat([bad, acks]));
    assert.deepEqual(peer.lines(), ['ERROR: batch_decode_failed reason="failed to read message[0] payload bytes: unexpected EOF"', 'ERROR: invalid_acks value=2']);
    assert.deepEqual(requests, []);
  });
});

describe('V1Session: mappings', () => {
  it('writes nothing for acks=0, which v2 answers with no frame', async () => {
    const { s, peer } = session(() => ({ kind: 'none' }));
    await feed(s, frame('PUBLISH topic=t acks=0 producerId=p message=x'));
    assert.deepEqual(peer.written, []);
  });

  it('writes a close reply\'s OK line and then ends the connection', async () => {
    const { s, peer } = session(() => ({ kind: 'close', fields: [] }));
    await feed(s, Buffer.concat([frame('DESCRIBE topic=t'), frame('LIST')]));
    assert.deepEqual(peer.lines(), ['OK']);
    assert.equal(peer.ended, true);
  });

  it('continues a socket\'s CONSUMEs from where the last one stopped, ignoring offset=', async () => {
    const { s, requests } = session((req) => (req.command === 'CONSUME' ? consumeReply() : { kind: 'none' }));
    await feed(s, Buffer.concat([frame('CONSUME topic=orders partition=0 offset=0 member=m'), frame('CONSUME topic=orders partition=0 offset=0 member=m'), frame('CONSUME topic=orders partition=1 offset=0 member=m')]));
    assert.deepEqual(requests.map((r) => crq2(r).offset), ['0', '9', '0']);
  });

  it('drops keys v2 does not take, reads txn= as transactional_id, and the BATCH_COMMIT list from the end of the line', async () => {
    const { s, requests } = session(() => ({ kind: 'text', fields: [] }));
    await feed(
      s,
      Buffer.concat([
        frame('CONSUME topic=t partition=0 offset=0 member=m group=- isolation_level=read_uncommitted generation=3'),
        frame('INIT_PRODUCER_ID txn=tx1'),
        frame('BATCH_COMMIT topic=t group=g member=m generation=2 P0:10,P1:20'),
      ]),
    );
    assert.deepEqual(crq2(requests[0]!), { topic: 't', partition: '0', offset: '0', member: 'm' });
    assert.deepEqual(crq2(requests[1]!), { transactional_id: 'tx1' });
    assert.deepEqual(crq2(requests[2]!), { topic: 't', group: 'g', member: 'm', generation: '2', offsets: 'P0:10,P1:20' });
  });

  it('resumes a member with JOIN_GROUP generation= through v2\'s SYNC_GROUP', async () => {
    const { s, peer, requests } = session(() => ({ kind: 'text', fields: [['assignments', '[1,2]']] }));
    await feed(s, frame('JOIN_GROUP topic=t group=g member=c-0001 generation=4'));
    assert.equal(requests[0]!.command, 'SYNC_GROUP');
    assert.deepEqual(crq2(requests[0]!), { topic: 't', group: 'g', member: 'c-0001', generation: '4' });
    assert.deepEqual(peer.lines(), ['OK generation=4 member=c-0001 assignments=[1 2] resumed=true']);
  });

  it('names the v1 command in errors, writes NOT_LEADER v1\'s way, and hides internal failures', async () => {
    let n = 0;
    const { s, peer } = session(() => {
      n++;
      if (n === 1) throw CursusFailure.of('invalid_partition', [['command', 'CONSUME']]);
      if (n === 2) throw CursusFailure.of('NOT_LEADER', [['leader', '10.0.0.2:9000']]);
      throw new Error('secret detail');
    });
    await feed(s, Buffer.concat([frame('CONSUME topic=t partition=x offset=0 member=m'), frame('FETCH_OFFSET topic=t partition=0 group=g'), frame('LIST')]));
    assert.deepEqual(peer.lines(), ['ERROR: invalid_partition command=CONSUME', 'ERROR: NOT_LEADER LEADER_IS 10.0.0.2:9000', 'ERROR: command_failed reason="internal error"']);
  });

  it('decompresses bodies under the broker-wide compression', async () => {
    const { s, peer, requests } = session(() => ({ kind: 'text', fields: [['count', '0'], ['topics', '']] }), { compression: 'gzip' });
    await feed(s, Buffer.concat([frame(gzipSync(envelope('LIST'))), frame(text('not gzip'))]));
    assert.deepEqual(peer.lines(), ['OK count=0 topics='], 'replies are not compressed');
    assert.equal(requests.length, 1);
    assert.equal(peer.ended, true, 'a body that does not decompress closes the connection');
  });
});

describe('V1Session: STREAM and READ_STREAM', () => {
  it('pushes STREAM batches, keepalives and the closing STREAM_CONTROL with no OK, then ends the connection', async () => {
    const { s, peer, requests } = session((req) => ({
      kind: 'stream',
      run: async (sink) => {
        assert.deepEqual(crq2(req), { topic: 'orders', partition: '0', group: 'g', member: 'm' });
        await sink.send(consumedChunks());
        await sink.send([]);
        await sink.send([encodeStreamClose({ reason: 'offset_out_of_range', offset: 9, range: { requested: 20, earliest: 0, latest: 9 } })], true);
      },
    }));
    await feed(s, Buffer.concat([frame('STREAM topic=orders partition=0 group=g member=m generation=1'), frame('LIST')]));
    const expected = Buffer.concat([vector('batch_consume'), vector('frame_keepalive'), frame('STREAM_CONTROL type=CLOSE reason=offset_out_of_range offset=9 requested=20 earliest=0 latest=9')]);
    assert.equal(Buffer.concat(peer.written).toString('hex'), expected.toString('hex'));
    assert.equal(peer.ended, true);
    assert.equal(requests.length, 1, 'nothing is read from a socket a stream took');
  });

  it('answers a refused STREAM with one error line and goes on reading', async () => {
    const { s, peer } = session((req) =>
      req.command === 'STREAM' ? { kind: 'stream', run: (sink) => sink.fail(CursusFailure.of('topic_not_found', [['topic', 't']]).error) } : { kind: 'text', fields: [['count', '0'], ['topics', '']] },
    );
    await feed(s, Buffer.concat([frame('STREAM topic=t partition=0 group=g member=m'), frame('LIST')]));
    assert.deepEqual(peer.lines(), ['ERROR: topic_not_found topic=t', 'OK count=0 topics=']);
    assert.equal(peer.ended, false);
  });

  it('writes READ_STREAM as its JSON envelope and then the events as a 0xBA7C batch', async () => {
    const envelope1 = '{"status":"OK","topic":"orders","key":"a-1","partition":3,"count":1,"snapshot":{"version":1,"payload":"<s>"}}';
    const { s, peer } = session(() => ({
      kind: 'stream',
      run: async (sink) => {
        await sink.send([text(envelope1)]);
        await sink.send(encodeBatch({ idempotent: false, topic: 'orders', partition: 3, acks: '1', batchStart: 0, batchEnd: 0, records: [{ topic: 'orders', partition: 3, offset: 4, payload: text('e'), aggregateVersion: 2 }] }), true);
      },
    }));
    await feed(s, frame('READ_STREAM topic=orders key=a-1'));
    const bodies = peer.bodies();
    assert.equal(bodies.length, 2);
    assert.equal(bodies[0]!.toString(), '{"status":"OK","topic":"orders","key":"a-1","partition":3,"count":1,"snapshot":{"version":1,"payload":"\\u003cs\\u003e"}}');
    assert.equal(bodies[1]!.subarray(0, 2).toString('hex'), 'ba7c');
    assert.equal(bodies[1]!.readInt32BE(2 + 2 + 6), 3, 'the batch is for the partition frame 1 names');
    assert.equal(peer.ended, false);
  });

  it('writes a READ_STREAM failure as one JSON error frame', async () => {
    const { s, peer } = session(() => ({ kind: 'stream', run: (sink) => sink.fail(CursusFailure.of('invalid_from_version', [], '{"status":"ERROR","error":"invalid_from_version"}').error) }));
    await feed(s, Buffer.concat([frame('READ_STREAM topic=orders key=a-1 from_version=x')]));
    assert.deepEqual(peer.lines(), ['{"status":"ERROR","error":"invalid_from_version"}']);
    const other = session(() => ({ kind: 'stream', run: (sink) => sink.fail(CursusFailure.of('NOT_LEADER', [['leader', 'h:9000']]).error) }));
    await feed(other.s, frame('READ_STREAM topic=orders key=a-1'));
    assert.deepEqual(other.peer.lines(), ['{"status":"ERROR","error":"NOT_LEADER LEADER_IS h:9000"}']);
  });
});

describe('V1Session: hostile input', () => {
  const words = ['PUBLISH', 'CONSUME', 'STREAM', 'JOIN_GROUP', 'NEGOTIATE', 'LIST', 'topic=', 'message=', 'partition=-1', 'offset=x', 'member=', 'group=-', 'generation=9', 'features=*', 'version=1', ' ', '\t', '=', '\u00a0', '\x00', '"'];
  const line = fc.array(fc.constantFrom(...words), { maxLength: 12 }).map((ws) => text(ws.join('')));
  const mutatedBatch = fc.tuple(fc.integer({ min: 0, max: 200 }), fc.integer({ min: 0, max: 255 }), fc.integer({ min: 0, max: 120 })).map(([at, byte, cut]) => {
    const b = Buffer.from(vector('batch_consume').subarray(4));
    b[at % b.length] = byte;
    return b.subarray(0, b.length - (cut % b.length));
  });
  const body = fc.oneof(line, mutatedBatch, fc.uint8Array({ maxLength: 64 }).map((a) => Buffer.from(a)), line.map((l) => envelope(l.toString('latin1'))));

  it('answers any body with v1 frames and never throws', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(body, { minLength: 1, maxLength: 8 }), async (bodies) => {
        const { s, peer } = session(() => ({ kind: 'text', fields: [['n', '1']] }));
        for (const b of bodies) await s.handle(b);
        for (const reply of peer.lines()) assert.match(reply, /^(OK|ERROR: )/, reply);
        if (!peer.ended) assert.equal(peer.lines().length, bodies.length, 'one reply per request on a connection that stays open');
      }),
      { numRuns: 300 },
    );
  });
});
