// Iggy permission checks (server notes §7 "Users and permissions") over the core's grants
// (core/access.ts, where the model and the reference permissioner's implications live; the Kafka
// front-end checks the same grants). A missing permission is answered with status 41
// (Unauthorized), empty body.

import { grantsOf, mayCreateStream, mayCreateTopic, mayListStreams, mayServer, mayStream, mayTopic, type ServerAction, type StreamAction, type TopicAction } from '../../core/access.js';
import type { User } from '../../core/users.js';
import type { Permissions } from './codec/index.js';
import { unauthorized } from './errors.js';

export type { ServerAction, StreamAction, TopicAction };

/** The user's permissions in the codec's shape (the core's grants are stored in it), or null. */
export function permissionsOf(user: User): Permissions | null {
  return grantsOf(user);
}

export function requireServer(user: User, action: ServerAction): void {
  if (!mayServer(user, action)) throw unauthorized();
}

export function requireStreamPermission(user: User, streamId: number, action: StreamAction): void {
  if (!mayStream(user, streamId, action)) throw unauthorized();
}

export function requireTopicPermission(user: User, streamId: number, topicId: number, action: TopicAction): void {
  if (!mayTopic(user, streamId, topicId, action)) throw unauthorized();
}

/** Global create permission (no stream yet): manage_streams. */
export function requireCreateStream(user: User): void {
  if (!mayCreateStream(user)) throw unauthorized();
}

/** Create a topic in a stream (-1: made with it): manage_streams, manage_topics, or the stream's manage rights. */
export function requireCreateTopic(user: User, streamId: number): void {
  if (!mayCreateTopic(user, streamId)) throw unauthorized();
}

/** The stream list (GetStreams): global manage_streams or read_streams only; per-stream grants do not open it. */
export function requireStreamList(user: User): void {
  if (!mayListStreams(user)) throw unauthorized();
}
