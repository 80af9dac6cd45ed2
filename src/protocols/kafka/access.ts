// Who may do what through Kafka: the core's grants (core/access.ts, Iggy's permission model) read
// as Kafka ACLs, for a connection that authenticated with SASL. docs/kafka-sasl.md "Authorization"
// has the table; in short:
//
//   Kafka operation on a topic            grant needed (on that topic, its stream, or global)
//   Describe (Metadata, ListOffsets,      read_topic, poll_messages or send_messages (in Kafka,
//     OffsetFetch, OffsetForLeaderEpoch)    READ and WRITE imply DESCRIBE)
//   Read (Fetch, OffsetCommit,            poll_messages
//     TxnOffsetCommit; groups)
//   Write (Produce, AddPartitionsToTxn)   send_messages
//   DescribeConfigs                       read_topic
//   Create (CreateTopics, auto-creation)  manage_topics in the default stream (or manage_streams)
//   Delete, Alter, AlterConfigs           manage_topic
//   (CreatePartitions, DeleteRecords)
//   broker DescribeConfigs / AlterConfigs read_servers / manage_servers
//   cluster Describe (DescribeLogDirs)    read_servers
//   cluster Alter (ElectLeaders)          manage_servers
//   ACLs and SCRAM credentials            read_users (Describe*) / manage_users (Create, Delete,
//     (Quartet's users and grants)          Alter): they read or change users, not the cluster
//
// Kafka consumer groups have no grant of their own: a group is open to a user that may read every
// topic it involves (mayUseGroup, checked by JoinGroup, LeaveGroup, DescribeGroups, ListGroups,
// DeleteGroups, OffsetCommit, OffsetFetch, AddOffsetsToTxn and TxnOffsetCommit: its members'
// subscriptions and its committed offsets), so that neither what it reveals nor what can be done
// to it goes past the user's topic grants; such a user joins only as a consumer naming topics it
// may read (mayJoinWith), and groups of other protocol types (Kafka Connect, ...) are closed to it;
// otherwise GROUP_AUTHORIZATION_FAILED (30). Transactional ids and the cluster itself (DescribeCluster,
// FindCoordinator, InitProducerId) have no grant either and are open to every authenticated user.
// A connection without a principal (SASL not required and not used: an open PLAINTEXT listener,
// docs/configuration.md) is not restricted, nor is root. The principal's user is the one whose
// credentials the SASL exchange checked, by id; a connection whose user was deleted or made
// inactive since is closed at its next request (connection.ts, principalStillActive), and the
// checks here deny such a user, or a principal without an id, everything. Denials are answered
// as Kafka's authorizer answers them: TOPIC_AUTHORIZATION_FAILED (29) for the topic or partition,
// CLUSTER_AUTHORIZATION_FAILED (31) for the broker; a topic the user may not describe is never
// listed.
//
// The check is made before existence, as Kafka's: a topic the user may not describe answers 29
// whether it exists or not. A name no topic has yet is judged by the grants that would cover it
// in every place it could denote (global, or stream-wide: `s.t` could be topic `s.t` of stream
// `default` or topic `t` of stream `s`), since Iggy grants are by id.

import { mayCreateTopic, mayServer, mayTopic, noSuchId, type ServerAction, type TopicAction } from '../../core/access.js';
import type { Topic } from '../../core/catalog.js';
import { defaultNamespaceName } from '../../core/catalog.js';
import type { User } from '../../core/users.js';
import { catalogCandidatesForKafkaName } from '../mapping.js';
import { subscriptionTopics } from './coordinator/group-coordinator.js';
import { kafkaOffsetScope } from './handlers/offset-commit.js';
import { findKafkaTopic } from './topics.js';
import type { KafkaFrontend, KafkaSession } from './handlers/types.js';

export type KafkaTopicOperation = 'describe' | 'read' | 'write' | 'create' | 'delete' | 'alter' | 'describeConfigs' | 'alterConfigs';
export type KafkaClusterOperation = 'describe' | 'alter' | 'describeConfigs' | 'alterConfigs' | 'describeUsers' | 'alterUsers';

/** The Iggy server right each cluster-level operation needs (see the table above). */
const clusterGrants: Record<KafkaClusterOperation, ServerAction> = {
  describe: 'readServers',
  alter: 'manageServers',
  describeConfigs: 'readServers',
  alterConfigs: 'manageServers',
  describeUsers: 'readUsers',
  alterUsers: 'manageUsers',
};

/** The grants a Kafka topic operation needs; any one of them suffices. */
const grantsFor: Record<Exclude<KafkaTopicOperation, 'create'>, readonly TopicAction[]> = {
  describe: ['readTopic', 'poll', 'send'],
  read: ['poll'],
  write: ['send'],
  describeConfigs: ['readTopic'],
  delete: ['manageTopic'],
  alter: ['manageTopic'],
  alterConfigs: ['manageTopic'],
};

export interface KafkaAccess {
  /** False when every check passes (no principal, or root): callers skip work only checks need. */
  readonly restricted: boolean;
  /** Whether the operation is allowed on this topic. */
  topic(topic: Topic, operation: KafkaTopicOperation): boolean;
  /** The same by Kafka name, whether or not a topic has it yet. */
  topicNamed(name: string, operation: KafkaTopicOperation): boolean;
  cluster(operation: KafkaClusterOperation): boolean;
}

const unrestricted: KafkaAccess = {
  restricted: false,
  topic: () => true,
  topicNamed: () => true,
  cluster: () => true,
};

/** What this connection's principal may do now (its user is looked up again on every call). */
export function kafkaAccessOf(frontend: KafkaFrontend, session: KafkaSession): KafkaAccess {
  if (session.principal === null) return unrestricted;
  // A principal without an id (none was recorded) is denied everything, never let through.
  const id = session.principalUserId;
  const user = id === undefined || id === null ? null : frontend.broker.users.get(id);
  if (user?.root === true && user.status === 'active') return unrestricted;
  return new PrincipalAccess(frontend, user);
}

/**
 * Whether a restricted user may use a Kafka consumer group: Kafka groups have no grant of their
 * own, so a group is open to a user that may read (poll_messages) every topic it involves, those
 * its members subscribe to and those it has committed offsets for. Anything else about the group
 * (its members, their subscriptions, the power to make it rebalance or to remove a member) would
 * tell or give that user more than its grants do.
 */
export async function mayUseGroup(frontend: KafkaFrontend, access: KafkaAccess, groupId: string): Promise<boolean> {
  if (!access.restricted) return true;
  // Members that are not consumers (or whose metadata does not decode) involve unknown topics.
  const subscribed = frontend.groups.subscribedTopics(groupId);
  if (subscribed === null) return false;
  for (const name of subscribed) if (!access.topicNamed(name, 'read')) return false;
  for (const internalId of await frontend.broker.offsets.groupTopics(kafkaOffsetScope, groupId)) {
    const topic = frontend.broker.catalog.topicByInternalId(internalId);
    if (topic !== null && !access.topic(topic, 'read')) return false;
  }
  return true;
}

/**
 * Whether a restricted user may join a group with these protocols: as a consumer (protocol type
 * "consumer") whose every subscription names only topics it may read, so that it cannot bring
 * topics it may not read into a group (and lock out its members) nor join groups of other kinds.
 */
export function mayJoinWith(access: KafkaAccess, protocolType: string, protocols: ReadonlyArray<{ metadata: Buffer }>): boolean {
  if (!access.restricted) return true;
  if (protocolType !== 'consumer') return false;
  for (const protocol of protocols) {
    const topics = subscriptionTopics(protocol.metadata);
    if (topics === null || !topics.every((name) => access.topicNamed(name, 'read'))) return false;
  }
  return true;
}

/** False when the connection authenticated as a user that has since been deleted or made inactive. */
export function principalStillActive(frontend: KafkaFrontend, session: KafkaSession): boolean {
  if (session.principal === null) return true;
  const id = session.principalUserId;
  return id !== undefined && id !== null && frontend.broker.users.get(id)?.status === 'active';
}

/**
 * Records who authenticated: the name, and the id of the user whose credentials the exchange
 * checked (sasl-handshake.ts), never looked up by name again, so that a rename or delete during
 * the exchange, or a new user of the same name later, changes nothing.
 */
export function authenticatedAs(session: KafkaSession, username: string | null): void {
  session.principal = username;
  session.principalUserId = username === null ? null : (session.sasl?.userId ?? null);
}

class PrincipalAccess implements KafkaAccess {
  readonly restricted = true;

  constructor(
    private readonly frontend: KafkaFrontend,
    /** null: deleted since it authenticated (denied everything). */
    private readonly user: User | null,
  ) {}

  topic(topic: Topic, operation: KafkaTopicOperation): boolean {
    const user = this.user;
    if (user === null) return false;
    if (operation === 'create') return mayCreateTopic(user, topic.namespaceId);
    return grantsFor[operation].some((action) => mayTopic(user, topic.namespaceId, topic.id, action));
  }

  topicNamed(name: string, operation: KafkaTopicOperation): boolean {
    const user = this.user;
    if (user === null) return false;
    const catalog = this.frontend.broker.catalog;
    if (operation === 'create') {
      // Kafka creates in the default namespace only (made with its first topic when missing).
      return mayCreateTopic(user, catalog.getNamespace(defaultNamespaceName)?.id ?? noSuchId);
    }
    const existing = findKafkaTopic(this.frontend.broker, name);
    if (existing !== null) return this.topic(existing, operation);
    // Every place the name could denote must allow it: judged by one of them, the answer would
    // tell a user with rights there whether a topic of that name exists in another stream.
    return catalogCandidatesForKafkaName(name).every((candidate) => {
      const streamId = catalog.getNamespace(candidate.namespace)?.id ?? noSuchId;
      return grantsFor[operation].some((action) => mayTopic(user, streamId, noSuchId, action));
    });
  }

  cluster(operation: KafkaClusterOperation): boolean {
    if (this.user === null) return false;
    return mayServer(this.user, clusterGrants[operation]);
  }
}
