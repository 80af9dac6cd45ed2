// Admin API topic routes: list, create, describe, alter config, delete, purge, over the core
// catalog and partition logs. A topic is named by its catalog namespace and name
// (/topics/<namespace>/<topic>, `default` for Kafka and Cursus topics); each answer also gives
// its name under every protocol (docs/mapping.md).

import { QuartetError } from '../../base/errors.js';
import type { Broker } from '../../core/broker.js';
import type { Topic } from '../../core/catalog.js';
import { mayCreateStream, mayCreateTopic, mayTopic, noSuchId, type TopicAction } from '../../core/access.js';
import type { User } from '../../core/users.js';
import { defaultNamespace, felixNamesForCatalogNamespace, kafkaVisibleTopics } from '../../protocols/mapping.js';
import type { AdminReply, AdminRequest, Route } from './api.js';
import { objectBody, optionalInteger, optionalObject, optionalStringList, requiredString, optionalString } from './input.js';

/** Cursus topic names (docs/mapping.md "Catalog ↔ Cursus"): the default namespace only. */
const cursusName = /^[A-Za-z0-9._=-]{1,249}$/;

export interface TopicNames {
  kafka: string | null;
  iggy: { stream: string; streamId: number; topic: string; topicId: number };
  cursus: string | null;
  /** null where Felix cannot name the topic's namespace (docs/mapping.md). */
  felix: { tenant: string; namespace: string; stream: string } | null;
}

export interface PartitionSummary {
  partition: number;
  startOffset: number;
  endOffset: number;
  messages: number;
  sizeBytes: number;
  segments: number;
}

/** The topic's name under each protocol; `kafkaNames` maps internal ids to visible Kafka names. */
export function topicNames(topic: Topic, kafkaNames: ReadonlyMap<number, string>): TopicNames {
  const cursus = topic.namespace === defaultNamespace && cursusName.test(topic.name) && topic.name !== '.' && topic.name !== '..' ? topic.name : null;
  return {
    kafka: kafkaNames.get(topic.internalId) ?? null,
    iggy: { stream: topic.namespace, streamId: topic.namespaceId, topic: topic.name, topicId: topic.id },
    cursus,
    felix: felixOf(topic),
  };
}

function felixOf(topic: Topic): TopicNames['felix'] {
  const names = felixNamesForCatalogNamespace(topic.namespace);
  return names === null ? null : { tenant: names.tenantId, namespace: names.namespace, stream: topic.name };
}

export function kafkaNameMap(broker: Broker): Map<number, string> {
  return new Map(kafkaVisibleTopics(broker.catalog.listTopics()).map((v) => [v.topic.internalId, v.kafkaName]));
}

/** One partition's offsets and size. `messages` counts the offsets in the log (transaction markers included). */
export function partitionSummary(broker: Broker, topic: Topic, partition: number): PartitionSummary {
  const s = broker.partition(topic, partition).stats();
  return { partition, startOffset: s.logStartOffset, endOffset: s.highWatermark, messages: Math.max(0, s.highWatermark - s.logStartOffset), sizeBytes: s.sizeBytes, segments: s.segmentCount };
}

export function partitionSummaries(broker: Broker, topic: Topic): PartitionSummary[] {
  return Array.from({ length: topic.partitions }, (_, p) => partitionSummary(broker, topic, p));
}

function topicSummary(broker: Broker, topic: Topic, kafkaNames: ReadonlyMap<number, string>): Record<string, unknown> {
  const partitions = partitionSummaries(broker, topic);
  return {
    namespace: topic.namespace,
    name: topic.name,
    partitions: topic.partitions,
    messages: partitions.reduce((n, p) => n + p.messages, 0),
    sizeBytes: partitions.reduce((n, p) => n + p.sizeBytes, 0),
    names: topicNames(topic, kafkaNames),
    createdAt: new Date(topic.createdAt).toISOString(),
  };
}

/** The topic named by the path, if the caller may `action` it (else unauthorized, as if it were checked first). */
export function topicFromPath(request: AdminRequest, action: TopicAction): Topic {
  return requireTopicAccess(request.broker, request.user, request.params.namespace!, request.params.topic!, action);
}

export function requireTopicAccess(broker: Broker, user: User, namespace: string, name: string, action: TopicAction): Topic {
  const topic = broker.catalog.getTopic({ namespace, topic: name });
  const denied = (): QuartetError => new QuartetError('unauthorized', `user '${user.username}' may not ${actionWords[action]} topic '${namespace}/${name}'`);
  if (topic === null) {
    // As Kafka: a user who could not see the topic if it existed learns nothing of its existence.
    const ns = broker.catalog.getNamespace(namespace);
    if (!mayTopic(user, ns?.id ?? noSuchId, noSuchId, action)) throw denied();
    if (ns === null && namespace !== defaultNamespace) throw new QuartetError('unknown_namespace', `namespace '${namespace}' does not exist`);
    throw new QuartetError('unknown_topic', `topic '${namespace}/${name}' does not exist`);
  }
  if (!mayTopic(user, topic.namespaceId, topic.id, action)) throw denied();
  return topic;
}

const actionWords: Record<TopicAction, string> = { readTopic: 'read', manageTopic: 'manage', poll: 'poll', send: 'send to' };

async function listTopics({ broker, user }: AdminRequest): Promise<AdminReply> {
  const names = kafkaNameMap(broker);
  const visible = broker.catalog.listTopics().filter((t) => mayTopic(user, t.namespaceId, t.id, 'readTopic'));
  await Promise.all(visible.map((t) => broker.purgeInProgress(t)));
  return { body: { topics: visible.map((t) => topicSummary(broker, t, names)) } };
}

async function describeTopic(request: AdminRequest): Promise<AdminReply> {
  const { broker } = request;
  const topic = topicFromPath(request, 'readTopic');
  await broker.purgeInProgress(topic);
  return { body: describe(broker, topic) };
}

function describe(broker: Broker, topic: Topic): Record<string, unknown> {
  return {
    ...topicSummary(broker, topic, kafkaNameMap(broker)),
    ids: { namespaceId: topic.namespaceId, topicId: topic.id, internalId: topic.internalId, uuid: topic.uuid.toString('hex') },
    partitionDetails: partitionSummaries(broker, topic),
    config: broker.describeTopicConfig(topic),
  };
}

async function createTopic({ broker, user, body: raw }: AdminRequest): Promise<AdminReply> {
  const body = objectBody(raw);
  const namespace = optionalString(body, 'namespace') ?? defaultNamespace;
  const name = requiredString(body, 'name');
  const partitions = optionalInteger(body, 'partitions', 0);
  const config = optionalObject(body, 'config');
  const existing = broker.catalog.getNamespace(namespace);
  if (!mayCreateTopic(user, existing?.id ?? noSuchId)) throw new QuartetError('unauthorized', `user '${user.username}' may not create topics in '${namespace}'`);
  if (existing === null && namespace !== defaultNamespace) {
    if (!mayCreateStream(user)) throw new QuartetError('unauthorized', `namespace '${namespace}' does not exist and user '${user.username}' may not create it`);
    await broker.createNamespace(namespace);
  }
  const topic = await broker.createTopic(namespace, name, { ...(partitions !== undefined ? { partitions } : {}), ...(config !== undefined ? { config } : {}) });
  return { status: 201, body: describe(broker, topic) };
}

async function alterConfig(request: AdminRequest): Promise<AdminReply> {
  const { broker } = request;
  const topic = topicFromPath(request, 'manageTopic');
  const body = objectBody(request.body);
  const set = optionalObject(body, 'set') ?? {};
  const remove = optionalStringList(body, 'delete') ?? [];
  for (const [key, value] of Object.entries(set)) {
    if (typeof value !== 'string' && typeof value !== 'number') throw new QuartetError('invalid_request', `config value of "${key}" must be a string or a number`);
    if (remove.includes(key)) throw new QuartetError('invalid_request', `config key "${key}" is both set and deleted`);
  }
  if (Object.keys(set).length === 0 && remove.length === 0) throw new QuartetError('invalid_request', 'nothing to change: give "set" and/or "delete"');
  const changes: Record<string, unknown> = { ...set, ...Object.fromEntries(remove.map((k) => [k, null])) };
  const updated = await broker.updateTopicConfig(topic, changes);
  return { body: { namespace: updated.namespace, name: updated.name, config: broker.describeTopicConfig(updated) } };
}

async function deleteTopic(request: AdminRequest): Promise<AdminReply> {
  const topic = topicFromPath(request, 'manageTopic');
  const names = topicNames(topic, kafkaNameMap(request.broker));
  await request.broker.deleteTopic(topic);
  return { body: { deleted: { namespace: topic.namespace, name: topic.name, names } } };
}

async function purgeTopic(request: AdminRequest): Promise<AdminReply> {
  const topic = topicFromPath(request, 'manageTopic');
  await request.broker.purgeTopic(topic);
  await request.broker.purgeInProgress(topic);
  return { body: { purged: { namespace: topic.namespace, name: topic.name } } };
}

export const topicRoutes: readonly Route[] = [
  { method: 'GET', path: 'topics', handler: listTopics },
  { method: 'POST', path: 'topics', handler: createTopic },
  { method: 'GET', path: 'topics/:namespace/:topic', handler: describeTopic },
  { method: 'DELETE', path: 'topics/:namespace/:topic', handler: deleteTopic },
  { method: 'PATCH', path: 'topics/:namespace/:topic/config', handler: alterConfig },
  { method: 'POST', path: 'topics/:namespace/:topic/purge', handler: purgeTopic },
];
