// The transaction commands (spec "Transaction Coordinator"; docs/protocols/cursus-wire-v2.md §5,
// IDs 15-20) over CursusTransactions (../transactions.ts). Each reads its CRQ2 fields, calls the
// service and answers the spec's OK line.

import { optionalBytes, optionalInt, requiredBytes, requiredInt, requiredText } from '../args.js';
import { CursusFailure, type CursusCommandHandler, type CursusRequest } from '../handler.js';
import { txnOffsetEntriesMax, type TxnCaller } from '../transactions.js';

/** Epochs are u16 in the core (Kafka's producer epoch). */
const epochMax = 0x7fff;

function caller(req: CursusRequest): TxnCaller {
  return { transactionalId: requiredText(req, 'transactional_id'), producerId: requiredText(req, 'producerId'), epoch: requiredInt(req, 'epoch', 0, epochMax) };
}

/**
 * `P<partition>:<nextOffset>,...` (as BATCH_COMMIT): at least one, at most txnOffsetEntriesMax,
 * no partition twice.
 */
export function parseTxnOffsets(req: CursusRequest, group: string, topic: string): Array<{ partition: number; offset: number }> {
  const raw = requiredText(req, 'offsets');
  const items = raw.split(',').filter((s) => s !== '');
  if (items.length === 0) throw CursusFailure.of('no_valid_offsets', [['command', req.command]]);
  if (items.length > txnOffsetEntriesMax) throw CursusFailure.of('invalid_offsets', [['command', req.command], ['reason', `more than ${txnOffsetEntriesMax} entries`]]);
  const seen = new Set<number>();
  return items.map((item) => {
    const m = /^P(0|[1-9][0-9]{0,9}):(0|[1-9][0-9]{0,15})$/.exec(item);
    const partition = m ? Number(m[1]) : NaN;
    const offset = m ? Number(m[2]) : NaN;
    if (!m || partition > 0x7fffffff || !Number.isSafeInteger(offset)) throw CursusFailure.of('invalid_offsets', [['command', req.command], ['reason', `bad entry ${JSON.stringify(item)}`]]);
    if (seen.has(partition)) throw CursusFailure.of('duplicate_partition', [['partition', String(partition)], ['group', group], ['topic', topic]]);
    seen.add(partition);
    return { partition, offset };
  });
}

export const transactionHandlers: readonly CursusCommandHandler[] = [
  {
    command: 'INIT_PRODUCER_ID',
    permissions: ['transaction'],
    async handle(ctx, req) {
      const transactionalId = requiredText(req, 'transactional_id');
      const r = await ctx.services.transactions.initProducerId(transactionalId);
      return { kind: 'text', fields: [['transactional_id', transactionalId], ['producerId', r.producerId], ['epoch', String(r.epoch)]] };
    },
  },
  {
    command: 'BEGIN_TXN',
    permissions: ['transaction'],
    async handle(ctx, req) {
      const c = caller(req);
      await ctx.services.transactions.begin(c);
      return { kind: 'text', fields: [['transactional_id', c.transactionalId], ['state', 'open'], ['producerId', c.producerId], ['epoch', String(c.epoch)]] };
    },
  },
  {
    command: 'TXN_PUBLISH',
    permissions: ['transaction', 'topic.write'],
    topicPolicy: 'write',
    async handle(ctx, req) {
      const c = caller(req);
      const topic = requiredText(req, 'topic');
      const seqNum = requiredInt(req, 'seqNum', 1, 0x7fffffff);
      const partition = optionalInt(req, 'partition', 0, 0x7fffffff);
      const message = requiredBytes(req, 'message');
      const key = optionalBytes(req, 'key');
      const written = await ctx.services.transactions.publish({ ...c, topic, partition, key, seqNum, message });
      return { kind: 'text', fields: [['transactional_id', c.transactionalId], ['appended', 'true'], ['topic', topic], ['partition', String(written)], ['state', 'open']] };
    },
  },
  {
    command: 'SEND_OFFSETS_TO_TXN',
    permissions: ['transaction', 'group'],
    async handle(ctx, req) {
      const c = caller(req);
      const topic = requiredText(req, 'topic');
      const group = requiredText(req, 'group');
      const member = requiredText(req, 'member');
      const generation = requiredInt(req, 'generation', 0, 0x7fffffff);
      const offsets = parseTxnOffsets(req, group, topic);
      const staged = await ctx.services.transactions.sendOffsets({ ...c, topic, group, member, generation, offsets });
      return { kind: 'text', fields: [['transactional_id', c.transactionalId], ['staged_offsets', String(staged)]] };
    },
  },
  {
    command: 'END_TXN',
    permissions: ['transaction'],
    async handle(ctx, req) {
      const c = caller(req);
      const result = requiredText(req, 'result');
      if (result !== 'commit' && result !== 'abort') throw CursusFailure.of('invalid_result', [['command', req.command]], 'result must be commit or abort');
      const s = await ctx.services.transactions.end(c, result === 'commit');
      return { kind: 'text', fields: [['transactional_id', c.transactionalId], ['state', s.state], ['messages', String(s.messages)], ['offsets', String(s.offsets)]] };
    },
  },
  {
    command: 'TXN_STATUS',
    permissions: ['transaction'],
    handle(ctx, req) {
      const transactionalId = requiredText(req, 'transactional_id');
      const s = ctx.services.transactions.status(transactionalId);
      return {
        kind: 'text',
        fields: [['transactional_id', transactionalId], ['mode', 'exactly_once'], ['state', s.state], ['messages', String(s.messages)], ['participants', String(s.participants)], ['offsets', String(s.offsets)]],
      };
    },
  },
];
