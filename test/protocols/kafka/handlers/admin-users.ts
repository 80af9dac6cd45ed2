// Test helpers for the admin handler tests: a SASL session of a user with the given global grants
// (by their Iggy names), and one record appended to a partition.

import { globalGrants, type globalGrantNames } from '../../../../src/core/access.js';
import type { TopicRef } from '../../../../src/core/broker.js';
import { authenticatedAs } from '../../../../src/protocols/kafka/access.js';
import { appendRequestFromBatch } from '../../../../src/protocols/kafka/codec/kafka-format.js';
import type { KafkaSession } from '../../../../src/protocols/kafka/handlers/types.js';
import type { AdminHarness } from './admin-harness.js';
import { batchOf } from './data-harness.js';

/** A session authenticated as a new user holding exactly these global rights. */
export async function sessionWith(h: AdminHarness, username: string, rights: Array<keyof typeof globalGrantNames>): Promise<KafkaSession> {
  const user = await h.broker.users.create({ username, password: `${username}-pw`, permissions: globalGrants(rights) });
  const session = h.newSession();
  session.sasl = { mechanism: 'PLAIN', rawTokens: false, userId: user.id };
  authenticatedAs(session, username);
  return session;
}

/** A session authenticated as a new user whose only right is poll_messages on one default-stream topic. */
export async function sessionReadingTopic(h: AdminHarness, username: string, topic: string): Promise<KafkaSession> {
  const t = h.broker.catalog.getTopic({ namespace: 'default', topic });
  if (t === null) throw new Error(`no topic ${topic}`);
  const grants = globalGrants([]);
  grants.streams.push({
    streamId: t.namespaceId, manageStream: false, readStream: false, manageTopics: false, readTopics: false, pollMessages: false, sendMessages: false,
    topics: [{ topicId: t.id, manageTopic: false, readTopic: false, pollMessages: true, sendMessages: false }],
  });
  const user = await h.broker.users.create({ username, password: `${username}-pw`, permissions: grants });
  const session = h.newSession();
  session.sasl = { mechanism: 'PLAIN', rawTokens: false, userId: user.id };
  authenticatedAs(session, username);
  return session;
}

/** Appends records with these values to one partition. */
export async function appendValues(h: AdminHarness, topic: TopicRef, partition: number, values: string[]): Promise<void> {
  const built = appendRequestFromBatch(batchOf(values.map((value) => ({ key: null, value }))));
  if (!built.ok) throw new Error(built.reason);
  await h.broker.append(topic, partition, built.request);
}
