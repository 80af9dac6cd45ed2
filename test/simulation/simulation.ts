// The deterministic simulation of the core (in the spirit of TigerBeetle's VOPR and FoundationDB's
// simulator): one seed drives a random workload of Kafka produce (plain, idempotent, concurrent
// bursts that share a group commit), Kafka transactions, Iggy sends, Kafka fetches and Iggy polls,
// Kafka group and Iggy consumer offset commits, retention passes and simulated time, with a fault
// armed at a file operation now and then (EIO, ENOSPC, torn writes, failed fsyncs, a crash at an
// operation or a byte count) and clean restarts and crashes. After every step it reads every
// partition back through both protocols and checks the invariants (checkInvariants). The model
// is of a process crash: what reached the files stays (the page cache survives), the rest is gone.

import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, sep } from 'node:path';
import { ManualClock } from '../../src/base/clock.js';
import { ErrorCode } from '../../src/protocols/kafka/codec/errors.js';
import { buildRecordBatch } from '../../src/protocols/kafka/codec/record-batch.js';
import { produceHandler } from '../../src/protocols/kafka/handlers/produce.js';
import { deleteRecordsHandler } from '../../src/protocols/kafka/handlers/delete-records.js';
import { offsetCommitHandler } from '../../src/protocols/kafka/handlers/offset-commit.js';
import { joinGroupHandler } from '../../src/protocols/kafka/handlers/join-group.js';
import { syncGroupHandler } from '../../src/protocols/kafka/handlers/sync-group.js';
import { offsetFetchHandler } from '../../src/protocols/kafka/handlers/offset-fetch.js';
import { initProducerIdHandler } from '../../src/protocols/kafka/handlers/init-producer-id.js';
import { addPartitionsToTxnHandler } from '../../src/protocols/kafka/handlers/add-partitions-to-txn.js';
import { endTxnHandler } from '../../src/protocols/kafka/handlers/end-txn.js';
import { ConsumerKind, encodeBatch, numericId, stringId, type MessageInput } from '../../src/protocols/iggy/codec/index.js';
import { SimDisk, type FaultKind } from './faulty-disk.js';
import { CommandCode, SimNode } from './node.js';
import { Model, OffsetRegister, idOf, partitionKey, type TopicSpec } from './model.js';
import { Prng } from './prng.js';
import { BadRead, fetchRecords, pollRecords } from './readers.js';

const startMs = 1_700_000_000_000;
const groupId = 'sim-group';
const iggyConsumerId = 7;
/** Reads of a partition during a check stop after this many requests (a bound, never reached). */
const checkReadsMax = 1_000;

export const topics: readonly TopicSpec[] = [
  // Group commit: every append waits for its fsync; small segments so that retention has work.
  { name: 'alpha', partitions: 2, retentionMs: 20_000, compacted: false, config: { 'quartet.fsync.policy': 'always', 'segment.bytes': '1024', 'retention.ms': '20000' } },
  // The interval policy with an interval no run reaches (the timer is real time, not simulated).
  { name: 'beta', partitions: 1, retentionMs: -1, compacted: false, config: { 'quartet.fsync.policy': 'interval', 'flush.ms': '3600000', 'segment.bytes': '2048', 'retention.ms': '-1' } },
  // Compaction (on each retention pass) rewriting small segments of keyed Kafka records.
  { name: 'gamma', partitions: 1, retentionMs: -1, compacted: true, config: { 'cleanup.policy': 'compact', 'segment.bytes': '1024', 'retention.ms': '-1' } },
];
/** The topics every writer uses; the compacted one takes keyed Kafka records only (kafkaKeyed). */
const plainTopics = topics.filter((t) => !t.compacted);
const keysPerCompactedTopic = 5;

const ops = {
  deleteRecords: 2,
  kafkaPlain: 10,
  kafkaKeyed: 8,
  kafkaIdempotent: 12,
  groupCommitBurst: 5,
  iggySend: 10,
  txnProduce: 8,
  txnEnd: 4,
  kafkaFetch: 6,
  iggyPoll: 6,
  kafkaCommit: 5,
  iggyCommit: 4,
  advanceTime: 6,
  retention: 4,
  restart: 2,
  crash: 2,
} as const;
type Op = keyof typeof ops;

const faults: Readonly<Record<FaultKind, number>> = {
  'eio-write': 3,
  'torn-write': 3,
  'eio-fsync': 2,
  'eio-any': 3,
  'enospc-any': 2,
  'crash-op': 2,
  'crash-bytes': 2,
};

export interface SimulationOptions {
  seed: number;
  steps: number;
  /** Probability that a step runs with a fault armed. */
  faultRate?: number;
}

export interface SimulationReport {
  seed: number;
  steps: number;
  restarts: number;
  crashes: number;
  faultsFired: number;
  recordsAcked: number;
  /** Acknowledged records of the compacted topic that compaction removed (at the last check). */
  recordsCompacted: number;
  /** A digest of every step taken and every answer received: equal for two runs of one seed. */
  traceDigest: string;
}

/** An invariant that did not hold, with the seed that replays it. */
export class InvariantViolation extends Error {
  constructor(seed: number, step: number, trace: readonly string[], problem: string) {
    super(`simulation seed ${seed}, step ${step}: ${problem}\nlast steps:\n  ${trace.slice(-15).join('\n  ')}\nreplay: QUARTET_SIM_SEED=${seed} node --import tsx --test test/simulation/core.test.ts`);
    this.name = 'InvariantViolation';
  }
}

interface IdempotentProducer {
  producerId: number;
  epoch: number;
  sequence: Map<string, number>;
}

interface TxnProducer extends IdempotentProducer {
  /** The transaction under way (its number), or null. */
  txn: number | null;
  added: Set<string>;
  /** InitProducerId must run before the next transaction (after any failure). */
  needsInit: boolean;
}

export class Simulation {
  private readonly rng: Prng;
  private readonly model: Model;
  private readonly clock = new ManualClock(startMs);
  private readonly dataDir = mkdtempSync(join(tmpdir(), 'quartet-sim-'));
  private node!: SimNode;
  private readonly zombies: SimNode[] = [];
  private readonly trace: string[] = [];
  private readonly digest = createHash('sha256');
  private step = 0;
  /** The partition the step's armed fault watches, or null. */
  private faultTarget: { topic: string; partition: number } | null = null;
  private idempotent: IdempotentProducer | null = null;
  private readonly txnProducer: TxnProducer = { producerId: -1, epoch: -1, sequence: new Map(), txn: null, added: new Set(), needsInit: true };
  private nextTxn = 1;
  /** This client's membership of the Kafka group, or null. */
  private member: { memberId: string; generationId: number } | null = null;
  /** The highest offset a DeleteRecords was sent for, per partition. */
  private readonly deletedBefore = new Map<string, number>();
  private readonly kafkaCommits = new Map<string, OffsetRegister>();
  private readonly iggyCommits = new Map<string, OffsetRegister>();
  private readonly report: SimulationReport;

  constructor(private readonly options: SimulationOptions) {
    this.rng = new Prng(options.seed);
    this.model = new Model(options.seed);
    this.report = { seed: options.seed, steps: 0, restarts: 0, crashes: 0, faultsFired: 0, recordsAcked: 0, recordsCompacted: 0, traceDigest: '' };
    for (const t of topics) {
      for (let p = 0; p < t.partitions; p++) {
        this.kafkaCommits.set(partitionKey(t.name, p), new OffsetRegister());
        this.iggyCommits.set(partitionKey(t.name, p), new OffsetRegister());
      }
    }
  }

  async run(): Promise<SimulationReport> {
    try {
      this.node = await SimNode.open(this.dataDir, new SimDisk(), this.clock);
      for (const t of topics) await this.node.broker.createTopic('default', t.name, { partitions: t.partitions, config: t.config });
      for (this.step = 1; this.step <= this.options.steps; this.step++) {
        await this.runStep();
        await this.checkInvariants();
      }
      await this.restart(false);
      await this.checkInvariants();
      this.report.steps = this.options.steps;
      this.report.recordsAcked = [...this.model.records.values()].filter((r) => r.state !== 'maybe').length;
      this.report.traceDigest = this.digest.digest('hex');
      return this.report;
    } finally {
      await this.node?.release();
      for (const z of this.zombies) await z.release();
      rmSync(this.dataDir, { recursive: true, force: true });
    }
  }

  private fail(problem: string): never {
    throw new InvariantViolation(this.options.seed, this.step, this.trace, problem);
  }

  private note(text: string): void {
    const line = text.replaceAll(this.dataDir, '<dir>');
    this.digest.update(`${this.step}: ${line}\n`);
    this.trace.push(`${this.step}: ${line}`);
    if (this.trace.length > 50) this.trace.shift();
  }

  // --- steps -----------------------------------------------------------------------------------

  private async runStep(): Promise<void> {
    const op = this.rng.weighted<Op>(ops);
    const disk = this.node.disk;
    if (this.rng.chance(this.options.faultRate ?? 0.2) && op !== 'restart' && op !== 'crash') {
      const kind = this.rng.weighted(faults);
      const { topic, partition } = this.pickAnyPartition();
      // The step's own partition, most of the time: a fault elsewhere would mostly wait unfired.
      this.faultTarget = { topic, partition };
      const fault = { kind, after: this.rng.chance(0.5) ? 0 : this.rng.int(4), bytes: this.rng.between(0, kind === 'crash-bytes' ? 400 : 60), scope: this.partitionDir(topic, partition) };
      disk.arm(fault);
      this.note(`arm ${kind} at ${topic}/${partition} after ${fault.after} (${fault.bytes} bytes)`);
    }
    this.note(op);
    await this.runOp(op);
    this.faultTarget = null;
    disk.disarm();
    if (disk.crashed && this.node.disk === disk) {
      this.note('the disk died: the process crashed');
      await this.restart(true);
    }
  }

  private runOp(op: Op): Promise<void> {
    switch (op) {
      case 'deleteRecords':
        return this.deleteRecords();
      case 'kafkaPlain':
        return this.kafkaPlain();
      case 'kafkaKeyed':
        return this.kafkaKeyed();
      case 'kafkaIdempotent':
        return this.kafkaIdempotent();
      case 'groupCommitBurst':
        return this.groupCommitBurst();
      case 'iggySend':
        return this.iggySend();
      case 'txnProduce':
        return this.txnProduce();
      case 'txnEnd':
        return this.txnEnd();
      case 'kafkaFetch':
        return this.kafkaFetchAnywhere();
      case 'iggyPoll':
        return this.iggyPollAnywhere();
      case 'kafkaCommit':
        return this.kafkaCommit();
      case 'iggyCommit':
        return this.iggyCommit();
      case 'advanceTime':
        return this.advanceTime(this.rng.between(100, 8_000));
      case 'retention':
        return this.retention();
      case 'restart':
        return this.restart(false);
      case 'crash':
        return this.restart(true);
    }
  }

  /** A partition's directory (with a trailing separator): the scope of a fault. */
  private partitionDir(topic: string, partition: number): string {
    const internalId = this.node.broker.catalog.requireTopic({ topic }).internalId;
    return join(this.dataDir, 'logs', String(internalId), String(partition)) + sep;
  }

  private pickAnyPartition(): { topic: string; partition: number } {
    if (this.faultTarget !== null && this.rng.chance(0.8)) return this.faultTarget;
    const t = this.rng.pick(topics);
    return { topic: t.name, partition: this.rng.int(t.partitions) };
  }

  private pickPartition(): { topic: string; partition: number } {
    if (this.faultTarget !== null && this.faultTarget.topic !== 'gamma' && this.rng.chance(0.8)) return this.faultTarget;
    const t = this.rng.pick(plainTopics);
    return { topic: t.name, partition: this.rng.int(t.partitions) };
  }

  private values(n: number, topic: string, partition: number, txn: number | null, keyed = false): string[] {
    const out: string[] = [];
    for (let i = 0; i < n; i++) {
      const id = this.model.newId();
      this.model.sent(id, topic, partition, this.clock.now(), txn, keyed ? `k${this.rng.int(keysPerCompactedTopic)}` : null);
      out.push(`${id}:${'x'.repeat(this.rng.between(10, 120))}`);
    }
    return out;
  }

  private kafkaBatch(values: string[], producer?: { producerId: number; producerEpoch: number; baseSequence: number; transactional?: boolean }): Buffer {
    const now = this.clock.now();
    const keyOf = (v: string): Buffer | null => {
      const key = this.model.records.get(idOf(v))?.key ?? null;
      return key === null ? null : Buffer.from(key);
    };
    return buildRecordBatch(
      values.map((v) => ({ timestamp: now, key: keyOf(v), value: Buffer.from(v) })),
      { partitionLeaderEpoch: -1, ...(producer ?? {}) },
    );
  }

  /** A Produce of one batch; the partition's error code and base offset, or a thrown failure as an error. */
  private async produce(topic: string, partition: number, records: Buffer, transactionalId: string | null = null, acks = -1): Promise<{ errorCode: number; baseOffset: number }> {
    try {
      const r = await this.node.kafkaCall(produceHandler, 9, { transactionalId, acks, timeoutMs: 1000, topicData: [{ name: topic, partitionData: [{ index: partition, records }] }] });
      const p = r.responses[0]!.partitionResponses[0]!;
      return { errorCode: p.errorCode, baseOffset: p.baseOffset };
    } catch (error) {
      this.note(`  produce ${topic}/${partition} threw ${String(error)}`);
      return { errorCode: -1, baseOffset: -1 };
    }
  }

  private ack(values: readonly string[], baseOffset: number): void {
    values.forEach((v, i) => this.model.acked(idOf(v), baseOffset + i));
  }

  private async kafkaPlain(): Promise<void> {
    const { topic, partition } = this.pickPartition();
    const values = this.values(this.rng.between(1, 4), topic, partition, null);
    const r = await this.produce(topic, partition, this.kafkaBatch(values), null, this.rng.pick([1, -1]));
    this.note(`  kafka plain ${topic}/${partition} x${values.length}: error ${r.errorCode} at ${r.baseOffset}`);
    if (r.errorCode === ErrorCode.NONE) this.ack(values, r.baseOffset);
  }

  /** Keyed records to the compacted topic. */
  private async kafkaKeyed(): Promise<void> {
    const values = this.values(this.rng.between(1, 4), 'gamma', 0, null, true);
    const r = await this.produce('gamma', 0, this.kafkaBatch(values));
    this.note(`  kafka keyed gamma/0 x${values.length}: error ${r.errorCode} at ${r.baseOffset}`);
    if (r.errorCode === ErrorCode.NONE) this.ack(values, r.baseOffset);
  }

  private async initProducer(transactionalId: string | null): Promise<{ producerId: number; epoch: number } | null> {
    try {
      const r = await this.node.kafkaCall(initProducerIdHandler, 4, { transactionalId, transactionTimeoutMs: 30_000, producerId: -1, producerEpoch: -1 });
      this.note(`  init producer ${transactionalId ?? '(idempotent)'}: error ${r.errorCode} id ${r.producerId}/${r.producerEpoch}`);
      return r.errorCode === ErrorCode.NONE ? { producerId: r.producerId, epoch: r.producerEpoch } : null;
    } catch (error) {
      this.note(`  init producer failed: ${String(error)}`);
      return null;
    }
  }

  /**
   * An idempotent producer's batch, retried with the same sequence as a client retries it (after
   * a restart if the broker died); given up after three tries, when the client starts over with
   * a new producer id.
   */
  private async kafkaIdempotent(): Promise<void> {
    if (this.idempotent === null) {
      const id = await this.initProducer(null);
      if (id === null) return;
      this.idempotent = { ...id, sequence: new Map() };
    }
    const p = this.idempotent;
    const { topic, partition } = this.pickPartition();
    const key = partitionKey(topic, partition);
    const values = this.values(this.rng.between(1, 4), topic, partition, null);
    const baseSequence = p.sequence.get(key) ?? 0;
    const batch = this.kafkaBatch(values, { producerId: p.producerId, producerEpoch: p.epoch, baseSequence });
    for (let attempt = 0; attempt < 3; attempt++) {
      const r = await this.produce(topic, partition, batch);
      this.note(`  kafka idempotent ${key} seq ${baseSequence} x${values.length} try ${attempt}: error ${r.errorCode} at ${r.baseOffset}`);
      if (r.errorCode === ErrorCode.NONE) {
        this.ack(values, r.baseOffset);
        p.sequence.set(key, baseSequence + values.length);
        return;
      }
      this.node.disk.disarm();
      if (this.node.disk.crashed) await this.restart(true);
    }
    this.idempotent = null;
  }

  /** Concurrent appends to one partition: under fsync 'always' they share fsyncs. */
  private async groupCommitBurst(): Promise<void> {
    const topic = 'alpha';
    const partition = this.rng.int(2);
    const batches = Array.from({ length: this.rng.between(2, 5) }, () => this.values(this.rng.between(1, 3), topic, partition, null));
    const results = await Promise.all(batches.map((values) => this.produce(topic, partition, this.kafkaBatch(values))));
    results.forEach((r, i) => {
      this.note(`  burst ${topic}/${partition} #${i}: error ${r.errorCode} at ${r.baseOffset}`);
      if (r.errorCode === ErrorCode.NONE) this.ack(batches[i]!, r.baseOffset);
    });
  }

  private async iggySend(): Promise<void> {
    const { topic, partition } = this.pickPartition();
    const values = this.values(this.rng.between(1, 4), topic, partition, null);
    const origin = BigInt(this.clock.now()) * 1000n;
    const inputs: MessageInput[] = values.map((v, i) => ({ id: 0n, originTimestamp: origin + BigInt(i), payload: Buffer.from(v), userHeaders: Buffer.alloc(0), offsetDelta: i }));
    try {
      const r = await this.node.iggyCall(CommandCode.sendMessages, {
        streamId: stringId('default'),
        topicId: stringId(topic),
        partitioning: { kind: 'partitionId', partitionId: partition },
        messagesCount: values.length,
        batch: Buffer.concat(encodeBatch(inputs)),
      });
      this.note(`  iggy send ${topic}/${partition} x${values.length}: ${r.ok ? `at ${r.value.confirmations[0]?.baseOffset}` : `error ${r.code}`}`);
      if (r.ok) this.ack(values, Number(r.value.confirmations[0]!.baseOffset));
    } catch (error) {
      this.note(`  iggy send failed: ${String(error)}`);
    }
  }

  // --- transactions ----------------------------------------------------------------------------

  private async txnProduce(): Promise<void> {
    const tp = this.txnProducer;
    if (tp.needsInit) {
      const id = await this.initProducer('sim-tx');
      if (id === null) return;
      // InitProducerId aborts (or has aborted) whatever the previous epoch left open.
      Object.assign(tp, { producerId: id.producerId, epoch: id.epoch, needsInit: false, txn: null });
      tp.sequence.clear();
      tp.added.clear();
    }
    const topic = this.rng.chance(0.7) ? 'beta' : 'alpha';
    const partition = topic === 'beta' ? 0 : 1;
    const key = partitionKey(topic, partition);
    if (tp.txn === null) {
      tp.txn = this.nextTxn++;
      this.model.txnCommittable.set(tp.txn, false);
      tp.added.clear();
    }
    if (!tp.added.has(key)) {
      const ok = await this.kafkaOk(async () => {
        const r = await this.node.kafkaCall(addPartitionsToTxnHandler, 3, { transactionalId: 'sim-tx', producerId: tp.producerId, producerEpoch: tp.epoch, topics: [{ name: topic, partitions: [partition] }] });
        return r.results[0]!.results[0]!.partitionErrorCode;
      }, `add ${key} to txn ${tp.txn}`);
      if (!ok) {
        tp.needsInit = true;
        return;
      }
      tp.added.add(key);
    }
    const values = this.values(this.rng.between(1, 3), topic, partition, tp.txn);
    const baseSequence = tp.sequence.get(key) ?? 0;
    const r = await this.produce(topic, partition, this.kafkaBatch(values, { producerId: tp.producerId, producerEpoch: tp.epoch, baseSequence, transactional: true }), 'sim-tx');
    this.note(`  txn ${tp.txn} produce ${key} x${values.length}: error ${r.errorCode} at ${r.baseOffset}`);
    if (r.errorCode !== ErrorCode.NONE) {
      // An abortable error: the client aborts by starting over.
      tp.needsInit = true;
      return;
    }
    this.ack(values, r.baseOffset);
    tp.sequence.set(key, baseSequence + values.length);
  }

  private async txnEnd(): Promise<void> {
    const tp = this.txnProducer;
    if (tp.txn === null || tp.needsInit) return;
    const commit = this.rng.chance(0.6);
    // Once a commit is asked for, its records may become visible whatever the answer.
    if (commit) this.model.txnCommittable.set(tp.txn, true);
    const ok = await this.kafkaOk(async () => (await this.node.kafkaCall(endTxnHandler, 3, { transactionalId: 'sim-tx', producerId: tp.producerId, producerEpoch: tp.epoch, committed: commit })).errorCode, `${commit ? 'commit' : 'abort'} txn ${tp.txn}`);
    tp.txn = null;
    tp.added.clear();
    if (!ok) tp.needsInit = true;
  }

  private async kafkaOk(call: () => Promise<number>, what: string): Promise<boolean> {
    try {
      const code = await call();
      this.note(`  ${what}: error ${code}`);
      return code === ErrorCode.NONE;
    } catch (error) {
      this.note(`  ${what}: ${String(error)}`);
      return false;
    }
  }

  // --- reads and offsets -----------------------------------------------------------------------

  /** A consumer's fetch at a random offset, perhaps under a fault: what it returns must be true. */
  private async kafkaFetchAnywhere(): Promise<void> {
    const { topic, partition } = this.pickAnyPartition();
    const stats = this.node.broker.partition({ topic }, partition).stats();
    const offset = this.rng.between(stats.logStartOffset, stats.highWatermark);
    const isolation = this.rng.int(2);
    const read = await this.read(fetchRecords(this.node, topic, partition, offset, isolation), true);
    this.note(`  kafka fetch ${topic}/${partition} @${offset} iso ${isolation}: ${typeof read === 'string' ? read : `${read.records.length} records`}`);
    if (typeof read !== 'string') this.checkRecordsRead(topic, partition, read.records, isolation === 1, 'kafka fetch');
  }

  private async iggyPollAnywhere(): Promise<void> {
    const { topic, partition } = this.pickAnyPartition();
    const stats = this.node.broker.partition({ topic }, partition).stats();
    const offset = this.rng.between(stats.logStartOffset, stats.highWatermark);
    const read = await this.read(pollRecords(this.node, topic, partition, offset, this.rng.between(1, 50)), true);
    this.note(`  iggy poll ${topic}/${partition} @${offset}: ${typeof read === 'string' ? read : `${read.length} messages`}`);
    if (typeof read !== 'string') this.checkRecordsRead(topic, partition, read, true, 'iggy poll');
  }

  /**
   * A Kafka group offset commit: as the group's one member (JoinGroup and SyncGroup first, again
   * once the member is gone: a restart or a session timeout in simulated time), or, when joining
   * fails, as a simple consumer (generation -1) while the group is empty.
   */
  private async kafkaCommit(): Promise<void> {
    const { topic, partition } = this.pickAnyPartition();
    const register = this.kafkaCommits.get(partitionKey(topic, partition))!;
    const offset = Math.max(register.acked ?? 0, register.lastRead ?? 0) + this.rng.between(0, 20);
    if (this.member === null && this.rng.chance(0.7)) this.member = await this.joinGroup();
    const member = this.member ?? { memberId: '', generationId: -1 };
    let code = -1;
    const ok = await this.kafkaOk(async () => {
      const r = await this.node.kafkaCall(offsetCommitHandler, 8, { groupId, generationIdOrMemberEpoch: member.generationId, memberId: member.memberId, groupInstanceId: null, topics: [{ name: topic, partitions: [{ partitionIndex: partition, committedOffset: offset, committedLeaderEpoch: -1, committedMetadata: null }] }] });
      code = r.topics[0]!.partitions[0]!.errorCode;
      return code;
    }, `kafka commit ${topic}/${partition} = ${offset} as ${member.generationId < 0 ? 'a simple consumer' : `the member of generation ${member.generationId}`}`);
    if (!ok && code !== ErrorCode.KAFKA_STORAGE_ERROR) this.member = null;
    register.commit(offset, ok);
  }

  /** Joins the group as its only member and syncs; null when either fails. */
  private async joinGroup(): Promise<{ memberId: string; generationId: number } | null> {
    const join = this.node.kafkaCall(joinGroupHandler, 3, { groupId, sessionTimeoutMs: 10_000, rebalanceTimeoutMs: 10_000, memberId: '', protocolType: 'consumer', protocols: [{ name: 'range', metadata: Buffer.from('sim') }] });
    // The join completes on the coordinator's timer (a zero initial delay): step it until it does.
    let joined: Awaited<typeof join> | 'pending' = 'pending';
    void join.then((r) => (joined = r), () => (joined = 'pending'));
    for (let turn = 0; turn < 20 && joined === 'pending'; turn++) {
      this.node.scheduler.advance(0);
      await new Promise((resolve) => setImmediate(resolve));
    }
    const j = joined as Awaited<typeof join> | 'pending';
    if (j === 'pending' || j.errorCode !== ErrorCode.NONE) {
      this.note(`  join ${groupId}: ${j === 'pending' ? 'no answer' : `error ${j.errorCode}`}`);
      return null;
    }
    const sync = await this.node.kafkaCall(syncGroupHandler, 3, { groupId, generationId: j.generationId, memberId: j.memberId, assignments: [{ memberId: j.memberId, assignment: Buffer.from('all') }] });
    this.note(`  joined ${groupId} generation ${j.generationId}: sync error ${sync.errorCode}`);
    return sync.errorCode === ErrorCode.NONE ? { memberId: j.memberId, generationId: j.generationId } : null;
  }

  private async iggyCommit(): Promise<void> {
    const { topic, partition } = this.pickAnyPartition();
    const register = this.iggyCommits.get(partitionKey(topic, partition))!;
    const offset = Math.max(register.acked ?? 0, register.lastRead ?? 0) + this.rng.between(0, 20);
    let ok = false;
    try {
      const r = await this.node.iggyCall(CommandCode.storeConsumerOffset, { consumer: { kind: ConsumerKind.consumer, id: numericId(iggyConsumerId) }, streamId: stringId('default'), topicId: stringId(topic), partitionId: partition, offset: BigInt(offset), ack: 0 });
      ok = r.ok;
      this.note(`  iggy commit ${topic}/${partition} = ${offset}: ${r.ok ? 'ok' : `error ${r.code}`}`);
    } catch (error) {
      this.note(`  iggy commit failed: ${String(error)}`);
    }
    register.commit(offset, ok);
  }

  private async advanceTime(ms: number): Promise<void> {
    this.node.scheduler.advance(ms);
    this.note(`  time +${ms} ms`);
    await Promise.resolve();
  }

  /** Kafka DeleteRecords below an offset up to the high watermark: whatever the answer, records below it may go. */
  private async deleteRecords(): Promise<void> {
    const { topic, partition } = this.pickPartition();
    const stats = this.node.broker.partition({ topic }, partition).stats();
    const before = this.rng.between(stats.logStartOffset, stats.highWatermark);
    const key = partitionKey(topic, partition);
    this.deletedBefore.set(key, Math.max(this.deletedBefore.get(key) ?? 0, before));
    await this.kafkaOk(async () => {
      const r = await this.node.kafkaCall(deleteRecordsHandler, 2, { topics: [{ name: topic, partitions: [{ partitionIndex: partition, offset: before }] }], timeoutMs: 1000 });
      return r.topics[0]!.partitions[0]!.errorCode;
    }, `delete records of ${key} before ${before}`);
  }

  /** A retention pass; the check that follows verifies what it deleted. */
  private async retention(): Promise<void> {
    await this.advanceTime(this.rng.between(1_000, 15_000));
    try {
      await this.node.broker.runMaintenance();
      this.note('  retention pass done');
    } catch (error) {
      this.note(`  retention pass failed: ${String(error)}`);
    }
  }

  /** Reopens the broker on the same directory: after a clean close, or after a crash. */
  private async restart(crash: boolean): Promise<void> {
    const old = this.node;
    if (!crash) {
      try {
        await old.close();
        this.report.restarts++;
        this.note('  clean restart');
      } catch (error) {
        this.note(`  close failed (${String(error)}): the process dies`);
        crash = true;
      }
    }
    if (crash) {
      old.crash();
      this.zombies.push(old);
      this.report.crashes++;
      this.note('  crash');
    }
    this.report.faultsFired += [...old.disk.fired.values()].reduce((a, b) => a + b, 0);
    for (let attempt = 0; ; attempt++) {
      const disk = new SimDisk();
      // Recovery runs under faults too, but the last attempt is on a healthy disk.
      if (attempt < 2 && this.rng.chance(0.3)) {
        const { topic, partition } = this.pickAnyPartition();
        disk.arm({ kind: this.rng.pick(['eio-any', 'enospc-any', 'crash-op'] as const), after: this.rng.int(12), bytes: 0, scope: this.partitionDir(topic, partition) });
      }
      try {
        this.node = await SimNode.open(this.dataDir, disk, this.clock);
        disk.disarm();
        this.note(`  reopened (attempt ${attempt})`);
        return;
      } catch (error) {
        this.note(`  reopen attempt ${attempt} failed: ${String(error)}`);
        if (attempt >= 2) this.fail(`the broker does not start on a healthy disk: ${String(error)}`);
      }
    }
  }

  /** What any read returned must be true: each record at its one offset, no aborted or open transaction under read_committed. */
  private checkRecordsRead(topic: string, partition: number, records: ReadonlyArray<{ offset: number; id: string }>, committedOnly: boolean, what: string): void {
    let previous = -1;
    for (const { offset, id } of records) {
      if (offset <= previous) this.fail(`${what} of ${topic}/${partition}: offset ${offset} after ${previous}`);
      previous = offset;
      const facts = this.model.records.get(id);
      if (facts === undefined) this.fail(`${what} of ${topic}/${partition} returned ${id} at ${offset}, a record nobody sent`);
      if (facts.topic !== topic || facts.partition !== partition) this.fail(`${what} of ${topic}/${partition} returned ${id}, sent to ${facts.topic}/${facts.partition}`);
      if (facts.offset !== null && facts.offset !== offset) this.fail(`${what} of ${topic}/${partition} returned ${id} at ${offset}, acknowledged or seen at ${facts.offset}`);
      if (committedOnly && facts.txn !== null && this.model.txnCommittable.get(facts.txn) !== true) this.fail(`${what} (read_committed) of ${topic}/${partition} returned ${id} at ${offset} of transaction ${facts.txn}, never committed`);
      if (facts.state === 'maybe') {
        facts.state = 'seen';
        facts.offset = offset;
      }
    }
  }

  /**
   * A read's result. A read that returns bytes that do not decode breaks an invariant, under a
   * fault too (a failed read must fail, not return garbage); any other failure is the read's
   * answer when `failureAllowed`, and breaks an invariant otherwise (the checks run on a healthy disk).
   */
  private read<T>(read: Promise<T>, failureAllowed: true): Promise<T | string>;
  private read<T>(read: Promise<T>): Promise<T>;
  private async read<T>(read: Promise<T>, failureAllowed = false): Promise<T | string> {
    try {
      return await read;
    } catch (error) {
      if (error instanceof BadRead || !failureAllowed) this.fail(String(error));
      return String(error);
    }
  }

  // --- the invariants --------------------------------------------------------------------------

  /**
   * Reads every partition whole (read_uncommitted and read_committed through Kafka, and through
   * Iggy) on a healthy disk and checks: offsets dense and in order batch after batch; every
   * acknowledged or seen record present exactly once at its offset; no record nobody sent, none
   * twice; read_committed showing no aborted or open transaction and nothing at or past the LSO;
   * retention deleting only what is older than retention.ms; committed offsets never lost or
   * going back.
   */
  private async checkInvariants(): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      this.node.disk.disarm();
      // Work the step left running (a transaction timed out, its markers being written) may have
      // died with the disk since, or dies during the checks: the process crashed then.
      if (this.node.disk.crashed) {
        this.note('the disk died after the step: the process crashed');
        await this.restart(true);
      }
      try {
        for (const t of topics) {
          for (let p = 0; p < t.partitions; p++) await this.checkPartition(t, p);
        }
        await this.checkCommittedOffsets();
        return;
      } catch (error) {
        if (attempt >= 2 || !this.node.disk.crashed) throw error;
      }
    }
  }

  private async checkPartition(t: TopicSpec, partition: number): Promise<void> {
    const key = partitionKey(t.name, partition);
    const stats = this.node.broker.partition({ topic: t.name }, partition).stats();
    const previousStart = this.model.logStart.get(key) ?? 0;
    if (stats.logStartOffset < previousStart) this.fail(`${key}: log start went back from ${previousStart} to ${stats.logStartOffset}`);
    this.model.logStart.set(key, stats.logStartOffset);
    const all = await this.readWhole(t.name, partition, stats.logStartOffset, stats.highWatermark, 0, t.compacted);
    const seenIds = new Set<string>();
    for (const r of all) {
      if (seenIds.has(r.id)) this.fail(`${key}: record ${r.id} is in the log twice`);
      seenIds.add(r.id);
    }
    this.checkRecordsRead(t.name, partition, all, false, 'read_uncommitted');
    const now = this.clock.now();
    const mustHave = this.model.mustHave(t.name, partition);
    const newestOfKey = new Map<string, number>();
    let compactedAway = 0;
    for (const f of mustHave) if (f.key !== null) newestOfKey.set(f.key, Math.max(newestOfKey.get(f.key) ?? -1, f.offset!));
    for (const facts of mustHave) {
      const id = facts.id;
      if (facts.offset! >= stats.logStartOffset) {
        if (facts.offset! >= stats.highWatermark) this.fail(`${key}: acknowledged record ${id} at ${facts.offset} is above the high watermark ${stats.highWatermark}`);
        // Compaction may drop a record once a newer one with its key is in the log.
        const superseded = t.compacted && facts.key !== null && newestOfKey.get(facts.key)! > facts.offset!;
        if (!seenIds.has(id) && !superseded) this.fail(`${key}: acknowledged record ${id} at ${facts.offset} (key ${facts.key}) is lost`);
        if (!seenIds.has(id)) compactedAway++;
      } else if (facts.offset! >= (this.deletedBefore.get(key) ?? 0) && (t.retentionMs < 0 || facts.sentMs >= now - t.retentionMs)) {
        this.fail(`${key}: record ${id} at ${facts.offset}, sent ${now - facts.sentMs} ms ago, is below the log start ${stats.logStartOffset} (retention.ms ${t.retentionMs})`);
      }
    }
    if (t.compacted) this.report.recordsCompacted = compactedAway;
    const committed = await this.readWhole(t.name, partition, stats.logStartOffset, stats.highWatermark, 1, t.compacted);
    this.checkRecordsRead(t.name, partition, committed, true, 'read_committed');
    const polled = await this.pollWhole(t.name, partition, stats.logStartOffset, stats.highWatermark);
    this.checkRecordsRead(t.name, partition, polled, true, 'iggy poll');
    if (committed.length !== polled.length) this.fail(`${key}: Kafka read_committed returned ${committed.length} records, an Iggy poll ${polled.length}`);
  }

  /** Fetches [from, to) at `isolation`, checking that batches follow each other with no gap (but the gaps compaction leaves). */
  private async readWhole(topic: string, partition: number, from: number, to: number, isolation: number, gapsAllowed: boolean): Promise<Array<{ offset: number; id: string }>> {
    const out: Array<{ offset: number; id: string }> = [];
    let next = from;
    for (let reads = 0; next < to; reads++) {
      if (reads >= checkReadsMax) this.fail(`${topic}/${partition}: no end to reading [${from}, ${to})`);
      const r = await this.read(fetchRecords(this.node, topic, partition, next, isolation));
      if (r.errorCode !== ErrorCode.NONE) this.fail(`${topic}/${partition}: fetch at ${next} (isolation ${isolation}) failed with ${r.errorCode} on a healthy disk (crashed: ${this.node.disk.crashed})`);
      const end = isolation === 1 ? r.lastStableOffset : r.highWatermark;
      if (r.batches.length === 0) {
        if (isolation === 1 && next >= end) break;
        this.fail(`${topic}/${partition}: fetch at ${next} (isolation ${isolation}) returned nothing below ${end}`);
      }
      for (const b of r.batches) {
        if (b.last < next) continue;
        if (b.base > next && !gapsAllowed) this.fail(`${topic}/${partition}: offsets ${next}..${b.base - 1} are missing (a gap before a batch at ${b.base})`);
        if (isolation === 1 && b.last >= end) this.fail(`${topic}/${partition}: read_committed returned a batch ending at ${b.last}, at or past the LSO ${end}`);
        next = b.last + 1;
      }
      out.push(...r.records);
    }
    return out;
  }

  private async pollWhole(topic: string, partition: number, from: number, to: number): Promise<Array<{ offset: number; id: string }>> {
    const out: Array<{ offset: number; id: string }> = [];
    let next = from;
    for (let reads = 0; next < to && reads < checkReadsMax; reads++) {
      const got = await this.read(pollRecords(this.node, topic, partition, next, 1_000));
      if (got.length === 0) break;
      out.push(...got);
      next = got[got.length - 1]!.offset + 1;
    }
    return out;
  }

  private async checkCommittedOffsets(): Promise<void> {
    for (const t of topics) {
      for (let p = 0; p < t.partitions; p++) {
        const key = partitionKey(t.name, p);
        const r = await this.node.kafkaCall(offsetFetchHandler, 7, { groupId, topics: [{ name: t.name, partitionIndexes: [p] }], requireStable: false });
        const got = r.topics![0]!.partitions[0]!;
        if (got.errorCode !== ErrorCode.NONE) this.fail(`${key}: OffsetFetch failed with ${got.errorCode}`);
        const kafkaProblem = this.kafkaCommits.get(key)!.check(got.committedOffset < 0 ? null : got.committedOffset);
        if (kafkaProblem !== null) this.fail(`${key}: Kafka group offset ${kafkaProblem}`);
        const iggy = await this.node.iggyCall(CommandCode.getConsumerOffset, { consumer: { kind: ConsumerKind.consumer, id: numericId(iggyConsumerId) }, streamId: stringId('default'), topicId: stringId(t.name), partitionId: p });
        if (!iggy.ok) this.fail(`${key}: GetConsumerOffset failed with ${iggy.code}`);
        const stored = iggy.value === null ? null : Number(iggy.value.storedOffset);
        const iggyProblem = this.iggyCommits.get(key)!.check(stored);
        if (iggyProblem !== null) this.fail(`${key}: Iggy consumer offset ${iggyProblem}`);
      }
    }
  }
}
