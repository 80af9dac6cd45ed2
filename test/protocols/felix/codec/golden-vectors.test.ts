// Felix wire v1 vectors, both sets. The public ones (../shared/vectors/felix, from the Felix
// repository; skipped when the shared directory is not beside the clone): every .hex decodes to the
// fields its .json names and re-encodes byte for byte. Ours (test/vectors/felix): the files are
// what build.ts assembles from the pinned document, every positive one decodes to what its check
// says and re-encodes byte for byte, every `bad_` one is refused at the stage it names. A vector
// without a check fails the suite, so none can be skipped silently.

import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { preAuthPayloadBytesMax, publishPayloads, recordPayloads, type FelixFrame } from '../../../../src/protocols/felix/codec/index.js';
import { readme, vectors, vectorsDir } from '../../../vectors/felix/build.js';
import { assertMatchesJson, assertMessageMatches, readHex, roundTrip, runFrame } from './vector-helpers.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..', '..');
const sharedDir = path.resolve(repoRoot, '..', 'shared', 'vectors', 'felix');
const sharedMissing = existsSync(sharedDir) ? false : `no ${sharedDir} beside the clone: the public Felix vectors are not checked`;

interface PublicVector {
  name: string;
  kind?: string;
  flags?: number;
  payload_json?: string;
  payload_hex: string;
  frame_hex: string;
  [field: string]: unknown;
}

function utf8(b: Buffer): string {
  return b.toString('utf8');
}

/** The binary fields a public vector states, against the decoded frame. */
function checkBinaryFields(v: PublicVector, frame: FelixFrame): void {
  switch (v.kind) {
    case 'binary_acked_publish_batch':
    case 'binary_publish_batch': {
      assert.equal(frame.kind, 'publish_batch');
      if (frame.kind !== 'publish_batch') return;
      const b = frame.batch;
      if (v.kind === 'binary_acked_publish_batch') {
        assert.equal(b.acked?.requestId, BigInt(v.request_id as number));
        assert.equal(b.acked?.ackMode, v.ack_mode);
      } else assert.equal(b.acked, null);
      assert.equal(b.key === null ? undefined : utf8(b.key), v.key_utf8);
      assert.deepEqual([b.tenantId, b.namespace, b.stream], [v.tenant_id, v.namespace, v.stream]);
      assert.deepEqual(publishPayloads(b).map(utf8), v.payloads_utf8);
      return;
    }
    case 'binary_publish_ack':
      assert.equal(frame.kind, 'publish_ack');
      if (frame.kind !== 'publish_ack') return;
      assert.equal(frame.ack.requestId, BigInt(v.request_id as number));
      assert.equal(frame.ack.error === null ? 'ok' : 'error', v.status);
      assert.equal(frame.ack.error, v.message);
      assert.equal(frame.ack.owner, null);
      return;
    default:
      assert.fail(`vector ${v.name}: unknown kind ${v.kind}`);
  }
}

describe('felix public vectors', () => {
  if (sharedMissing !== false) {
    it('are checked when ../shared/vectors/felix exists', { skip: sharedMissing }, () => {});
    return;
  }
  const files = readdirSync(sharedDir);
  const names = files.filter((f) => f.endsWith('.hex')).map((f) => f.slice(0, -4)).sort();

  it('pairs every .hex with a .json', () => {
    assert.deepEqual(files.filter((f) => f.endsWith('.json')).map((f) => f.slice(0, -5)).sort(), names);
    assert.ok(names.length >= 15, `${names.length} vectors`);
  });

  for (const name of names) {
    it(name, () => {
      const v = JSON.parse(readFileSync(path.join(sharedDir, `${name}.json`), 'utf8')) as PublicVector;
      const bytes = readHex(path.join(sharedDir, `${name}.hex`));
      assert.equal(bytes.toString('hex'), v.frame_hex);
      assert.equal(bytes.subarray(12).toString('hex'), v.payload_hex);
      // Every public vector is small enough to be sent before authentication.
      assert.ok(bytes.length - 12 <= preAuthPayloadBytesMax);
      const frame = roundTrip(bytes);
      const flags = bytes.readUInt16BE(6);
      if (v.kind === undefined || v.kind === 'json_message') {
        assert.equal(flags, 0);
        assert.equal(frame.kind, 'message');
        if (frame.kind === 'message') assertMessageMatches(frame.message, v.payload_json!);
      } else {
        assert.equal(flags, v.flags);
        checkBinaryFields(v, frame);
      }
    });
  }
});

/** The decoded frames our binary vectors must give (the JSON ones are checked against their text). */
const binaryChecks: Record<string, (f: FelixFrame) => void> = {
  event_batch_shared(f) {
    assert.ok(f.kind === 'event_batch');
    assert.deepEqual([f.batch.subscriptionId, f.batch.baseOffset], [null, null]);
    assert.deepEqual(recordPayloads(f.batch.records).map(utf8), ['a', 'bc']);
  },
  event_batch_shared_offsets(f) {
    assert.ok(f.kind === 'event_batch');
    assert.deepEqual([f.batch.subscriptionId, f.batch.baseOffset], [null, 41n]);
    assert.deepEqual(recordPayloads(f.batch.records).map(utf8), ['a', 'bc']);
  },
  event_batch_shared_empty(f) {
    assert.ok(f.kind === 'event_batch');
    assert.equal(f.batch.records.count, 0);
  },
  event_batch_legacy(f) {
    assert.ok(f.kind === 'event_batch');
    assert.deepEqual([f.batch.subscriptionId, f.batch.baseOffset], [7n, null]);
    assert.deepEqual(recordPayloads(f.batch.records).map(utf8), ['hello']);
  },
  event_batch_legacy_offsets(f) {
    assert.ok(f.kind === 'event_batch');
    assert.deepEqual([f.batch.subscriptionId, f.batch.baseOffset], [7n, 1000n]);
    assert.deepEqual(recordPayloads(f.batch.records).map(utf8), ['x', '', 'yz']);
  },
  binary_publish_batch(f) {
    assert.ok(f.kind === 'publish_batch');
    assert.deepEqual([f.batch.acked, f.batch.key, f.batch.tenantId, f.batch.namespace, f.batch.stream], [null, null, 't1', 'default', 'demo']);
    assert.deepEqual(publishPayloads(f.batch).map(utf8), ['hello', 'world']);
  },
  binary_publish_acked_per_message(f) {
    assert.ok(f.kind === 'publish_batch');
    assert.deepEqual(f.batch.acked, { requestId: 8n, ackMode: 'per_message' });
    assert.equal(f.batch.key, null);
    assert.deepEqual(publishPayloads(f.batch).map(utf8), ['a']);
  },
  binary_publish_keyed_empty_key(f) {
    assert.ok(f.kind === 'publish_batch');
    assert.ok(f.batch.key !== null && f.batch.key.length === 0, 'the empty key is a key');
    assert.equal(f.batch.acked, null);
  },
  binary_publish_ack_owner(f) {
    assert.ok(f.kind === 'publish_ack');
    assert.deepEqual(f.ack, { requestId: 7n, error: null, owner: { nodeId: 'broker-b', addr: '10.0.0.5:5000', generation: 3n } });
  },
  binary_publish_ack_owner_no_addr(f) {
    assert.ok(f.kind === 'publish_ack');
    assert.deepEqual(f.ack, { requestId: 7n, error: null, owner: { nodeId: 'broker-b', addr: null, generation: 4n } });
  },
};

/** Where each negative vector is refused. */
const refusedAt: Record<string, 'header' | 'flags' | 'payload'> = {
  bad_magic: 'header',
  bad_version: 'header',
  bad_truncated_header: 'header',
  bad_preauth_oversize: 'header',
  bad_flags_unknown_bit: 'flags',
  bad_flags_modifier_alone: 'flags',
  bad_flags_two_event_bases: 'flags',
  bad_json_unknown_type: 'payload',
  bad_json_duplicate_field: 'payload',
  bad_json_float_u64: 'payload',
  bad_json_missing_field: 'payload',
  bad_json_base64: 'payload',
  bad_json_trailing: 'payload',
  bad_publish_count: 'payload',
  bad_publish_trailing: 'payload',
  bad_publish_ack_mode: 'payload',
  bad_publish_tenant_utf8: 'payload',
  bad_ack_status: 'payload',
  bad_event_record_length: 'payload',
};

describe('felix vectors of our own', () => {
  const built = vectors();
  const names = readdirSync(vectorsDir)
    .filter((f) => f.endsWith('.hex'))
    .map((f) => f.slice(0, -4))
    .sort();

  it('the files are what build.ts assembles, and the README lists them', () => {
    assert.deepEqual(names, Object.keys(built).sort());
    for (const name of names) assert.equal(readHex(path.join(vectorsDir, `${name}.hex`)).toString('hex'), built[name]!.bytes.toString('hex'), name);
    assert.equal(readFileSync(path.join(vectorsDir, 'README.md'), 'utf8'), readme(built));
  });

  for (const name of names) {
    it(name, () => {
      const bytes = readHex(path.join(vectorsDir, `${name}.hex`));
      if (name.startsWith('bad_')) {
        const stage = refusedAt[name];
        assert.ok(stage !== undefined, `no expected stage for ${name}`);
        // The pre-auth limit is what refuses the oversize header.
        const o = runFrame(bytes, preAuthPayloadBytesMax);
        if (o.stage === 'ok') assert.fail(`${name} decoded`);
        assert.equal(o.stage, stage, o.reason);
        assert.ok(o.reason.length > 0);
        return;
      }
      const frame = roundTrip(bytes);
      if (bytes.readUInt16BE(6) === 0) {
        assert.equal(frame.kind, 'message');
        if (frame.kind === 'message') assertMessageMatches(frame.message, bytes.subarray(12).toString('utf8'));
        return;
      }
      const check = binaryChecks[name];
      assert.ok(check !== undefined, `no check for ${name}`);
      check(frame);
    });
  }

  it('keeps a u64 above 2^53 exact', () => {
    const frame = roundTrip(readHex(path.join(vectorsDir, 'producer_init_ok.hex')));
    assert.ok(frame.kind === 'message' && frame.message.type === 'producer_init_ok');
    assert.equal(frame.message.producerId, 18364758544493064720n);
  });

  it('matches the tagged enums field for field', () => {
    const gap = roundTrip(readHex(path.join(vectorsDir, 'publish_refused_gap.hex')));
    assert.ok(gap.kind === 'message' && gap.message.type === 'publish_refused');
    assert.deepEqual(gap.message.reason, { kind: 'sequence_gap', expected: 3n });
    assertMatchesJson(gap.message.reason, { sequence_gap: { expected: 3 } }, 'reason');
  });
});
