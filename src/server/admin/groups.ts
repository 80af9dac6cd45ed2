// Admin API consumer-group routes: list, describe (members, committed offset, end offset and lag
// per partition), reset offsets (with a dry run) and delete, for Kafka, Cursus and Iggy groups.
//
// Where each protocol keeps its groups (docs/admin-api.md "Groups"):
//   kafka   offsets in scope 'kafka' under the group id; state in the group store, scope 'kafka'
//   cursus  offsets in scope 'kafka' too (a Cursus group is a Kafka group to Kafka clients);
//           registration in the group store, scope 'cursus'
//   iggy    one group per topic; registration in the group store, scope 'iggy', key
//           '<topic internal id>/<group id>'; offsets in scope 'iggy' under 'g:<id>|<topic>|<p>',
//           holding the last consumed offset (Iggy's), shown here as the next one (Kafka's)
// Members come from the coordinators of the listeners that are open (core/groups/directory.ts).
// As Kafka's kafka-consumer-groups tool, offsets are reset only while a group has no members.

import { QuartetError } from '../../base/errors.js';
import type { Broker } from '../../core/broker.js';
import type { Topic } from '../../core/catalog.js';
import { mayServer, mayTopic } from '../../core/access.js';
import type { LiveGroupMember } from '../../core/groups/directory.js';
import type { OffsetCommit } from '../../core/offsets.js';
import type { User } from '../../core/users.js';
import type { AdminReply, AdminRequest, Route } from './api.js';
import { objectBody, optionalBoolean, optionalInteger, optionalIntegerList, optionalString } from './input.js';
import { requireTopicAccess } from './topics.js';

export type GroupProtocol = 'kafka' | 'cursus' | 'iggy';

const kafkaScope = 'kafka';
const cursusScope = 'cursus';
const iggyScope = 'iggy';

/** A group as the admin API names it. */
interface GroupRef {
  protocol: GroupProtocol;
  name: string;
  /** Iggy only: the topic the group belongs to and its numeric id. */
  iggy?: { topic: Topic; id: number };
}

/** A partition's committed offset and lag, as the admin API answers them (and `quartet group` reads them). */
export interface OffsetRow {
  namespace: string;
  topic: string;
  partition: number;
  /** The next offset the group reads (null: none committed). */
  committed: number | null;
  endOffset: number;
  lag: number | null;
}

// --- where each protocol keeps a group --------------------------------------------------------

function liveScope(ref: GroupRef): string {
  return ref.protocol === 'iggy' ? iggyScope : ref.protocol === 'cursus' ? cursusScope : kafkaScope;
}

function liveKey(ref: GroupRef): string {
  return ref.iggy ? `${ref.iggy.topic.internalId}/${ref.iggy.id}` : ref.name;
}

function iggyOffsetKey(id: number, topic: Topic, partition: number): string {
  return `g:${id}|${topic.internalId}|${partition}`;
}

function membersOf(broker: Broker, ref: GroupRef): LiveGroupMember[] {
  return broker.liveGroups.membersOf(liveScope(ref), liveKey(ref));
}

/** Committed next offsets by topic internal id and partition. */
async function committedOffsets(broker: Broker, ref: GroupRef): Promise<Map<number, Map<number, number>>> {
  const out = new Map<number, Map<number, number>>();
  const put = (topicInternalId: number, partition: number, offset: number): void => {
    if (!out.has(topicInternalId)) out.set(topicInternalId, new Map());
    out.get(topicInternalId)!.set(partition, offset);
  };
  if (ref.iggy) {
    const { topic, id } = ref.iggy;
    for (let p = 0; p < topic.partitions; p++) {
      const stored = await broker.offsets.fetch(iggyScope, iggyOffsetKey(id, topic, p), topic.internalId, p);
      if (stored !== null) put(topic.internalId, p, stored.offset + 1);
    }
    return out;
  }
  for (const o of await broker.offsets.fetchGroup(kafkaScope, ref.name)) if (o.offset >= 0) put(o.topicInternalId, o.partition, o.offset);
  return out;
}

/** The topics a group reads: those it committed offsets for, and an Iggy group's own. */
async function groupTopics(broker: Broker, ref: GroupRef): Promise<Topic[]> {
  if (ref.iggy) return [ref.iggy.topic];
  const ids = await broker.offsets.groupTopics(kafkaScope, ref.name);
  return ids.map((id) => broker.catalog.topicByInternalId(id)).filter((t): t is Topic => t !== null);
}

// --- permissions ------------------------------------------------------------------------------

function mayReadGroup(user: User, topics: readonly Topic[]): boolean {
  return mayServer(user, 'readServers') || topics.some((t) => mayTopic(user, t.namespaceId, t.id, 'readTopic'));
}

function requireManageGroup(user: User, ref: GroupRef, topics: readonly Topic[]): void {
  if (mayServer(user, 'manageServers')) return;
  const denied = topics.length === 0 ? null : topics.find((t) => !mayTopic(user, t.namespaceId, t.id, 'manageTopic'));
  if (topics.length === 0 || denied !== undefined) {
    throw new QuartetError('unauthorized', `user '${user.username}' may not change group '${ref.name}'${denied ? ` (no manage right on topic '${denied.namespace}/${denied.name}')` : ''}`);
  }
}

// --- listing ----------------------------------------------------------------------------------

async function allGroups(broker: Broker): Promise<GroupRef[]> {
  const cursus = new Set((await broker.groups.list(cursusScope)).map((g) => g.groupId));
  const kafkaNames = new Set([...(await broker.offsets.listGroups(kafkaScope)), ...(await broker.groups.list(kafkaScope)).map((g) => g.groupId), ...cursus]);
  const refs: GroupRef[] = [...kafkaNames].sort().map((name) => ({ protocol: cursus.has(name) ? 'cursus' : 'kafka', name }));
  for (const stored of await broker.groups.list(iggyScope)) {
    const s = stored.state as { topicInternalId?: unknown; id?: unknown; name?: unknown } | null;
    if (!s || typeof s.topicInternalId !== 'number' || typeof s.id !== 'number' || typeof s.name !== 'string') continue;
    const topic = broker.catalog.topicByInternalId(s.topicInternalId);
    if (topic !== null) refs.push({ protocol: 'iggy', name: s.name, iggy: { topic, id: s.id } });
  }
  return refs;
}

async function offsetRows(broker: Broker, user: User, ref: GroupRef): Promise<OffsetRow[]> {
  const committed = await committedOffsets(broker, ref);
  const rows: OffsetRow[] = [];
  for (const topic of await groupTopics(broker, ref)) {
    if (!mayTopic(user, topic.namespaceId, topic.id, 'readTopic')) continue;
    await broker.purgeInProgress(topic);
    const byPartition = committed.get(topic.internalId) ?? new Map<number, number>();
    const partitions = ref.iggy ? Array.from({ length: topic.partitions }, (_, p) => p) : [...byPartition.keys()].filter((p) => p < topic.partitions).sort((a, b) => a - b);
    for (const partition of partitions) {
      const endOffset = broker.partition(topic, partition).stats().highWatermark;
      const c = byPartition.get(partition) ?? null;
      rows.push({ namespace: topic.namespace, topic: topic.name, partition, committed: c, endOffset, lag: c === null ? null : Math.max(0, endOffset - c) });
    }
  }
  return rows;
}

function groupIdentity(ref: GroupRef): Record<string, unknown> {
  return {
    protocol: ref.protocol,
    group: ref.name,
    ...(ref.iggy ? { iggy: { namespace: ref.iggy.topic.namespace, topic: ref.iggy.topic.name, id: ref.iggy.id } } : {}),
  };
}

function totalLag(rows: readonly OffsetRow[]): number {
  return rows.reduce((n, r) => n + (r.lag ?? 0), 0);
}

async function listGroups({ broker, user }: AdminRequest): Promise<AdminReply> {
  const out: Array<Record<string, unknown>> = [];
  for (const ref of await allGroups(broker)) {
    const topics = await groupTopics(broker, ref);
    if (!mayReadGroup(user, topics)) continue;
    const members = membersOf(broker, ref);
    const rows = await offsetRows(broker, user, ref);
    out.push({ ...groupIdentity(ref), state: members.length > 0 ? 'active' : 'empty', members: members.length, topics: topics.map((t) => `${t.namespace}/${t.name}`), lag: totalLag(rows) });
  }
  return { body: { groups: out } };
}

// --- one group --------------------------------------------------------------------------------

/** The group named by the path; unknown_group when no protocol keeps it. */
async function groupFromPath(request: AdminRequest, protocol: GroupProtocol): Promise<GroupRef> {
  const { broker, params } = request;
  if (protocol === 'iggy') {
    const topic = requireTopicAccess(broker, request.user, params.namespace!, params.topic!, 'readTopic');
    const found = (await allGroups(broker)).find((g) => g.iggy?.topic.internalId === topic.internalId && g.name === params.group);
    if (found === undefined) throw new QuartetError('unknown_group', `topic '${topic.namespace}/${topic.name}' has no Iggy group '${params.group}'`);
    return found;
  }
  const found = (await allGroups(broker)).find((g) => g.protocol === protocol && g.name === params.group);
  if (found === undefined) throw new QuartetError('unknown_group', `no ${protocol} group '${params.group}'`);
  return found;
}

async function describeGroup(request: AdminRequest, protocol: GroupProtocol): Promise<AdminReply> {
  const { broker, user } = request;
  const ref = await groupFromPath(request, protocol);
  if (!mayReadGroup(user, await groupTopics(broker, ref))) throw new QuartetError('unauthorized', `user '${user.username}' may not read group '${ref.name}'`);
  const members = membersOf(broker, ref);
  const offsets = await offsetRows(broker, user, ref);
  return { body: { ...groupIdentity(ref), state: members.length > 0 ? 'active' : 'empty', members, offsets, lag: totalLag(offsets) } };
}

type ResetTarget = { kind: 'earliest' } | { kind: 'latest' } | { kind: 'timestamp'; timestamp: number } | { kind: 'offset'; offset: number };

function resetTarget(body: Readonly<Record<string, unknown>>): ResetTarget {
  const to = optionalString(body, 'to');
  switch (to) {
    case 'earliest':
    case 'latest':
      return { kind: to };
    case 'timestamp': {
      const timestamp = optionalInteger(body, 'timestamp', 0);
      if (timestamp === undefined) throw new QuartetError('invalid_request', '"to": "timestamp" needs "timestamp" (ms since the epoch)');
      return { kind: 'timestamp', timestamp };
    }
    case 'offset': {
      const offset = optionalInteger(body, 'offset', 0);
      if (offset === undefined) throw new QuartetError('invalid_request', '"to": "offset" needs "offset"');
      return { kind: 'offset', offset };
    }
    default:
      throw new QuartetError('invalid_request', '"to" must be earliest, latest, timestamp or offset');
  }
}

/** The offset `target` names in the partition, clamped to the log (as Kafka's tool does). */
async function targetOffset(broker: Broker, topic: Topic, partition: number, target: ResetTarget): Promise<number> {
  const log = broker.partition(topic, partition);
  const { logStartOffset: start, highWatermark: end } = log.stats();
  switch (target.kind) {
    case 'earliest':
      return start;
    case 'latest':
      return end;
    case 'timestamp':
      return Math.min(end, Math.max(start, (await log.offsetForTimestamp(target.timestamp)) ?? end));
    case 'offset':
      return Math.min(end, Math.max(start, target.offset));
  }
}

/** The topics and partitions a reset covers: the body's topic (else every topic of the group), its partitions (else all). */
async function resetScope(request: AdminRequest, ref: GroupRef, body: Readonly<Record<string, unknown>>): Promise<Array<{ topic: Topic; partitions: number[] }>> {
  const { broker, user } = request;
  const namespace = optionalString(body, 'namespace') ?? 'default';
  const name = optionalString(body, 'topic');
  const wanted = optionalIntegerList(body, 'partitions');
  let topics: Topic[];
  if (ref.iggy) topics = [ref.iggy.topic];
  else if (name !== undefined) topics = [requireTopicAccess(broker, user, namespace, name, 'readTopic')];
  else topics = await groupTopics(broker, ref);
  if (topics.length === 0) throw new QuartetError('invalid_request', `group '${ref.name}' has no committed offsets: name the topic to reset`);
  return topics.map((topic) => {
    const all = Array.from({ length: topic.partitions }, (_, p) => p);
    const missing = wanted?.find((p) => p >= topic.partitions);
    if (missing !== undefined) throw new QuartetError('unknown_partition', `topic '${topic.namespace}/${topic.name}' has no partition ${missing}`);
    return { topic, partitions: wanted ?? all };
  });
}

async function resetOffsets(request: AdminRequest, protocol: GroupProtocol): Promise<AdminReply> {
  const { broker, user } = request;
  const body = objectBody(request.body);
  const ref = await groupFromPath(request, protocol);
  const target = resetTarget(body);
  const dryRun = optionalBoolean(body, 'dryRun') ?? false;
  const scope = await resetScope(request, ref, body);
  requireManageGroup(user, ref, scope.map((s) => s.topic));
  const members = membersOf(broker, ref);
  if (members.length > 0) throw new QuartetError('group_not_empty', `group '${ref.name}' has ${members.length} active member(s): offsets can only be reset while it has none`);
  const committed = await committedOffsets(broker, ref);
  const rows: Array<{ namespace: string; topic: string; partition: number; previous: number | null; offset: number }> = [];
  for (const { topic, partitions } of scope) {
    await broker.purgeInProgress(topic);
    for (const partition of partitions) {
      rows.push({ namespace: topic.namespace, topic: topic.name, partition, previous: committed.get(topic.internalId)?.get(partition) ?? null, offset: await targetOffset(broker, topic, partition, target) });
    }
  }
  if (!dryRun) await commitReset(broker, ref, scope, rows);
  return { body: { ...groupIdentity(ref), dryRun, offsets: rows } };
}

async function commitReset(broker: Broker, ref: GroupRef, scope: ReadonlyArray<{ topic: Topic }>, rows: ReadonlyArray<{ topic: string; namespace: string; partition: number; offset: number }>): Promise<void> {
  const topicOf = (row: { namespace: string; topic: string }): Topic => scope.find((s) => s.topic.namespace === row.namespace && s.topic.name === row.topic)!.topic;
  if (ref.iggy) {
    const { id } = ref.iggy;
    for (const row of rows) {
      const topic = topicOf(row);
      const key = iggyOffsetKey(id, topic, row.partition);
      // Iggy keeps the last consumed offset: nothing consumed before the target's first offset.
      if (row.offset === 0) await broker.offsets.deleteGroup(iggyScope, key);
      else await broker.offsets.reset(iggyScope, key, [{ topicInternalId: topic.internalId, partition: row.partition, offset: row.offset - 1 }]);
    }
    return;
  }
  const commits: OffsetCommit[] = rows.map((row) => ({ topicInternalId: topicOf(row).internalId, partition: row.partition, offset: row.offset }));
  await broker.offsets.reset(kafkaScope, ref.name, commits);
}

/**
 * The scopes a group's deletion covers. A Cursus group's offsets are the Kafka group's of the same
 * name (listed once, as the Cursus group): deleting it deletes that Kafka group too.
 */
function deletedScopes(ref: GroupRef): string[] {
  return ref.protocol === 'cursus' ? [cursusScope, kafkaScope] : [liveScope(ref)];
}

async function deleteGroup(request: AdminRequest, protocol: GroupProtocol): Promise<AdminReply> {
  const { broker, user } = request;
  const ref = await groupFromPath(request, protocol);
  requireManageGroup(user, ref, await groupTopics(broker, ref));
  const key = liveKey(ref);
  const scopes = deletedScopes(ref);
  const members = scopes.reduce((n, scope) => n + broker.liveGroups.membersOf(scope, key).length, 0);
  if (members > 0) throw new QuartetError('group_not_empty', `group '${ref.name}' has ${members} active member(s): it can only be deleted while it has none`);
  // Through the coordinator while its listener is open (it holds the group in memory), else from the store.
  for (const scope of scopes) {
    const source = broker.liveGroups.source(scope);
    if (source?.deleteGroup) await source.deleteGroup(key);
    else await broker.groups.delete(scope, key);
  }
  if (ref.iggy) for (let p = 0; p < ref.iggy.topic.partitions; p++) await broker.offsets.deleteGroup(iggyScope, iggyOffsetKey(ref.iggy.id, ref.iggy.topic, p));
  else await broker.offsets.deleteGroup(kafkaScope, ref.name);
  return { body: { deleted: groupIdentity(ref) } };
}

function routesFor(protocol: GroupProtocol, path: string): Route[] {
  return [
    { method: 'GET', path, handler: (r) => describeGroup(r, protocol) },
    { method: 'DELETE', path, handler: (r) => deleteGroup(r, protocol) },
    { method: 'POST', path: `${path}/reset-offsets`, handler: (r) => resetOffsets(r, protocol) },
  ];
}

export const groupRoutes: readonly Route[] = [
  { method: 'GET', path: 'groups', handler: listGroups },
  ...routesFor('kafka', 'groups/kafka/:group'),
  ...routesFor('cursus', 'groups/cursus/:group'),
  ...routesFor('iggy', 'groups/iggy/:namespace/:topic/:group'),
];
