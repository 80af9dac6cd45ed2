// Access grants: what a user may do, whatever protocol it comes through. The model is Iggy's
// permissions (server notes §7 "Users and permissions"), the one grant model Quartet has: global
// rights, per-stream rights and per-topic rights, a stream being a catalog namespace and a topic a
// catalog topic, both named here by their catalog ids. A user's grants are stored as its opaque
// `permissions` value (core/users.ts) in this shape; Iggy writes them (UpdatePermissions,
// CreateUser), the Iggy and Kafka front-ends both check them (docs/mapping.md, "Users and access
// across protocols").
//
// The checks follow the reference permissioner's implications: root (user id 0) may do
// everything; manage implies read; global manage_streams/read_streams cover every stream's topics
// and messages; global or a stream's manage_topics/read_topics cover the topics and their messages
// (read: polling; manage: sending too); poll and send may be granted globally, per stream or per
// topic. An inactive user may do nothing.

import type { GlobalGrants, Grants, StreamGrants, TopicGrants } from '../base/grants.js';
import type { User } from './users.js';

export type { GlobalGrants, Grants, StreamGrants, TopicGrants } from '../base/grants.js';

/** The global grant names as Iggy spells them (snake_case), in its wire order. */
export const globalGrantNames = {
  manage_servers: 'manageServers',
  read_servers: 'readServers',
  manage_users: 'manageUsers',
  read_users: 'readUsers',
  manage_streams: 'manageStreams',
  read_streams: 'readStreams',
  manage_topics: 'manageTopics',
  read_topics: 'readTopics',
  poll_messages: 'pollMessages',
  send_messages: 'sendMessages',
} as const satisfies Record<string, keyof GlobalGrants>;

/** Grants with the given global rights (by their snake_case names) and no per-stream ones. */
export function globalGrants(names: Iterable<keyof typeof globalGrantNames>): Grants {
  const global = Object.fromEntries(Object.values(globalGrantNames).map((k) => [k, false])) as unknown as GlobalGrants;
  for (const name of names) global[globalGrantNames[name]] = true;
  return { global, streams: [] };
}

/** Every global right: what root has, for a user that is not root. */
export function allGlobalGrants(): Grants {
  return globalGrants(Object.keys(globalGrantNames) as Array<keyof typeof globalGrantNames>);
}

export type ServerAction = 'readServers' | 'manageServers' | 'readUsers' | 'manageUsers';
export type StreamAction = 'readStream' | 'manageStream';
export type TopicAction = 'readTopic' | 'manageTopic' | 'poll' | 'send';

/** A stream or topic id that exists nowhere: only global (or, for topics, stream-wide) rights cover it. */
export const noSuchId = -1;

/** The user's grants, or null when it has none (or they are not in this shape). */
export function grantsOf(user: User): Grants | null {
  const p = user.permissions as Grants | null | undefined;
  if (p === null || p === undefined || typeof p !== 'object' || typeof (p as { global?: unknown }).global !== 'object') return null;
  return p;
}

/** Grants that apply: none for an inactive user; `'all'` for root. */
function effective(user: User): Grants | 'all' | null {
  if (user.status !== 'active') return null;
  if (user.root) return 'all';
  return grantsOf(user);
}

function streamEntry(p: Grants, streamId: number): StreamGrants | undefined {
  return streamId === noSuchId ? undefined : p.streams.find((s) => s.streamId === streamId);
}

function topicEntry(s: StreamGrants | undefined, topicId: number): TopicGrants | undefined {
  return topicId === noSuchId ? undefined : s?.topics.find((t) => t.topicId === topicId);
}

export function mayServer(user: User, action: ServerAction): boolean {
  const p = effective(user);
  if (p === 'all') return true;
  const g = p?.global;
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

export function mayStream(user: User, streamId: number, action: StreamAction): boolean {
  const p = effective(user);
  if (p === 'all') return true;
  if (!p) return false;
  const g = p.global;
  const s = streamEntry(p, streamId);
  if (action === 'manageStream') return g.manageStreams || (s?.manageStream ?? false);
  return g.manageStreams || g.readStreams || (s !== undefined && (s.manageStream || s.readStream));
}

export function mayTopic(user: User, streamId: number, topicId: number, action: TopicAction): boolean {
  const p = effective(user);
  if (p === 'all') return true;
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

/** Create a stream (none yet to hold grants): global manage_streams. */
export function mayCreateStream(user: User): boolean {
  const p = effective(user);
  return p === 'all' || (p?.global.manageStreams ?? false);
}

/** Create a topic in a stream (`noSuchId` when the stream is made with it): manage_streams, manage_topics, or the stream's manage rights. */
export function mayCreateTopic(user: User, streamId: number): boolean {
  const p = effective(user);
  if (p === 'all') return true;
  if (!p) return false;
  const s = streamEntry(p, streamId);
  return p.global.manageStreams || p.global.manageTopics || (s !== undefined && (s.manageStream || s.manageTopics));
}

/**
 * The stream list (Iggy GetStreams): global manage_streams or read_streams only, as the reference
 * permissioner's get_streams; per-stream grants do not open the list.
 */
export function mayListStreams(user: User): boolean {
  const p = effective(user);
  if (p === 'all') return true;
  const g = p?.global;
  return g !== undefined && (g.manageStreams || g.readStreams);
}

/**
 * The first right in `grants` that `granter` does not hold itself, as a readable path (null: it
 * holds them all). A user may give another only what it holds: a global right needs the same
 * right globally (or one that implies it), a stream's or a topic's right needs that right on that
 * stream or topic, however the granter holds it. Root holds everything.
 */
export function rightNotHeld(granter: User, grants: Grants | null): string | null {
  if (grants === null || effective(granter) === 'all') return null;
  const g = grants.global;
  const globalChecks: [keyof GlobalGrants, boolean][] = [
    ['manageServers', mayServer(granter, 'manageServers')],
    ['readServers', mayServer(granter, 'readServers')],
    ['manageUsers', mayServer(granter, 'manageUsers')],
    ['readUsers', mayServer(granter, 'readUsers')],
    ['manageStreams', mayStream(granter, noSuchId, 'manageStream')],
    ['readStreams', mayStream(granter, noSuchId, 'readStream')],
    ['manageTopics', mayTopic(granter, noSuchId, noSuchId, 'manageTopic')],
    ['readTopics', mayTopic(granter, noSuchId, noSuchId, 'readTopic')],
    ['pollMessages', mayTopic(granter, noSuchId, noSuchId, 'poll')],
    ['sendMessages', mayTopic(granter, noSuchId, noSuchId, 'send')],
  ];
  for (const [name, held] of globalChecks) if (g[name] && !held) return `global ${name}`;
  for (const s of grants.streams) {
    const id = s.streamId;
    const streamChecks: [keyof StreamGrants, boolean][] = [
      ['manageStream', mayStream(granter, id, 'manageStream')],
      ['readStream', mayStream(granter, id, 'readStream')],
      ['manageTopics', mayTopic(granter, id, noSuchId, 'manageTopic')],
      ['readTopics', mayTopic(granter, id, noSuchId, 'readTopic')],
      ['pollMessages', mayTopic(granter, id, noSuchId, 'poll')],
      ['sendMessages', mayTopic(granter, id, noSuchId, 'send')],
    ];
    for (const [name, held] of streamChecks) if (s[name] === true && !held) return `stream ${id} ${name}`;
    for (const t of s.topics) {
      const topicChecks: [keyof TopicGrants, boolean][] = [
        ['manageTopic', mayTopic(granter, id, t.topicId, 'manageTopic')],
        ['readTopic', mayTopic(granter, id, t.topicId, 'readTopic')],
        ['pollMessages', mayTopic(granter, id, t.topicId, 'poll')],
        ['sendMessages', mayTopic(granter, id, t.topicId, 'send')],
      ];
      for (const [name, held] of topicChecks) if (t[name] === true && !held) return `stream ${id} topic ${t.topicId} ${name}`;
    }
  }
  return null;
}
