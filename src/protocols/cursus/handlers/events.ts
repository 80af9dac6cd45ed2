// The event-sourcing commands (spec "Event Sourcing Commands"; docs/protocols/cursus-wire-v2.md
// §5, IDs 25-29) over CursusEventStore (../event-store.ts), and the aggregate replay proof
// commands (IDs 42-43) over its proofs.
//
// READ_STREAM answers two stream frames (docs §3): the JSON envelope, then the CBV2 batch of the
// events with END. Its failures are one stream frame of status ERROR whose message is the JSON
// error envelope (`{"status":"ERROR","error":"invalid_from_version"}`).

import { optionalInt, optionalText, requiredBytes, requiredInt, requiredText } from '../args.js';
import { encodeBatch } from '../codec/batch.js';
import type { CursusError } from '../codec/errors.js';
import { formatLine } from '../codec/lines.js';
import { CursusFailure, type CursusCommandHandler, type CursusRequest } from '../handler.js';
import { rangeReadRecordsMax } from '../event-store-proofs.js';

const u32Max = 0xffffffff;
const versionMax = Number.MAX_SAFE_INTEGER;

/** from_version: missing is 1; zero or anything but a positive decimal is invalid_from_version. */
function fromVersion(req: CursusRequest): number | null {
  const v = optionalText(req, 'from_version');
  if (v === undefined) return 1;
  if (!/^[1-9][0-9]{0,15}$/.test(v) || Number(v) > versionMax) return null;
  return Number(v);
}

/** The JSON error envelope a READ_STREAM failure carries as its message. */
function readStreamError(e: CursusError): CursusError {
  return { ...e, message: JSON.stringify({ status: 'ERROR', error: formatLine(e.code, e.fields) }) };
}

/** Metadata must be JSON text when given. */
function metadataOf(req: CursusRequest): string | undefined {
  const m = optionalText(req, 'metadata');
  if (m === undefined || m === '') return m;
  try {
    JSON.parse(m);
  } catch {
    throw CursusFailure.of('invalid_metadata', [['command', req.command]], 'metadata must be JSON text');
  }
  return m;
}

export const eventHandlers: readonly CursusCommandHandler[] = [
  {
    command: 'APPEND_STREAM',
    permissions: ['topic.write'],
    topicPolicy: 'write',
    async handle(ctx, req) {
      const r = await ctx.services.events.append({
        topic: requiredText(req, 'topic'),
        key: requiredBytes(req, 'key'),
        version: requiredInt(req, 'version', 1, versionMax),
        eventType: optionalText(req, 'event_type'),
        schemaVersion: optionalInt(req, 'schema_version', 0, u32Max) ?? 1,
        metadata: metadataOf(req),
        eventId: optionalText(req, 'event_id'),
        producerId: optionalText(req, 'producerId'),
        seqNum: optionalInt(req, 'seqNum', 0, versionMax),
        epoch: optionalInt(req, 'epoch', 0, versionMax),
        message: requiredBytes(req, 'message'),
      });
      return { kind: 'text', fields: [['version', String(r.version)], ['offset', String(r.offset)], ['partition', String(r.partition)]] };
    },
  },
  {
    command: 'READ_STREAM',
    permissions: ['topic.read'],
    topicPolicy: 'read',
    handle(ctx, req) {
      return {
        kind: 'stream',
        async run(sink) {
          try {
            const topic = requiredText(req, 'topic');
            const key = requiredBytes(req, 'key');
            const from = fromVersion(req);
            if (from === null) throw CursusFailure.of('invalid_from_version');
            const read = await ctx.services.events.read(topic, key, from);
            const envelope: Record<string, unknown> = { status: 'OK', topic, key: key.toString('utf8'), partition: read.partition, count: read.records.length };
            if (read.snapshot !== null) envelope.snapshot = { version: read.snapshot.version, payload: read.snapshot.payload.toString('utf8') };
            const batch = encodeBatch({ idempotent: false, topic, partition: read.partition, acks: '1', batchStart: 0, batchEnd: 0, records: read.records });
            await sink.send([Buffer.from(JSON.stringify(envelope), 'utf8')]);
            await sink.send(batch, true);
          } catch (err) {
            if (!(err instanceof CursusFailure)) throw err;
            await sink.fail(readStreamError(err.error));
          }
        },
      };
    },
  },
  {
    command: 'STREAM_VERSION',
    permissions: ['topic.read'],
    topicPolicy: 'read',
    async handle(ctx, req) {
      const version = await ctx.services.events.version(requiredText(req, 'topic'), requiredBytes(req, 'key'));
      return { kind: 'text', fields: [['version', String(version)]] };
    },
  },
  {
    command: 'SAVE_SNAPSHOT',
    permissions: ['topic.write'],
    topicPolicy: 'write',
    async handle(ctx, req) {
      const version = requiredInt(req, 'version', 1, versionMax);
      const partition = await ctx.services.events.saveSnapshot(requiredText(req, 'topic'), requiredBytes(req, 'key'), version, requiredBytes(req, 'message'));
      return { kind: 'text', fields: [['version', String(version)], ['partition', String(partition)]] };
    },
  },
  {
    command: 'READ_SNAPSHOT',
    permissions: ['topic.read'],
    topicPolicy: 'read',
    async handle(ctx, req) {
      const s = await ctx.services.events.readSnapshot(requiredText(req, 'topic'), requiredBytes(req, 'key'));
      const json = s === null ? 'null' : JSON.stringify({ version: s.version, payload: s.payload.toString('utf8') });
      return { kind: 'text', fields: [['snapshot', json]] };
    },
  },
  {
    command: 'AGGREGATE_REPLAY_PROOF',
    permissions: ['topic.read'],
    topicPolicy: 'read',
    async handle(ctx, req) {
      const { proof } = await ctx.services.events.proofs.prove({
        topic: requiredText(req, 'topic'),
        matchId: requiredText(req, 'match_id'),
        partition: optionalInt(req, 'partition', 0, 0x7fffffff),
        expectedLastSequence: optionalInt(req, 'expected_last_sequence', 1, versionMax),
      });
      return { kind: 'text', fields: [['proof', JSON.stringify(proof)]] };
    },
  },
  {
    command: 'AGGREGATE_EVENT_RANGE_READ',
    permissions: ['topic.read'],
    topicPolicy: 'read',
    async handle(ctx, req) {
      const fromSequence = requiredInt(req, 'from_sequence', 1, versionMax);
      const toSequence = requiredInt(req, 'to_sequence', 1, versionMax);
      if (toSequence < fromSequence) throw CursusFailure.of('invalid_to_sequence', [['command', req.command]], 'to_sequence is below from_sequence');
      const r = await ctx.services.events.proofs.rangeRead({
        topic: requiredText(req, 'topic'),
        matchId: requiredText(req, 'match_id'),
        partition: undefined,
        expectedLastSequence: undefined,
        fromSequence,
        toSequence,
        maxRecords: requiredInt(req, 'max_records', 1, rangeReadRecordsMax),
      });
      return { kind: 'json', value: { status: 'OK', proof: r.proof, events: r.events } };
    },
  },
];
