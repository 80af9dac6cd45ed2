// Iggy grants name streams and topics by their numeric ids, which are handed out again after a
// deletion (as on the reference server), so a grant must go with what it names: whoever deletes
// it (a Kafka DeleteTopics too) and whether or not the Iggy listener is open at the time. The
// server watches every broker it opens, before any listener starts (src/server/listeners.ts
// builtinBrokerWatchers); an Iggy front-end started on its own broker (tests) does the same.

import type { Broker } from '../../core/broker.js';
import { permissionsOf } from './permissions.js';

const watched = new WeakSet<Broker>();

/**
 * Drops the grants of every stream or topic the broker deletes from now on, inside the deletion
 * (before its id can be handed out again), once per broker; and, at every call, the grants that
 * name streams or topics that do not exist (deleted before a crash finished the cleanup).
 */
export async function watchIggyGrants(broker: Broker): Promise<void> {
  if (!watched.has(broker)) {
    watched.add(broker);
    broker.onTopicChanges({
      topicDeleted: (topic) => dropGrants(broker, (s, t) => s === topic.namespaceId && t === topic.id, () => false),
      namespaceDeleted: (ns) => dropGrants(broker, () => false, (s) => s === ns.id),
    });
  }
  // Listening first, nothing slips between.
  await dropGrants(broker, (streamId, topicId) => broker.catalog.getTopic({ namespace: streamId, topic: topicId }) === null, (streamId) => broker.catalog.getNamespace(streamId) === null);
}

/**
 * Removes from every user's permissions the per-stream and per-topic entries the predicates pick
 * (inside the user store's queue: a permission change made meanwhile is not lost).
 */
async function dropGrants(broker: Broker, topicGone: (streamId: number, topicId: number) => boolean, streamGone: (streamId: number) => boolean): Promise<void> {
  await broker.users.editPermissions((current, user) => {
    const p = permissionsOf({ ...user, permissions: current });
    if (user.root || p === null) return current;
    let changed = false;
    const streams = [];
    for (const s of p.streams) {
      if (streamGone(s.streamId)) {
        changed = true;
        continue;
      }
      const topics = s.topics.filter((t) => !topicGone(s.streamId, t.topicId));
      if (topics.length !== s.topics.length) changed = true;
      streams.push(topics.length === s.topics.length ? s : { ...s, topics });
    }
    return changed ? { ...p, streams } : current;
  });
}
