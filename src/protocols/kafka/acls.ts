// Kafka ACL bindings read from and written to Quartet's grants (core/access.ts, Iggy's model):
// Quartet keeps no ACL list of its own, so DescribeAcls shows each user's grants as the bindings
// that stand for them, and CreateAcls/DeleteAcls set and clear grant flags. docs/kafka-admin.md
// "ACLs" has the table; in short (principal `User:<Quartet user>`, host `*`, ALLOW):
//
//   Kafka resource pattern              Quartet scope
//   TOPIC `*` LITERAL                   global grants
//   TOPIC `<stream>.` PREFIXED          the stream's grants (a stream other than `default`)
//   TOPIC `<name>` LITERAL              the topic's grants (the topic must exist: grants are by id)
//   CLUSTER `kafka-cluster` LITERAL     server grants
//
//   operation on a topic pattern        grant
//   READ / WRITE                        poll_messages / send_messages
//   DESCRIBE_CONFIGS                    read_topic(s) (in Iggy's model this also reads messages)
//   ALL, ALTER, ALTER_CONFIGS, DELETE   manage_topic(s); CREATE too, but not on one topic
//   DESCRIBE                            nothing of its own: accepted when READ, WRITE or
//                                       DESCRIBE_CONFIGS is held on that pattern, which imply it
//   CLUSTER DESCRIBE, DESCRIBE_CONFIGS  read_servers; ALTER, ALTER_CONFIGS, CLUSTER_ACTION, ALL → manage_servers
//   CLUSTER IDEMPOTENT_WRITE, GROUP *, TRANSACTIONAL_ID *   open to every user in Quartet: accepted,
//                                       nothing stored, never listed
// Refused with INVALID_REQUEST and the reason: DENY (Quartet grants only allow), hosts other than
// `*`, principals other than an existing `User:<name>` (root included: it may do everything),
// other prefixes and resource types, CREATE on one topic or on the cluster.

import { mayServer, mayTopic, noSuchId, type GlobalGrants, type Grants, type StreamGrants, type TopicGrants } from '../../core/access.js';
import { defaultNamespaceName, type Topic } from '../../core/catalog.js';
import type { User } from '../../core/users.js';
import { escapeNamePart, unescapeNamePart } from '../mapping.js';
import { findKafkaTopic, kafkaNameOf } from './topics.js';
import type { KafkaFrontend } from './handlers/types.js';

export const ResourceType = { UNKNOWN: 0, ANY: 1, TOPIC: 2, GROUP: 3, CLUSTER: 4, TRANSACTIONAL_ID: 5 } as const;
export const PatternType = { UNKNOWN: 0, ANY: 1, MATCH: 2, LITERAL: 3, PREFIXED: 4 } as const;
export const AclOperation = {
  UNKNOWN: 0, ANY: 1, ALL: 2, READ: 3, WRITE: 4, CREATE: 5, DELETE: 6, ALTER: 7, DESCRIBE: 8,
  CLUSTER_ACTION: 9, DESCRIBE_CONFIGS: 10, ALTER_CONFIGS: 11, IDEMPOTENT_WRITE: 12,
} as const;
export const PermissionType = { UNKNOWN: 0, ANY: 1, DENY: 2, ALLOW: 3 } as const;
export const clusterResourceName = 'kafka-cluster';

export interface AclBinding {
  resourceType: number;
  resourceName: string;
  patternType: number;
  principal: string;
  host: string;
  operation: number;
  permissionType: number;
}

export interface AclFilter {
  resourceTypeFilter: number;
  resourceNameFilter: string | null;
  patternTypeFilter: number;
  principalFilter: string | null;
  hostFilter: string | null;
  operation: number;
  permissionType: number;
}

/** Where a binding lands in a user's grants. */
type Scope = { kind: 'global' } | { kind: 'stream'; streamId: number } | { kind: 'topic'; streamId: number; topicId: number } | { kind: 'cluster' };
type Flag = keyof GlobalGrants | keyof StreamGrants | keyof TopicGrants;

/** What a binding means in Quartet: grant flags to set at a scope, nothing (open to all), or a refusal. */
export type AclMeaning = { kind: 'grant'; scope: Scope; flags: Flag[] } | { kind: 'implied'; scope: Scope } | { kind: 'open' } | { kind: 'refused'; message: string };

const refused = (message: string): AclMeaning => ({ kind: 'refused', message });

/** Flags for an operation on a topic-like scope (global, stream or topic), or a refusal. */
function topicFlags(scope: Scope, operation: number): AclMeaning {
  const manage: Flag = scope.kind === 'topic' ? 'manageTopic' : 'manageTopics';
  const read: Flag = scope.kind === 'topic' ? 'readTopic' : 'readTopics';
  switch (operation) {
    case AclOperation.READ: return { kind: 'grant', scope, flags: ['pollMessages'] };
    case AclOperation.WRITE: return { kind: 'grant', scope, flags: ['sendMessages'] };
    case AclOperation.DESCRIBE_CONFIGS: return { kind: 'grant', scope, flags: [read] };
    case AclOperation.ALL:
    case AclOperation.ALTER:
    case AclOperation.ALTER_CONFIGS:
    case AclOperation.DELETE: return { kind: 'grant', scope, flags: [manage] };
    case AclOperation.CREATE:
      return scope.kind === 'topic' ? refused('Quartet grants topic creation per stream: grant CREATE on the PREFIXED pattern `<stream>.` or on `*`') : { kind: 'grant', scope, flags: [manage] };
    case AclOperation.DESCRIBE: return { kind: 'implied', scope };
    default: return refused(`Operation ${operation} does not apply to topics`);
  }
}

function clusterMeaning(operation: number): AclMeaning {
  const scope: Scope = { kind: 'cluster' };
  switch (operation) {
    case AclOperation.DESCRIBE:
    case AclOperation.DESCRIBE_CONFIGS: return { kind: 'grant', scope, flags: ['readServers'] };
    case AclOperation.ALTER:
    case AclOperation.ALTER_CONFIGS:
    case AclOperation.CLUSTER_ACTION:
    case AclOperation.ALL: return { kind: 'grant', scope, flags: ['manageServers'] };
    case AclOperation.IDEMPOTENT_WRITE: return { kind: 'open' };
    default: return refused('Quartet grants topic creation on topic patterns: grant CREATE on TOPIC `*` instead');
  }
}

/** The Quartet user of a `User:<name>` principal, or why there is none. */
export function principalUser(frontend: KafkaFrontend, principal: string): User | string {
  if (!principal.startsWith('User:')) return `Principal ${principal} is not of the form User:<name>`;
  const name = principal.slice('User:'.length);
  if (name === '*') return 'Quartet cannot grant to every user (User:*): grant to each user';
  const user = frontend.broker.users.get(name);
  if (user === null) return `There is no Quartet user '${name}'`;
  if (user.root) return 'root may do everything: it takes no grants';
  return user;
}

/** What a binding to create means (its principal checked separately). */
export function meaningOf(frontend: KafkaFrontend, b: AclBinding): AclMeaning {
  if (b.permissionType === PermissionType.DENY) return refused('Quartet grants only allow: DENY bindings are not supported');
  if (b.permissionType !== PermissionType.ALLOW) return refused('Invalid permission type');
  if (b.operation === AclOperation.ANY || b.operation === AclOperation.UNKNOWN || b.operation > AclOperation.IDEMPOTENT_WRITE) return refused('Invalid operation');
  if (b.patternType !== PatternType.LITERAL && b.patternType !== PatternType.PREFIXED) return refused('Invalid pattern type');
  if (b.host !== '*') return refused('Quartet grants are not per host: use host *');
  switch (b.resourceType) {
    case ResourceType.GROUP:
    case ResourceType.TRANSACTIONAL_ID:
      return { kind: 'open' };
    case ResourceType.CLUSTER:
      if (b.patternType !== PatternType.LITERAL || b.resourceName !== clusterResourceName) return refused(`The cluster resource is LITERAL ${clusterResourceName}`);
      return clusterMeaning(b.operation);
    case ResourceType.TOPIC: {
      const scope = topicScope(frontend, b);
      return typeof scope === 'string' ? refused(scope) : topicFlags(scope, b.operation);
    }
    default:
      return refused(`Resource type ${b.resourceType} has no Quartet grant`);
  }
}

function topicScope(frontend: KafkaFrontend, b: AclBinding): Scope | string {
  if (b.patternType === PatternType.LITERAL && b.resourceName === '*') return { kind: 'global' };
  if (b.patternType === PatternType.PREFIXED) {
    const stream = b.resourceName.endsWith('.') ? unescapeNamePart(b.resourceName.slice(0, -1)) : null;
    const ns = stream === null || stream === defaultNamespaceName ? null : frontend.broker.catalog.getNamespace(stream);
    if (ns === null) return 'Quartet expresses a PREFIXED topic pattern only as `<stream>.`, for an existing stream other than default';
    return { kind: 'stream', streamId: ns.id };
  }
  const topic = findKafkaTopic(frontend.broker, b.resourceName);
  if (topic === null) return `There is no topic '${b.resourceName}': Quartet grants are on existing topics`;
  return { kind: 'topic', streamId: topic.namespaceId, topicId: topic.id };
}

// --- grants as data -----------------------------------------------------------------------------

export function emptyGrants(): Grants {
  return {
    global: { manageServers: false, readServers: false, manageUsers: false, readUsers: false, manageStreams: false, readStreams: false, manageTopics: false, readTopics: false, pollMessages: false, sendMessages: false },
    streams: [],
  };
}

function streamEntry(g: Grants, streamId: number): StreamGrants {
  let s = g.streams.find((e) => e.streamId === streamId);
  if (s === undefined) {
    s = { streamId, manageStream: false, readStream: false, manageTopics: false, readTopics: false, pollMessages: false, sendMessages: false, topics: [] };
    g.streams.push(s);
  }
  return s;
}

function topicEntry(g: Grants, streamId: number, topicId: number): TopicGrants {
  const s = streamEntry(g, streamId);
  let t = s.topics.find((e) => e.topicId === topicId);
  if (t === undefined) {
    t = { topicId, manageTopic: false, readTopic: false, pollMessages: false, sendMessages: false };
    s.topics.push(t);
  }
  return t;
}

/** Sets (true) or clears (false) the flags at the scope; clearing a manage or read right also clears its stream-level twin. */
export function setFlags(g: Grants, scope: Scope, flags: readonly Flag[], value: boolean): void {
  const target = (scope.kind === 'global' || scope.kind === 'cluster' ? g.global : scope.kind === 'stream' ? streamEntry(g, scope.streamId) : topicEntry(g, scope.streamId, scope.topicId)) as unknown as Record<string, boolean>;
  for (const flag of flags) target[flag] = value;
  if (value) return;
  if (scope.kind === 'global' && flags.includes('manageTopics')) target.manageStreams = false;
  if (scope.kind === 'global' && flags.includes('readTopics')) target.readStreams = false;
  if (scope.kind === 'stream' && flags.includes('manageTopics')) target.manageStream = false;
  if (scope.kind === 'stream' && flags.includes('readTopics')) target.readStream = false;
}

/** Whether grants imply Kafka DESCRIBE at the scope (READ, WRITE or DESCRIBE_CONFIGS held there or wider). */
export function impliesDescribe(user: User, g: Grants, scope: Scope): boolean {
  const as: User = { ...user, permissions: g };
  if (scope.kind === 'cluster') return mayServer(as, 'readServers');
  const streamId = scope.kind === 'global' ? noSuchId : scope.streamId;
  const topicId = scope.kind === 'topic' ? scope.topicId : noSuchId;
  return (['readTopic', 'poll', 'send'] as const).some((a) => mayTopic(as, streamId, topicId, a));
}

// --- grants shown as bindings -------------------------------------------------------------------

function topicBindings(principal: string, resourceName: string, patternType: number, rights: { manage: boolean; read: boolean; poll: boolean; send: boolean }): AclBinding[] {
  const base = { resourceType: ResourceType.TOPIC, resourceName, patternType, principal, host: '*', permissionType: PermissionType.ALLOW };
  const out: AclBinding[] = [];
  if (rights.manage) out.push({ ...base, operation: AclOperation.ALL });
  if (rights.read) out.push({ ...base, operation: AclOperation.DESCRIBE_CONFIGS });
  if (rights.poll) out.push({ ...base, operation: AclOperation.READ });
  if (rights.send) out.push({ ...base, operation: AclOperation.WRITE });
  return out;
}

/**
 * The bindings that stand for a user's grants. Grants on the default stream as a whole and the
 * user-management rights have no Kafka binding and are not shown.
 */
export function bindingsOf(frontend: KafkaFrontend, user: User, g: Grants): AclBinding[] {
  const principal = `User:${user.username}`;
  const out: AclBinding[] = [];
  const cluster = { resourceType: ResourceType.CLUSTER, resourceName: clusterResourceName, patternType: PatternType.LITERAL, principal, host: '*', permissionType: PermissionType.ALLOW };
  if (g.global.manageServers) out.push({ ...cluster, operation: AclOperation.ALTER });
  if (g.global.readServers) out.push({ ...cluster, operation: AclOperation.DESCRIBE });
  const gl = g.global;
  out.push(...topicBindings(principal, '*', PatternType.LITERAL, { manage: gl.manageTopics || gl.manageStreams, read: gl.readTopics || gl.readStreams, poll: gl.pollMessages, send: gl.sendMessages }));
  const catalog = frontend.broker.catalog;
  for (const s of g.streams) {
    const ns = catalog.listNamespaces().find((n) => n.id === s.streamId);
    if (ns === undefined) continue;
    if (ns.name !== defaultNamespaceName) {
      out.push(...topicBindings(principal, `${escapeNamePart(ns.name)}.`, PatternType.PREFIXED, { manage: s.manageStream || s.manageTopics, read: s.readStream || s.readTopics, poll: s.pollMessages, send: s.sendMessages }));
    }
    for (const t of s.topics) {
      const topic: Topic | undefined = catalog.listTopics(ns.name).find((x) => x.id === t.topicId);
      if (topic === undefined) continue;
      out.push(...topicBindings(principal, kafkaNameOf(topic), PatternType.LITERAL, { manage: t.manageTopic, read: t.readTopic, poll: t.pollMessages, send: t.sendMessages }));
    }
  }
  return out;
}

/** Kafka's AclBindingFilter.matches. */
export function filterMatches(f: AclFilter, b: AclBinding): boolean {
  if (f.resourceTypeFilter !== ResourceType.ANY && f.resourceTypeFilter !== b.resourceType) return false;
  if (!patternMatches(f, b)) return false;
  if (f.principalFilter !== null && f.principalFilter !== b.principal) return false;
  if (f.hostFilter !== null && f.hostFilter !== b.host) return false;
  if (f.operation !== AclOperation.ANY && f.operation !== b.operation) return false;
  return f.permissionType === PermissionType.ANY || f.permissionType === b.permissionType;
}

function patternMatches(f: AclFilter, b: AclBinding): boolean {
  const name = f.resourceNameFilter;
  switch (f.patternTypeFilter) {
    case PatternType.ANY: return name === null || name === b.resourceName;
    case PatternType.LITERAL:
    case PatternType.PREFIXED: return f.patternTypeFilter === b.patternType && (name === null || name === b.resourceName);
    case PatternType.MATCH:
      if (name === null) return true;
      if (b.patternType === PatternType.LITERAL) return b.resourceName === name || b.resourceName === '*';
      return name.startsWith(b.resourceName);
    default: return false;
  }
}

/** Why a filter is malformed (Kafka: a filter with UNKNOWN elements), or null. */
export function filterProblem(f: AclFilter): string | null {
  if (f.resourceTypeFilter === ResourceType.UNKNOWN) return 'The resource type filter is UNKNOWN';
  if (f.patternTypeFilter === PatternType.UNKNOWN || f.patternTypeFilter > PatternType.PREFIXED) return 'The pattern type filter is UNKNOWN';
  if (f.operation === AclOperation.UNKNOWN) return 'The operation filter is UNKNOWN';
  if (f.permissionType === PermissionType.UNKNOWN || f.permissionType > PermissionType.ALLOW) return 'The permission type filter is UNKNOWN';
  return null;
}

/** The scope and flags a described binding stands for (for DeleteAcls). */
export function grantOfBinding(frontend: KafkaFrontend, b: AclBinding): { scope: Scope; flags: Flag[] } | null {
  const meaning = meaningOf(frontend, b);
  return meaning.kind === 'grant' ? { scope: meaning.scope, flags: meaning.flags } : null;
}
