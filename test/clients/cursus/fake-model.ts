// The fake broker's default answers: a tiny in-memory Cursus (topics with partition logs, groups
// with generations and range assignment, committed offsets, transactions, event streams and
// snapshots) following the reply shapes of docs/protocols/cursus-wire-v2.md §5. It is what the
// SDK's flow tests run against until they run against Quartet's listener; it checks the rules the
// SDK relies on (member and generation fencing, monotonic commits, sequence gaps, optimistic
// concurrency), not the broker's full behaviour.

import type { CursusRecord, Fields } from '../../../src/protocols/cursus/codec/index.js';
import type { FakeReply, FakeRequest, StreamStep } from './fake-broker.js';
import { cursusError, encodeBatch, encodeErrorPayload, encodeJsonEnvelope, Status } from '../../../src/protocols/cursus/codec/index.js';

interface Topic {
  name: string;
  partitions: number;
  eventSourcing: boolean;
  idempotent: boolean;
  revision: number;
  logs: CursusRecord[][];
  /** First retained offset per partition (a test moves it to make OFFSET_OUT_OF_RANGE). */
  logStart: number[];
  /** The policy fields CREATE was given. */
  policy: Map<string, string>;
}

interface Group {
  topic: string;
  generation: number;
  members: Map<string, number[]>;
  offsets: Map<number, number>;
}

interface Txn {
  producerId: string;
  epoch: number;
  state: 'ready' | 'open' | 'committed' | 'aborted';
  records: CursusRecord[];
  offsets: Array<{ group: string; partition: number; offset: number }>;
  lastEnd: { result: string; messages: number; offsets: number } | null;
}

interface Aggregate {
  events: CursusRecord[];
  snapshot: { version: number; payload: string } | null;
}

const ok = (fields: Fields = []): FakeReply => ({ ok: fields });
const err = (code: string, fields: Fields = []): FakeReply => ({ error: code, fields });

export class FakeModel {
  readonly topics = new Map<string, Topic>();
  readonly groups = new Map<string, Group>();
  readonly txns = new Map<string, Txn>();
  readonly aggregates = new Map<string, Aggregate>();
  /** Token per principal for AUTH. */
  readonly users = new Map<string, string>([['alice', 'secret']]);
  /** Last sequence per producer and partition (idempotent publishes). */
  readonly sequences = new Map<string, number>();
  private memberSuffix = 1000;
  private nextProducer = 1;
  private roundRobin = 0;
  private readonly published: Array<() => void> = [];

  handle(req: FakeRequest): FakeReply | Promise<FakeReply> {
    const f = req.fields;
    switch (req.command) {
      case 'CREATE':
        return this.create(f);
      case 'LIST':
        return ok([['count', String(this.topics.size)], ['topics', [...this.topics.keys()].join(',')]]);
      case 'METADATA':
      case 'DESCRIBE': {
        const t = this.topic(f.get('topic'));
        if (!('logs' in t)) return t;
        return req.command === 'METADATA' ? this.metadata(t) : this.describe(t);
      }
      case 'GROUP_STATUS': {
        const g = this.groups.get(f.get('group')!);
        if (g === undefined) return err('group_not_found', [['group', f.get('group')!]]);
        const at = '2026-01-01T00:00:00Z';
        return {
          json: {
            group_name: f.get('group'),
            topic_name: g.topic,
            state: 'Stable',
            generation: g.generation,
            member_count: g.members.size,
            partition_count: this.topics.get(g.topic)?.partitions ?? 0,
            members: [...g.members].map(([id, parts]) => ({ member_id: id, last_heartbeat: at, assignments: parts })),
            last_rebalance: at,
          },
        };
      }
      case 'STREAM':
        return { stream: this.stream(req) };
      case 'LIST_OFFSETS': {
        const t = this.topic(f.get('topic'));
        if (!('logs' in t)) return t;
        const only = f.has('partition') ? [Number(f.get('partition'))] : [...t.logs.keys()];
        const entries = only.map((p) => {
          const earliest = t.logStart[p]!;
          const latest = earliest + t.logs[p]!.length;
          return `P${p}:earliest=${earliest}:latest=${latest}:leo=${latest}:hwm=${latest}`;
        });
        return ok([['topic', t.name], ['partitions', String(t.partitions)], ['offsets', entries.join(',')]]);
      }
      case 'HELP':
        return ok([['commands', 'CREATE,DELETE,LIST,PUBLISH,CONSUME,STREAM,HELP,EXIT']]);
      case 'DELETE':
        return this.delete(f);
      case 'AUTH': {
        const principal = f.get('principal') ?? '';
        if (this.users.get(principal) !== f.get('token')) return err('authentication_failed', [['principal', principal]]);
        req.conn.principal = principal;
        return ok([['principal', principal], ['authenticated', 'true']]);
      }
      case 'EXIT':
        return ok();
      case 'PUBLISH':
        return this.publish(req);
      case 'CONSUME':
        return this.consume(f);
      case 'JOIN_GROUP':
        return this.join(f);
      case 'SYNC_GROUP':
        return this.withMember(f, (g, member) => ok([['assignments', `[${g.members.get(member)!.join(',')}]`]]), true);
      case 'HEARTBEAT':
        return this.withMember(f, (g, member) => ok([['member', member], ['generation', String(g.generation)]]), f.has('generation'));
      case 'LEAVE_GROUP':
        return this.withMember(f, (g, member) => {
          g.members.delete(member);
          this.rebalance(g);
          return ok([['group', f.get('group')!], ['member', member], ['left', 'true']]);
        }, false);
      case 'FETCH_OFFSET':
        return ok([['offset', String(this.groups.get(f.get('group')!)?.offsets.get(Number(f.get('partition'))) ?? 0)]]);
      case 'COMMIT_OFFSET':
        return this.commit(f, [[Number(f.get('partition')), Number(f.get('offset'))]], ok());
      case 'BATCH_COMMIT': {
        const entries = (f.get('offsets') ?? '').split(',').map((e) => /^P(\d+):(\d+)$/.exec(e));
        if (entries.some((m) => m === null)) return err('invalid_batch_commit_entry', [['reason', 'malformed']]);
        const pairs = entries.map((m) => [Number(m![1]), Number(m![2])] as [number, number]);
        return this.commit(f, pairs, ok([['batched', String(pairs.length)]]));
      }
      case 'INIT_PRODUCER_ID':
        return this.initProducer(f);
      case 'BEGIN_TXN':
      case 'TXN_PUBLISH':
      case 'SEND_OFFSETS_TO_TXN':
      case 'END_TXN':
        return this.txnCommand(req.command, f, req);
      case 'TXN_STATUS': {
        const t = this.txns.get(f.get('transactional_id')!);
        if (t === undefined) return err('transaction_not_found');
        return ok([['transactional_id', f.get('transactional_id')!], ['mode', 'exactly_once'], ['state', t.state], ['messages', String(t.records.length)], ['participants', '1'], ['offsets', String(t.offsets.length)]]);
      }
      case 'APPEND_STREAM':
        return this.append(req);
      case 'READ_STREAM':
        return this.readStream(f);
      case 'STREAM_VERSION':
        return ok([['version', String(this.aggregate(f).events.length)]]);
      case 'SAVE_SNAPSHOT': {
        const a = this.aggregate(f);
        const version = Number(f.get('version'));
        if (version > a.events.length) return err('snapshot_version_exceeds_stream', [['version', String(version)], ['current', String(a.events.length)]]);
        a.snapshot = { version, payload: f.get('message')! };
        return ok([['version', String(version)], ['partition', '0']]);
      }
      case 'READ_SNAPSHOT': {
        const s = this.aggregate(f).snapshot;
        return ok([['snapshot', s === null ? 'null' : JSON.stringify(s)]]);
      }
      default:
        return err('unknown_command', [['command', req.command]]);
    }
  }

  /** Makes a topic directly (as CREATE would). */
  addTopic(name: string, partitions: number, options: { eventSourcing?: boolean; idempotent?: boolean } = {}): void {
    this.create(new Map([['topic', name], ['partitions', String(partitions)], ['event_sourcing', String(options.eventSourcing === true)], ['idempotent', String(options.idempotent === true)]]));
  }

  /** Moves a partition's log start (records before it are gone): CONSUME below it is out of range. */
  retainFrom(topic: string, partition: number, offset: number): void {
    const t = this.topics.get(topic)!;
    t.logs[partition]!.splice(0, offset - t.logStart[partition]!);
    t.logStart[partition] = offset;
  }

  /** Appends records to a partition as a producer would (returns their offsets). */
  put(topic: string, partition: number, values: string[], extra: Partial<CursusRecord> = {}): number[] {
    const t = this.topics.get(topic)!;
    return values.map((v) => this.appendRecord(t, partition, { payload: Buffer.from(v), ...extra }));
  }

  /** A group's committed next offset for a partition (undefined when none). */
  committed(group: string, partition: number): number | undefined {
    return this.groups.get(group)?.offsets.get(partition);
  }

  /** Records of a partition (offsets assigned). */
  log(topic: string, partition: number): CursusRecord[] {
    return this.topics.get(topic)?.logs[partition] ?? [];
  }

  private create(f: Map<string, string>): FakeReply {
    const name = f.get('topic')!;
    let t = this.topics.get(name);
    if (t === undefined) {
      const partitions = Number(f.get('partitions') ?? '4');
      const policy = new Map([...f].filter(([k]) => ['cleanup_policy', 'partitioner', 'auth_policy', 'read_acl', 'write_acl', 'retention_hours', 'retention_bytes', 'replication_factor'].includes(k)));
      t = { name, partitions, eventSourcing: f.get('event_sourcing') === 'true', idempotent: f.get('idempotent') === 'true', revision: 1, logs: [], logStart: [], policy };
      for (let p = 0; p < partitions; p++) {
        t.logs.push([]);
        t.logStart.push(0);
      }
      this.topics.set(name, t);
    }
    return ok([
      ['topic', name],
      ['partitions', String(t.partitions)],
      ...this.policyFields(t).slice(0, 7),
      ['revision', String(t.revision)],
      ['replication_factor', t.policy.get('replication_factor') ?? '1'],
      ['idempotent', String(t.idempotent)],
      ['event_sourcing', String(t.eventSourcing)],
      ['lifecycle_epoch', '1'],
      ['min_in_sync_replicas', f.get('min_in_sync_replicas') ?? 'default'],
      ['effective_min_in_sync_replicas', '1'],
    ]);
  }

  /** cleanup_policy, partitioner, auth_policy, read_acl, write_acl, retention_hours, retention_bytes. */
  private policyFields(t: Topic): Fields {
    return [
      ['cleanup_policy', t.policy.get('cleanup_policy') ?? 'delete'],
      ['partitioner', t.policy.get('partitioner') ?? 'hash_key'],
      ['auth_policy', t.policy.get('auth_policy') ?? 'open'],
      ['read_acl', t.policy.get('read_acl') ?? ''],
      ['write_acl', t.policy.get('write_acl') ?? ''],
      ['retention_hours', t.policy.get('retention_hours') ?? '0'],
      ['retention_bytes', t.policy.get('retention_bytes') ?? '0'],
    ];
  }

  private metadata(t: Topic): FakeReply {
    const p = this.policyFields(t);
    return ok([
      ['topic', t.name],
      ['partitions', String(t.partitions)],
      ['leaders', t.logs.map(() => '127.0.0.1:9000').join(',')],
      ['epochs', t.logs.map(() => '0').join(',')],
      ['revision', String(t.revision)],
      ['replication_factor', t.policy.get('replication_factor') ?? '1'],
      ['idempotent', String(t.idempotent)],
      ['event_sourcing', String(t.eventSourcing)],
      ...p.slice(0, 5),
      ...p.slice(5),
      ['lifecycle_epoch', '1'],
    ]);
  }

  private describe(t: Topic): FakeReply {
    const p = new Map(this.policyFields(t));
    return {
      json: {
        status: 'OK',
        topic: t.name,
        definition: {
          name: t.name,
          revision: t.revision,
          partitions: t.partitions,
          replication_factor: Number(t.policy.get('replication_factor') ?? '1'),
          idempotent: t.idempotent,
          event_sourcing: t.eventSourcing,
          policy: { cleanup_policy: p.get('cleanup_policy'), partitioner: p.get('partitioner'), auth_policy: p.get('auth_policy') },
        },
        // Standalone: no leader address, and Go's nil slices for replicas and ISR.
        partitions: t.logs.map((log, id) => ({ id, leader: '', replicas: null, isr: null, leo: t.logStart[id]! + log.length, hwm: t.logStart[id]! + log.length })),
      },
    };
  }

  private delete(f: Map<string, string>): FakeReply {
    const name = f.get('topic')!;
    if (!this.topics.has(name)) return f.get('if_exists') === 'true' ? ok([['topic', name], ['deleted', 'false']]) : err('topic_not_found', [['topic', name]]);
    this.topics.delete(name);
    return ok([['topic', name], ['deleted', 'true']]);
  }

  private topic(name: string | undefined): Topic | FakeReply {
    const t = this.topics.get(name ?? '');
    return t ?? err('topic_not_found', [['topic', name ?? '']]);
  }

  private appendRecord(t: Topic, partition: number, r: Omit<CursusRecord, 'offset' | 'partition' | 'topic'>): number {
    const log = t.logs[partition]!;
    const offset = t.logStart[partition]! + log.length;
    log.push({ ...r, topic: t.name, partition, offset });
    for (const w of this.published.splice(0)) w();
    return offset;
  }

  private publish(req: FakeRequest): FakeReply {
    const f = req.fields;
    const b = req.batch;
    const topicName = b !== null ? b.topic : f.get('topic');
    const t = this.topic(topicName);
    if (!('logs' in t)) return t;
    const acks = b !== null ? b.acks : (f.get('acks') ?? '1');
    const idempotent = b !== null ? b.idempotent : f.get('isIdempotent') === 'true';
    if (idempotent && acks !== 'all' && acks !== '-1') return err('invalid_acks', [['reason', 'idempotence needs acks=all']]);
    const requested = b !== null ? b.partition : f.has('partition') ? Number(f.get('partition')) : -1;
    const partition = requested >= 0 ? requested : this.roundRobin++ % t.partitions;
    if (partition >= t.partitions) return err('partition_not_found', [['partition', String(partition)]]);
    const records: Array<Pick<CursusRecord, 'payload' | 'producerId' | 'key' | 'timestamp'>> =
      b !== null ? b.records : [{ payload: req.values.get('message')!, producerId: f.get('producerId'), key: req.values.get('key') }];
    const producerId = (b !== null ? b.records[0]?.producerId : f.get('producerId')) ?? '';
    const epoch = b !== null ? (b.records[0]?.producerEpoch ?? 0) : Number(f.get('epoch') ?? '0');
    const seqStart = b !== null ? b.batchStart : Number(f.get('seqNum') ?? '0');
    const seqEnd = b !== null ? b.batchEnd : seqStart;
    let last = -1;
    const seqKey = `${producerId}/${epoch}/${requested}`;
    const seen = this.sequences.get(seqKey) ?? 0;
    if (idempotent && seqEnd <= seen) {
      // A duplicate: acknowledged again, not appended.
      return { json: { status: 'OK', last_offset: t.logStart[partition]! + t.logs[partition]!.length - 1, producer_id: producerId, producer_epoch: epoch, seq_start: seqStart, seq_end: seqEnd } };
    }
    if (idempotent && seqStart !== seen + 1) return err('out_of_order_sequence', [['expected', String(seen + 1)], ['got', String(seqStart)]]);
    for (const r of records) last = this.appendRecord(t, partition, { payload: r.payload, producerId: r.producerId, key: r.key, timestamp: r.timestamp });
    if (idempotent) this.sequences.set(seqKey, seqEnd);
    if (acks === '0') return { none: true };
    return { json: { status: 'OK', last_offset: last, producer_id: producerId, producer_epoch: epoch, seq_start: seqStart, seq_end: seqEnd } };
  }

  private async consume(f: Map<string, string>): Promise<FakeReply> {
    const t = this.topic(f.get('topic'));
    if (!('logs' in t)) return t;
    const partition = Number(f.get('partition'));
    if (!(partition < t.partitions)) return err('partition_not_found', [['partition', String(partition)]]);
    const committed = this.groups.get(f.get('group') ?? 'default-group')?.offsets.get(partition);
    const start = Math.max(committed ?? 0, Number(f.get('offset')));
    const earliest = t.logStart[partition]!;
    const latest = earliest + t.logs[partition]!.length;
    if (start < earliest || start > latest) return err('OFFSET_OUT_OF_RANGE', [['requested', String(start)], ['earliest', String(earliest)], ['latest', String(latest)]]);
    const waitMs = Number(f.get('wait_ms') ?? '0');
    if (start === latest && waitMs > 0) await this.nextPublish(waitMs);
    const max = Number(f.get('batch') ?? '8192');
    const records = t.logs[partition]!.slice(start - earliest, start - earliest + max);
    return { batch: { idempotent: false, topic: t.name, partition, acks: '1', batchStart: 0, batchEnd: 0, records } };
  }

  /**
   * STREAM: the records from the group's committed offset as batches, a keepalive when nothing
   * came within 50 ms, until the connection closes.
   */
  private async *stream(req: FakeRequest): AsyncGenerator<StreamStep> {
    const f = req.fields;
    const t = this.topic(f.get('topic'));
    if (!('logs' in t)) {
      yield { payload: encodeErrorPayload(cursusError(f.get('topic') === undefined ? 'missing_topic' : 'topic_not_found', [['topic', f.get('topic') ?? '']])), status: Status.error, end: true };
      return;
    }
    const partition = Number(f.get('partition'));
    let next = this.groups.get(f.get('group') ?? 'default-group')?.offsets.get(partition) ?? 0;
    while (!req.conn.socket.destroyed) {
      const start = t.logStart[partition]!;
      const records = t.logs[partition]!.slice(Math.max(0, next - start));
      if (records.length > 0) {
        next = records[records.length - 1]!.offset + 1;
        yield { payload: Buffer.concat(encodeBatch({ idempotent: false, topic: t.name, partition, acks: '1', batchStart: 0, batchEnd: 0, records })) };
        continue;
      }
      const published = await this.nextPublish(50);
      if (!published) yield { payload: Buffer.alloc(0) };
    }
  }

  /** Resolves true when a record is appended within `ms`, false otherwise. */
  private nextPublish(ms: number): Promise<boolean> {
    return new Promise((resolve) => {
      const woken = (): void => {
        clearTimeout(timer);
        resolve(true);
      };
      const timer = setTimeout(() => {
        const i = this.published.indexOf(woken);
        if (i >= 0) this.published.splice(i, 1);
        resolve(false);
      }, ms);
      this.published.push(woken);
    });
  }

  private join(f: Map<string, string>): FakeReply {
    const name = f.get('group')!;
    let g = this.groups.get(name);
    if (g === undefined) {
      g = { topic: f.get('topic') ?? '', generation: 0, members: new Map(), offsets: new Map() };
      this.groups.set(name, g);
    }
    // A member that joins with its full ID again resumes its membership in a new generation.
    const asked = f.get('member')!;
    const member = g.members.has(asked) ? asked : `${asked}-${this.memberSuffix++}`;
    g.members.set(member, []);
    this.rebalance(g);
    return ok([['generation', String(g.generation)], ['member', member], ['assignments', `[${g.members.get(member)!.join(',')}]`]]);
  }

  /** A new generation, partitions in ranges over the sorted members. */
  rebalance(g: Group): void {
    g.generation++;
    const partitions = this.topics.get(g.topic)?.partitions ?? 0;
    const members = [...g.members.keys()].sort();
    for (const m of members) g.members.set(m, []);
    for (let p = 0; p < partitions && members.length > 0; p++) g.members.get(members[Math.floor((p * members.length) / partitions)]!)!.push(p);
  }

  private withMember(f: Map<string, string>, then: (g: Group, member: string) => FakeReply, checkGeneration: boolean): FakeReply {
    const g = this.groups.get(f.get('group')!);
    const member = f.get('member')!;
    if (g === undefined) return err('group_not_found', [['group', f.get('group')!]]);
    if (!g.members.has(member)) return err('member_not_found', [['member', member], ['group', f.get('group')!]]);
    if (checkGeneration && Number(f.get('generation')) !== g.generation) {
      return err('GEN_MISMATCH', [['current', String(g.generation)], ['requested', f.get('generation') ?? ''], ['group', f.get('group')!], ['member', member]]);
    }
    return then(g, member);
  }

  private commit(f: Map<string, string>, pairs: Array<[number, number]>, reply: FakeReply): FakeReply {
    return this.withMember(f, (g, member) => {
      for (const [p, o] of pairs) {
        if (!g.members.get(member)!.includes(p)) return err('NOT_OWNER', [['partition', String(p)], ['member', member], ['group', f.get('group')!], ['generation', String(g.generation)]]);
        if (o < (g.offsets.get(p) ?? 0)) return err('offset_regression', [['reason', `offset ${o} below ${g.offsets.get(p)}`]]);
      }
      for (const [p, o] of pairs) g.offsets.set(p, o);
      return reply;
    }, true);
  }

  private initProducer(f: Map<string, string>): FakeReply {
    const id = f.get('transactional_id')!;
    let t = this.txns.get(id);
    if (t === undefined) {
      t = { producerId: `txn-producer-${this.nextProducer++}`, epoch: 0, state: 'ready', records: [], offsets: [], lastEnd: null };
      this.txns.set(id, t);
    } else {
      t.epoch++;
      t.state = 'ready';
      t.records = [];
      t.offsets = [];
      t.lastEnd = null;
    }
    return ok([['transactional_id', id], ['producerId', t.producerId], ['epoch', String(t.epoch)]]);
  }

  private txnCommand(command: string, f: Map<string, string>, req: FakeRequest): FakeReply {
    const id = f.get('transactional_id')!;
    const t = this.txns.get(id);
    if (t === undefined) return err('transaction_not_found', [['transactional_id', id]]);
    const epoch = Number(f.get('epoch'));
    if (f.get('producerId') !== t.producerId || epoch < t.epoch) return err('producer_fenced', [['transactional_id', id], ['epoch', String(epoch)]]);
    if (command === 'BEGIN_TXN') {
      if (t.state === 'committed' || t.state === 'aborted') return err('producer_reinitialization_required', [['transactional_id', id], ['epoch', String(epoch)]]);
      t.state = 'open';
      return ok([['transactional_id', id], ['state', 'open'], ['producerId', t.producerId], ['epoch', String(epoch)]]);
    }
    if (command === 'END_TXN') {
      const result = f.get('result')!;
      if (t.lastEnd !== null) {
        if (t.lastEnd.result !== result) return err('invalid_txn_state', [['state', t.state]]);
        return ok([['transactional_id', id], ['state', t.state], ['messages', String(t.lastEnd.messages)], ['offsets', String(t.lastEnd.offsets)]]);
      }
      if (t.state !== 'open') return err('invalid_txn_state', [['state', t.state]]);
      if (result === 'commit') {
        for (const r of t.records) this.appendRecord(this.topics.get(r.topic)!, r.partition, r);
        for (const o of t.offsets) this.groups.get(o.group)?.offsets.set(o.partition, o.offset);
      }
      t.state = result === 'commit' ? 'committed' : 'aborted';
      t.lastEnd = { result, messages: t.records.length, offsets: t.offsets.length };
      return ok([['transactional_id', id], ['state', t.state], ['messages', String(t.records.length)], ['offsets', String(t.offsets.length)]]);
    }
    if (t.state !== 'open') return err('invalid_txn_state', [['state', t.state]]);
    if (command === 'TXN_PUBLISH') {
      const topic = this.topic(f.get('topic'));
      if (!('logs' in topic)) return topic;
      const partition = f.has('partition') ? Number(f.get('partition')) : 0;
      t.records.push({ topic: topic.name, partition, offset: 0, payload: req.values.get('message')!, seqNum: Number(f.get('seqNum')), transactionalId: id });
      return ok([['transactional_id', id], ['appended', 'true'], ['topic', topic.name], ['partition', String(partition)], ['state', 'open']]);
    }
    const entries = (f.get('offsets') ?? '').split(',').map((e) => /^P(\d+):(\d+)$/.exec(e)!);
    for (const m of entries) t.offsets.push({ group: f.get('group')!, partition: Number(m[1]), offset: Number(m[2]) });
    return ok([['transactional_id', id], ['staged_offsets', String(entries.length)]]);
  }

  private aggregate(f: Map<string, string>): Aggregate {
    const key = `${f.get('topic')}/${f.get('key')}`;
    let a = this.aggregates.get(key);
    if (a === undefined) {
      a = { events: [], snapshot: null };
      this.aggregates.set(key, a);
    }
    return a;
  }

  private append(req: FakeRequest): FakeReply {
    const f = req.fields;
    const t = this.topic(f.get('topic'));
    if (!('logs' in t)) return t;
    if (!t.eventSourcing) return err('event_sourcing_not_enabled', [['topic', t.name]]);
    const a = this.aggregate(f);
    const version = Number(f.get('version'));
    if (version !== a.events.length + 1) return err('version_conflict', [['current', String(a.events.length)], ['expected', String(version)]]);
    const offset = this.appendRecord(t, 0, { payload: req.values.get('message')!, key: req.values.get('key') });
    a.events.push({
      topic: t.name,
      partition: 0,
      offset,
      payload: req.values.get('message')!,
      key: req.values.get('key'),
      eventType: f.get('event_type') ?? '',
      schemaVersion: Number(f.get('schema_version') ?? '1'),
      aggregateVersion: version,
      ...(f.has('metadata') ? { metadata: f.get('metadata') } : {}),
      ...(f.has('event_id') ? { eventId: f.get('event_id') } : {}),
    });
    return ok([['version', String(version)], ['offset', String(offset)], ['partition', '0']]);
  }

  private readStream(f: Map<string, string>): FakeReply {
    const from = f.has('from_version') ? Number(f.get('from_version')) : 1;
    if (!(from >= 1)) return err('invalid_from_version');
    const a = this.aggregate(f);
    const snapshot = a.snapshot !== null && a.snapshot.version >= from ? a.snapshot : null;
    const start = snapshot !== null ? snapshot.version + 1 : from;
    const events = a.events.filter((e) => e.aggregateVersion! >= start);
    const envelope = { status: 'OK', topic: f.get('topic'), key: f.get('key'), partition: 0, count: events.length, ...(snapshot !== null ? { snapshot } : {}) };
    const steps: StreamStep[] = [
      { payload: encodeJsonEnvelope(envelope), status: Status.ok },
      { payload: Buffer.concat(encodeBatch({ idempotent: false, topic: f.get('topic')!, partition: 0, acks: '1', batchStart: 0, batchEnd: 0, records: events })), status: Status.ok, end: true },
    ];
    return { stream: steps };
  }
}
