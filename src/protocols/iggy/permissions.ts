// Iggy permissions (server notes §7 "Users and permissions"), stored as the user's opaque
// `permissions` value in the core UserStore: the codec's Permissions object, as JSON. Root (id 0)
// may do everything. The checks follow the reference permissioner's implications: manage implies
// read; global manage_streams/read_streams cover every stream's topics and messages; global or a
// stream's manage_topics/read_topics cover the topics and their messages (read: polling; manage:
// sending too); poll/send may be granted globally, per stream or per topic. A missing permission is answered with status 41 (Unauthorized), empty body.

import type { User } from '../../core/users.js';
import type { Permissions, StreamPermissions, TopicPermissions } from './codec/index.js';
import { unauthorized } from './errors.js';

export type ServerAction = 'readServers' | 'manageServers' | 'readUsers' | 'manageUsers';
export type StreamAction = 'readStream' | 'manageStream';
export type TopicAction = 'readTopic' | 'manageTopic' | 'poll' | 'send';

export function permissionsOf(user: User): Permissions | null {
  const p = user.permissions as Permissions | null | undefined;
  if (p === null || p === undefined || typeof p !== 'object' || typeof (p as { global?: unknown }).global !== 'object') return null;
  return p;
}

function allowedServer(user: User, action: ServerAction): boolean {
  if (user.root) return true;
  const g = permissionsOf(user)?.global;
  if (!g) return false;
  switch (action) {
    case 'readServers':
      return g.readServers || g.manageServers;
    case 'manageServers':
      return g.manageServers;
    case 'readUsers':
      return g.readUsers || g.manageUsers;
    case 'manageUsers':
      return g.manageUsers;
  }
}

function streamEntry(p: Permissions, streamId: number): StreamPermissions | undefined {
  return p.streams.find((s) => s.streamId === streamId);
}

function topicEntry(s: StreamPermissions | undefined, topicId: number): TopicPermissions | undefined {
  return s?.topics.find((t) => t.topicId === topicId);
}

function allowedStream(user: User, streamId: number, action: StreamAction): boolean {
  if (user.root) return true;
  const p = permissionsOf(user);
  if (!p) return false;
  const g = p.global;
  const s = streamEntry(p, streamId);
  if (action === 'manageStream') return g.manageStreams || (s?.manageStream ?? false);
  return g.manageStreams || g.readStreams || (s !== undefined && (s.manageStream || s.readStream));
}

function allowedTopic(user: User, streamId: number, topicId: number, action: TopicAction): boolean {
  if (user.root) return true;
  const p = permissionsOf(user);
  if (!p) return false;
  const g = p.global;
  const s = streamEntry(p, streamId);
  const t = topicEntry(s, topicId);
  const manageTopics = g.manageStreams || g.manageTopics || (s !== undefined && (s.manageStream || s.manageTopics)) || (t?.manageTopic ?? false);
  const readTopics = manageTopics || g.readStreams || g.readTopics || (s !== undefined && (s.readStream || s.readTopics)) || (t?.readTopic ?? false);
  switch (action) {
    case 'manageTopic':
      return manageTopics;
    case 'readTopic':
      return readTopics;
    case 'poll':
      // manage_streams → read_streams → read_topics → poll_messages (reference `poll_messages`).
      return readTopics || g.pollMessages || (s?.pollMessages ?? false) || (t?.pollMessages ?? false);
    case 'send':
      // manage_streams → manage_topics → send_messages (reference `append_messages`).
      return manageTopics || g.sendMessages || (s?.sendMessages ?? false) || (t?.sendMessages ?? false);
  }
}

export function requireServer(user: User, action: ServerAction): void {
  if (!allowedServer(user, action)) throw unauthorized();
}

export function requireStreamPermission(user: User, streamId: number, action: StreamAction): void {
  if (!allowedStream(user, streamId, action)) throw unauthorized();
}

export function requireTopicPermission(user: User, streamId: number, topicId: number, action: TopicAction): void {
  if (!allowedTopic(user, streamId, topicId, action)) throw unauthorized();
}

/** Global create permission (no stream yet): manage_streams. */
export function requireCreateStream(user: User): void {
  if (!user.root && !(permissionsOf(user)?.global.manageStreams ?? false)) throw unauthorized();
}

/** Create a topic in a stream: manage_streams, manage_topics, or the stream's manage rights. */
export function requireCreateTopic(user: User, streamId: number): void {
  if (user.root) return;
  const p = permissionsOf(user);
  const s = p ? streamEntry(p, streamId) : undefined;
  if (!p || !(p.global.manageStreams || p.global.manageTopics || (s !== undefined && (s.manageStream || s.manageTopics)))) throw unauthorized();
}

/**
 * The stream list (GetStreams): global manage_streams or read_streams only, as the reference
 * permissioner's get_streams; per-stream grants do not open the list.
 */
export function requireStreamList(user: User): void {
  if (user.root) return;
  const g = permissionsOf(user)?.global;
  if (!g || !(g.manageStreams || g.readStreams)) throw unauthorized();
}
