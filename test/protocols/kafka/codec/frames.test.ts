// Golden bytes: frames assembled by hand, field by field, from the protocol guide's grammar.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ApiKey, supportedApis } from '../../../../src/protocols/kafka/codec/api-keys.js';
import {
  decodeRequest,
  decodeResponse,
  encodeRequest,
  encodeResponse,
  encodeUnsupportedApiVersions,
} from '../../../../src/protocols/kafka/codec/frames.js';
import { decodeRequestHeader } from '../../../../src/protocols/kafka/codec/headers.js';
import { joinChunks } from '../../../../src/protocols/kafka/codec/writer.js';

const hex = (s: string) => Buffer.from(s.replace(/\s+|#[^\n]*/g, ''), 'hex');
const zeroUuid = Buffer.alloc(16);
const uuidHex = '00000000000000000000000000000000';

/** Checks encode == golden and decode(golden) == value for a request (golden includes the size). */
function goldenRequest<K extends Parameters<typeof decodeRequest>[0]>(
  apiKey: K,
  version: number,
  clientId: string,
  body: Parameters<typeof encodeRequest<K>>[4],
  golden: Buffer,
): ReturnType<typeof decodeRequest<K>> {
  assert.equal(joinChunks(encodeRequest(apiKey, version, 7, clientId, body)).toString('hex'), golden.toString('hex'));
  const frame = golden.subarray(4);
  const h = decodeRequestHeader(frame);
  assert.ok(h.ok);
  assert.deepEqual(h.header.apiKey, apiKey);
  assert.equal(h.header.correlationId, 7);
  assert.equal(h.header.clientId, clientId);
  const r = decodeRequest(apiKey, version, frame, h.bodyOffset);
  assert.ok(r.ok, r.ok ? '' : r.reason);
  assert.equal(r.trailingBytes, 0);
  return r;
}

function goldenResponse<K extends Parameters<typeof decodeResponse>[0]>(
  apiKey: K,
  version: number,
  body: Parameters<typeof encodeResponse<K>>[3],
  golden: Buffer,
): ReturnType<typeof decodeResponse<K>> {
  assert.equal(joinChunks(encodeResponse(apiKey, version, 7, body)).toString('hex'), golden.toString('hex'));
  const r = decodeResponse(apiKey, version, golden.subarray(4));
  assert.ok(r.ok, r.ok ? '' : r.reason);
  assert.equal(r.correlationId, 7);
  assert.equal(r.trailingBytes, 0);
  return r;
}

describe('golden frames', () => {
  it('ApiVersions v0 request (header v1, empty body)', () => {
    goldenRequest(ApiKey.ApiVersions, 0, 'kcat', {}, hex(`
      0000000e   # size 14
      0012 0000  # api key 18, version 0
      00000007   # correlation id
      0004 6b636174  # client id "kcat" (int16 length)
    `));
  });

  it('ApiVersions v3 request: header v2 keeps an int16 client id, body has tagged fields', () => {
    const golden = hex(`
      00000024               # size 36
      0012 0003 00000007     # api key 18, v3, correlation 7
      0007 72646b61666b61    # client id "rdkafka": NOT compact
      00                     # header tagged fields: none
      0b 6c696272646b61666b61  # client software name "librdkafka" (compact: 10+1)
      06 322e302e32          # client software version "2.0.2"
      00                     # body tagged fields: none
    `);
    const r = goldenRequest(ApiKey.ApiVersions, 3, 'rdkafka', { clientSoftwareName: 'librdkafka', clientSoftwareVersion: '2.0.2' }, golden);
    assert.ok(r.ok);
    assert.equal(r.value.clientSoftwareName, 'librdkafka');
    // An unknown tagged field (tag 9, 2 bytes) in the header and in the body is skipped.
    const withTags = hex(`
      0012 0003 00000007 0007 72646b61666b61
      01 09 02 abcd
      0b 6c696272646b61666b61 06 322e302e32
      01 09 02 abcd
    `);
    const h = decodeRequestHeader(withTags);
    assert.ok(h.ok);
    const body = decodeRequest(ApiKey.ApiVersions, 3, withTags, h.bodyOffset);
    assert.ok(body.ok);
    assert.equal(body.value.clientSoftwareVersion, '2.0.2');
  });

  it('ApiVersions v0 and v3 responses (always response header v0)', () => {
    const apiKeys = [
      { apiKey: 0, minVersion: 0, maxVersion: 9 },
      { apiKey: 3, minVersion: 0, maxVersion: 12 },
    ];
    goldenResponse(ApiKey.ApiVersions, 0, { errorCode: 0, apiKeys }, hex(`
      00000016            # size 22
      00000007            # correlation id (header v0)
      0000                # error code
      00000002            # api keys: 2 (int32 count)
      0000 0000 0009      # Produce 0..9
      0003 0000 000c      # Metadata 0..12
    `));
    goldenResponse(ApiKey.ApiVersions, 3, { errorCode: 0, apiKeys, throttleTimeMs: 0 }, hex(`
      0000001a            # size 26
      00000007            # correlation id; no header tagged fields even at v3
      0000                # error code
      03                  # api keys: compact count 2+1
      0000 0000 0009 00   # Produce 0..9, tagged fields
      0003 0000 000c 00   # Metadata 0..12, tagged fields
      00000000            # throttle time
      00                  # tagged fields
    `));
  });

  it('KIP-511: an unsupported ApiVersions version gets a v0 body with error 35 and the full list', () => {
    const frame = joinChunks(encodeUnsupportedApiVersions(7));
    assert.deepEqual(frame.subarray(4, 14), hex('00000007 0023 0000002c'), 'corr 7, error 35, 44 apis');
    const r = decodeResponse(ApiKey.ApiVersions, 0, frame.subarray(4));
    assert.ok(r.ok);
    assert.equal(r.body.errorCode, 35);
    assert.equal(r.body.apiKeys.length, supportedApis.length);
    assert.deepEqual(r.body.apiKeys.find((k) => k.apiKey === ApiKey.ApiVersions), { apiKey: 18, minVersion: 0, maxVersion: 3 });
    // The request header of such a request (v4, flexible) is still readable.
    const v4 = hex('0012 0004 00000001 0004 6b636174 00');
    const h = decodeRequestHeader(v4);
    assert.ok(h.ok);
    assert.equal(h.header.headerVersion, 2);
    assert.equal(h.bodyOffset, v4.length);
  });

  it('Metadata v1 request and response', () => {
    goldenRequest(ApiKey.Metadata, 1, 'c', { topics: null }, hex(`
      0000000f 0003 0001 00000007 0001 63
      ffffffff     # topics: null = all topics (v1+)
    `));
    goldenResponse(
      ApiKey.Metadata,
      1,
      {
        brokers: [{ nodeId: 1, host: '127.0.0.1', port: 9092, rack: null }],
        controllerId: 1,
        topics: [{ errorCode: 0, name: 't', isInternal: false, partitions: [{ errorCode: 0, partitionIndex: 0, leaderId: 1, replicaNodes: [1], isrNodes: [1] }] }],
      },
      hex(`
        00000049                           # size 73
        00000007                           # correlation id
        00000001                           # brokers: 1
          00000001 0009 3132372e302e302e31 00002384 ffff   # node 1, "127.0.0.1", 9092, rack null
        00000001                           # controller id
        00000001                           # topics: 1
          0000 0001 74 00                  # error 0, "t", not internal
          00000001                         # partitions: 1
            0000 00000000 00000001         # error 0, partition 0, leader 1
            00000001 00000001              # replicas [1]
            00000001 00000001              # isr [1]
      `),
    );
  });

  it('Metadata v12 request and response (flexible, topic ids, nullable names)', () => {
    const r = goldenRequest(ApiKey.Metadata, 12, 'c', { topics: [{ name: 't' }], allowAutoTopicCreation: true }, hex(`
      00000023 0003 000c 00000007 0001 63 00   # size 35, header v2
      02 ${uuidHex} 02 74 00                   # topics: [ {topic id 0, "t"} ]
      01                                       # allow auto topic creation
      00                                       # include topic authorized operations
      00                                       # tagged fields
    `));
    assert.ok(r.ok);
    assert.deepEqual(r.value.topics, [{ topicId: zeroUuid, name: 't' }]);
    goldenResponse(
      ApiKey.Metadata,
      12,
      {
        brokers: [{ nodeId: 1, host: '127.0.0.1', port: 9092 }],
        clusterId: 'c',
        controllerId: 1,
        topics: [{ errorCode: 0, name: 't', partitions: [{ partitionIndex: 0, leaderId: 1, leaderEpoch: 0, replicaNodes: [1], isrNodes: [1] }] }],
      },
      hex(`
        0000005b 00000007 00                      # size 91, correlation id, header tagged fields
        00000000                                  # throttle
        02 00000001 0a 3132372e302e302e31 00002384 00 00   # broker 1, rack null, tagged
        02 63                                     # cluster id "c"
        00000001                                  # controller id
        02                                        # topics: 1
          0000 02 74 ${uuidHex} 00                # error, "t", topic id, not internal
          02 0000 00000000 00000001 00000000      # partition 0, leader 1, epoch 0
             02 00000001 02 00000001 01 00        # replicas [1], isr [1], offline [], tagged
          80000000 00                             # topic authorized operations (unset), tagged
        00                                        # tagged fields
      `),
    );
  });

  it('Produce v3 and v9 requests, v9 response', () => {
    const records = Buffer.from('abc');
    const topicData = [{ name: 't', partitionData: [{ index: 0, records }] }];
    goldenRequest(ApiKey.Produce, 3, 'c', { transactionalId: null, acks: -1, timeoutMs: 30000, topicData }, hex(`
      00000029 0000 0003 00000007 0001 63
      ffff            # transactional id null
      ffff 00007530   # acks -1, timeout 30000
      00000001 0001 74 00000001 00000000 00000003 616263   # t / partition 0 / records (int32 length)
    `));
    const r = goldenRequest(ApiKey.Produce, 9, 'c', { acks: 1, timeoutMs: 30000, topicData }, hex(`
      00000022 0000 0009 00000007 0001 63 00
      00              # transactional id null (compact)
      0001 00007530   # acks 1, timeout 30000
      02 02 74 02 00000000 04 616263 00 00   # compact arrays; records length 3+1
      00
    `));
    assert.ok(r.ok);
    assert.deepEqual(r.value.topicData[0]!.partitionData[0]!.records, records);
    goldenResponse(
      ApiKey.Produce,
      9,
      { responses: [{ name: 't', partitionResponses: [{ index: 0, errorCode: 0, baseOffset: 5, logStartOffset: 0 }] }] },
      hex(`
        00000030 00000007 00                      # size 48, correlation, header tagged fields
        02 02 74                                  # responses: "t"
        02 00000000 0000 0000000000000005         # partition 0, no error, base offset 5
           ffffffffffffffff 0000000000000000      # log append time -1, log start offset 0
           01 00 00                               # record errors [], error message null, tagged
        00                                        # topic tagged fields
        00000000 00                               # throttle, tagged fields
      `),
    );
  });

  it('Fetch v4, v11 and v12 responses', () => {
    const records = Buffer.from('abc');
    goldenResponse(
      ApiKey.Fetch,
      4,
      { responses: [{ topic: 't', partitions: [{ partitionIndex: 0, highWatermark: 10, lastStableOffset: 10, abortedTransactions: [], records }] }] },
      hex(`
        00000034 00000007 00000000                # size 52, correlation, throttle
        00000001 0001 74 00000001                 # topic "t", 1 partition
          00000000 0000 000000000000000a 000000000000000a   # partition 0, hw 10, lso 10
          00000000                                # aborted transactions: []
          00000003 616263                         # records
      `),
    );
    goldenResponse(
      ApiKey.Fetch,
      11,
      {
        responses: [
          { topic: 't', partitions: [{ partitionIndex: 0, highWatermark: 10, lastStableOffset: 10, logStartOffset: 0, abortedTransactions: null, records }] },
        ],
      },
      hex(`
        00000046 00000007 00000000 0000 00000000  # size 70, corr, throttle, error, session id
        00000001 0001 74 00000001
          00000000 0000 000000000000000a 000000000000000a 0000000000000000
          ffffffff                                # aborted transactions: null
          ffffffff                                # preferred read replica -1
          00000003 616263
      `),
    );
    const r = goldenResponse(
      ApiKey.Fetch,
      12,
      {
        responses: [
          {
            topic: 't',
            partitions: [
              { partitionIndex: 0, highWatermark: 10, lastStableOffset: 10, logStartOffset: 0, currentLeader: { leaderId: 1, leaderEpoch: 0 }, abortedTransactions: [], records },
            ],
          },
        ],
      },
      hex(`
        00000048 00000007 00 00000000 0000 00000000   # size 72
        02 02 74 02
          00000000 0000 000000000000000a 000000000000000a 0000000000000000
          01                                      # aborted transactions: [] (compact)
          ffffffff                                # preferred read replica
          04 616263                               # records (compact)
          01 01 09 00000001 00000000 00           # tagged: CurrentLeader (tag 1, 9 bytes)
        00                                        # topic tagged fields
        00                                        # tagged fields
      `),
    );
    assert.ok(r.ok);
    const p = r.body.responses[0]!.partitions[0]!;
    assert.deepEqual(p.currentLeader, { leaderId: 1, leaderEpoch: 0 });
    assert.deepEqual(p.divergingEpoch, { epoch: -1, endOffset: -1 });
  });

  it('AlterConfigs v0 and v2 requests, v0 response', () => {
    const resources = [{ resourceType: 2, resourceName: 't', configs: [{ name: 'a', value: 'b' }, { name: 'c', value: null }] }];
    goldenRequest(ApiKey.AlterConfigs, 0, 'c', { resources, validateOnly: false }, hex(`
      00000023 0021 0000 00000007 0001 63
      00000001 02 0001 74       # 1 resource: topic "t"
      00000002                  # 2 configs
        0001 61 0001 62         # a = b
        0001 63 ffff            # c = null
      00                        # validate only: false
    `));
    const r = goldenRequest(ApiKey.AlterConfigs, 2, 'c', { resources, validateOnly: false }, hex(`
      0000001d 0021 0002 00000007 0001 63 00
      02 02 02 74               # 1 resource (compact): topic "t"
      03                        # 2 configs (compact)
        02 61 02 62 00          # a = b, tagged fields
        02 63 00 00             # c = null, tagged fields
      00                        # resource tagged fields
      00 00                     # validate only: false, tagged fields
    `));
    assert.ok(r.ok);
    assert.deepEqual(r.value.resources, resources);
    goldenResponse(ApiKey.AlterConfigs, 0, { responses: [{ errorCode: 0, errorMessage: null, resourceType: 2, resourceName: 't' }] }, hex(`
      00000014 00000007 00000000  # size 20, correlation, throttle
      00000001 0000 ffff 02 0001 74   # no error, message null, topic "t"
    `));
  });

  it('IncrementalAlterConfigs v1 request and response', () => {
    const resources = [
      {
        resourceType: 2,
        resourceName: 't',
        configs: [
          { name: 'a', configOperation: 0, value: 'b' },
          { name: 'c', configOperation: 1, value: null },
        ],
      },
    ];
    const r = goldenRequest(ApiKey.IncrementalAlterConfigs, 1, 'c', { resources, validateOnly: true }, hex(`
      0000001f 002c 0001 00000007 0001 63 00
      02 02 02 74               # 1 resource (compact): topic "t"
      03                        # 2 configs (compact)
        02 61 00 02 62 00       # a SET b, tagged fields
        02 63 01 00 00          # c DELETE (value null), tagged fields
      00                        # resource tagged fields
      01 00                     # validate only: true, tagged fields
    `));
    assert.ok(r.ok);
    assert.deepEqual(r.value.resources, resources);
    goldenResponse(ApiKey.IncrementalAlterConfigs, 1, { responses: [{ errorCode: 0, errorMessage: null, resourceType: 2, resourceName: 't' }] }, hex(`
      00000012 00000007 00 00000000   # size 18, correlation, header tagged fields, throttle
      02 0000 00 02 02 74 00          # 1 response: no error, message null, topic "t", tagged fields
      00                              # tagged fields
    `));
  });
});

describe('records given as a chunk list', () => {
  for (const version of [4, 11, 12]) {
    it(`encode the same bytes as one joined buffer (Fetch v${version}), keeping the views as chunks`, () => {
      const a = Buffer.alloc(5000, 1);
      const b = Buffer.alloc(7000, 2);
      const response = (records: Buffer | Buffer[]) => ({
        responses: [{ topic: 't', partitions: [{ partitionIndex: 0, highWatermark: 9, records }] }],
      });
      const chunks = encodeResponse(ApiKey.Fetch, version, 7, response([a, b]));
      assert.deepEqual(joinChunks(chunks), joinChunks(encodeResponse(ApiKey.Fetch, version, 7, response(Buffer.concat([a, b])))));
      assert.ok(chunks.includes(a) && chunks.includes(b), 'the batch views are not copied');
      const decoded = decodeResponse(ApiKey.Fetch, version, joinChunks(chunks).subarray(4));
      assert.ok(decoded.ok);
      assert.deepEqual(decoded.body.responses[0]!.partitions[0]!.records, Buffer.concat([a, b]));
    });
  }
});
