// Who may do what through Kafka: the core's grants (core/access.ts, Iggy's permission model) read
// as Kafka ACLs, for a connection that authenticated with SASL. docs/kafka-sasl.md "Authorization"
// has the table; in short:
//
//   Kafka operation on a topic            grant needed (on that topic, its stream, or global)
//   Describe (Metadata, ListOffsets,      read_topic, poll_messages or send_messages (in Kafka,
//     OffsetFetch, OffsetForLeaderEpoch)    READ and WRITE imply DESCRIBE)
//   Read (Fetch, OffsetCommit,            poll_messages
//     TxnOffsetCommit, DeleteGroups)
//   Write (Produce, AddPartitionsToTxn)   send_messages
//   DescribeConfigs                       read_topic
//   Create (CreateTopics, auto-creation)  manage_topics in the default stream (or manage_streams)
//   Delete, Alter, AlterConfigs           manage_topic
//   (CreatePartitions, DeleteRecords)
//   broker DescribeConfigs / AlterConfigs read_servers / manage_servers
//
// Kafka's other resources have no Iggy grant: consumer groups, transactional ids and the cluster
// itself (DescribeCluster, FindCoordinator, InitProducerId) are open to every authenticated user.
// A connection without a principal (SASL not required and not used: an open PLAINTEXT listener,
// docs/configuration.md) is not restricted, nor is root. A principal whose user was deleted or made
// inactive since it authenticated may do nothing. Denials are answered as Kafka's authorizer
// answers them: TOPIC_AUTHORIZATION_FAILED (29) for the topic or partition, CLUSTER_AUTHORIZATION_FAILED
// (31) for the broker; a topic the user may not describe is never listed.
//
// The check is made before existence, as Kafka's: a topic the user may not describe answers 29
// whether it exists or not. A name no topic has yet is judged by the grants that would cover it
// (global, or stream-wide for the streams it may name), since Iggy grants are by id.

import { mayCreateTopic, mayServer, mayTopic, noSuchId, type TopicAction } from '../../core/access.js';
import type { Topic } from '../../core/catalog.js';
import { defaultNamespaceName } from '../../core/catalog.js';
import type { User } from '../../core/users.js';
import { catalogCandidatesForKafkaName } from '../mapping.js';
import { findKafkaTopic } from './topics.js';
import type { KafkaFrontend, KafkaSession } from './handlers/types.js';

export type KafkaTopicOperation = 'describe' | 'read' | 'write' | 'create' | 'delete' | 'alter' | 'describeConfigs' | 'alterConfigs';
export type KafkaClusterOperation = 'describeConfigs' | 'alterConfigs';

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
  /** False when every check passes (no principal, or root). */
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
  if (session.principal === null || session.principalUserId === undefined || session.principalUserId === null) return unrestricted;
  const user = frontend.broker.users.get(session.principalUserId);
  if (user?.root === true && user.status === 'active') return unrestricted;
  return new PrincipalAccess(frontend, user);
}

/** Records who authenticated: the user's id, so that a rename or a new user of the same name later changes nothing. */
export function authenticatedAs(frontend: KafkaFrontend, session: KafkaSession, username: string | null): void {
  session.principal = username;
  session.principalUserId = username === null ? null : (frontend.broker.users.get(username)?.id ?? null);
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
    return catalogCandidatesForKafkaName(name).some((candidate) => {
      const streamId = catalog.getNamespace(candidate.namespace)?.id ?? noSuchId;
      return grantsFor[operation].some((action) => mayTopic(user, streamId, noSuchId, action));
    });
  }

  cluster(operation: KafkaClusterOperation): boolean {
    if (this.user === null) return false;
    return mayServer(this.user, operation === 'describeConfigs' ? 'readServers' : 'manageServers');
  }
}
