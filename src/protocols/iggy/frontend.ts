// The Iggy front-end's shared state, one per listener: the broker, settings, the client sessions
// (connection registry and client-id registrations with their session epochs), the metadata
// commit counter, the exactly-once reply cache, the consumer groups, the Iggy topic-option table
// and the stale-member sweep. Connections (connection.ts) hand it to handlers as
// `context.frontend`.

import assert from 'node:assert/strict';
import { ProcessUsageMeter } from './process-usage.js';
import type { Broker } from '../../core/broker.js';
import type { Topic } from '../../core/catalog.js';
import { systemClock, type Clock } from '../../base/clock.js';
import type { Logger } from '../../base/logger.js';
import { systemScheduler, type Scheduler, type TimerHandle } from '../../core/scheduler.js';
import type { User } from '../../core/users.js';
import { BatchFormat } from '../../base/batch.js';
import { quartetVersion } from '../../base/version.js';
import { EvictionReason, frameBytesMaxDefault } from './codec/index.js';
import { deleteGroupOffsets, sweepOffsets } from './consumers.js';
import { QuartetError } from '../../base/errors.js';
import { IggyGroups, iggyGroupScope } from './groups.js';
import { watchIggyGrants } from './grants.js';
import { iggyHandlers } from './handlers/index.js';
import type { IggyHandlerTable } from './handlers/types.js';
import { iggyTopicOptionsOf, type IggyTopicOptionsTable } from './topic-options-table.js';


export interface IggySettings {
  /** Largest frame accepted, header included (bytes). */
  frameBytesMax: number;
  /** Frames read and not yet answered per connection; beyond it the socket stops being read. */
  inFlightRequestsMax: number;
  /** [heartbeat] interval; a group member silent for 1.2 × this is evicted (StaleClient). */
  heartbeatIntervalMs: number;
  /** Exactly-once replies remembered per client id. */
  replyCacheEntriesMax: number;
  /** Client ids whose replies are remembered. */
  replyCacheClientsMax: number;
  /** Largest poll reply payload (bytes). */
  pollBytesMax: number;
  /** Messages per poll at most. */
  pollMessagesMax: number;
  /**
   * After a client's FIN, its remaining replies are still written; a client that no longer reads
   * them (replies waiting for it, none of them moving for this long) is cut off.
   */
  halfClosedStallMs: number;
  /**
   * A consumer-group partition pending revocation (its owner was served messages the group has
   * not committed) moves to its new member at the latest this long after the rebalance.
   */
  rebalancingTimeoutMs: number;
}

export const defaultIggySettings: Readonly<IggySettings> = Object.freeze({
  frameBytesMax: frameBytesMaxDefault,
  inFlightRequestsMax: 64,
  heartbeatIntervalMs: 30_000,
  replyCacheEntriesMax: 64,
  replyCacheClientsMax: 10_000,
  pollBytesMax: 128 * 1024 * 1024,
  pollMessagesMax: 100_000,
  halfClosedStallMs: 10_000,
  rebalancingTimeoutMs: 10_000,
});

/** One client connection as handlers and the registry see it. */
export interface IggySession {
  /** The listener's connection id: Iggy's client_id in GetClients/GetMe. */
  readonly connectionId: number;
  readonly address: string;
  /** The local address the peer connected to (what it dialled), when known. */
  readonly localHost?: string;
  /** The header client id of the registration (0 before login). */
  clientId: bigint;
  /** The session epoch (0 before login). */
  session: bigint;
  userId: number | null;
  /** Clock ms of the last request (heartbeat). */
  lastActivityMs: number;
  /** Sends an Eviction with `reason` and closes the connection. */
  evict(reason: EvictionReason): void;
}

export interface IggyFrontendOptions {
  broker: Broker;
  logger: Logger;
  settings?: Partial<IggySettings>;
  clock?: Clock;
  scheduler?: Scheduler;
  handlers?: IggyHandlerTable;
  /** Advertised TCP address for ClusterMetadata; the bound one by default. */
  advertisedAddr?: { host: string; port: number } | null;
}

interface CachedReplies {
  /** The user the client id belongs to: another user may not register it. */
  userId: number;
  /** Highest metadata request number applied. */
  highest: bigint;
  /** Reply body, the request's operation and its request_checksum (0 = not stamped) per request number. */
  replies: Map<bigint, { body: Buffer[]; operation: number; checksum: bigint }>;
}

export class IggyFrontend {
  readonly broker: Broker;
  readonly logger: Logger;
  readonly clock: Clock;
  readonly scheduler: Scheduler;
  readonly settings: IggySettings;
  readonly handlers: IggyHandlerTable;
  readonly groups: IggyGroups;
  readonly serverVersion = quartetVersion;
  readonly startedAtMs: number;
  /** CPU and disk figures for GetStats (each call reports the CPU used since the previous one). */
  readonly processUsage = new ProcessUsageMeter();
  /** Live connections by connection id. */
  readonly sessions = new Map<number, IggySession>();
  /** Current session epoch per registered client id. */
  private readonly registrations = new Map<bigint, { session: bigint; connectionId: number; userId: number }>();
  private readonly replyCache = new Map<bigint, CachedReplies>();
  /** What Iggy stored of each topic's options, and the Iggy view of them (one table per broker). */
  readonly topicOptions: IggyTopicOptionsTable;
  private readonly balanced = new Map<number, number>();
  private metadataCommit = 0n;
  private sweepTimer: TimerHandle | null = null;
  private closed = false;
  private stopListening: (() => void) | null = null;
  private unregisterLiveGroups: (() => void) | null = null;
  private bound: { host: string; port: number } | null = null;
  private readonly configuredAdvertised: { host: string; port: number } | null;

  constructor(options: IggyFrontendOptions) {
    // Iggy batches are read by other protocols and compacted: the broker must know their format.
    assert.ok(options.broker.formats.has(BatchFormat.iggy), 'the broker was built without the Iggy batch format (BrokerOptions.formats: builtinFormats() of src/server/listeners.ts)');
    this.broker = options.broker;
    this.logger = options.logger;
    this.clock = options.clock ?? systemClock;
    this.scheduler = options.scheduler ?? systemScheduler;
    this.settings = { ...defaultIggySettings, ...options.settings };
    this.handlers = options.handlers ?? iggyHandlers;
    this.groups = new IggyGroups(this.broker, this.logger.child({ component: 'iggy-groups' }), {
      now: () => this.clock.now(),
      rebalancingTimeoutMs: this.settings.rebalancingTimeoutMs,
    });
    this.startedAtMs = this.clock.now();
    this.configuredAdvertised = options.advertisedAddr ?? null;
    this.topicOptions = iggyTopicOptionsOf(this.broker);
  }

  /** Loads the Iggy tables (topic options, groups) and starts the stale-member sweep. */
  async start(): Promise<void> {
    // The topic options and grants are looked after per broker (the server watches its broker
    // already, before any listener starts; a front-end started on its own broker, in tests, here).
    await this.topicOptions.watch();
    await watchIggyGrants(this.broker);
    await this.groups.load();
    await sweepOffsets(this);
    // Deletions by any protocol: drop the Iggy groups of the topic. Partition count changes by any
    // protocol (Kafka CreatePartitions too): the groups rebalance.
    this.stopListening = this.broker.onTopicChanges({
      topicDeleted: (topic) => this.forgetTopic(topic),
      partitionsChanged: (topic) => this.groups.partitionsChanged(topic),
    });
    // Admin tools (the HTTP admin API) ask who is in a group now.
    this.unregisterLiveGroups = this.broker.liveGroups.register(iggyGroupScope, {
      membersOf: (key) => this.groups.liveMembers(key),
      deleteGroup: (key) => this.deleteGroupByKey(key),
    });
    this.scheduleSweep();
  }

  close(): void {
    this.closed = true;
    this.stopListening?.();
    this.stopListening = null;
    this.unregisterLiveGroups?.();
    this.unregisterLiveGroups = null;
    this.sweepTimer?.cancel();
    this.sweepTimer = null;
  }

  /** Deletes the group stored under `key` (`<topic internal id>/<group id>`) with its offsets; refused while it has members. */
  private async deleteGroupByKey(key: string): Promise<void> {
    const [topicInternalId, groupId] = key.split('/').map(Number);
    const topic = this.broker.catalog.topicByInternalId(topicInternalId!);
    const group = topic === null ? null : this.groups.find(topic, { kind: 'numeric', value: groupId! });
    if (topic === null || group === null) return;
    if (group.members.size > 0) throw new QuartetError('group_not_empty', `group '${group.name}' has active members`);
    await deleteGroupOffsets(this, topic, group.id);
    await this.groups.delete(topic, group);
    await deleteGroupOffsets(this, topic, group.id);
  }

  setBoundAddress(address: { host: string; port: number }): void {
    this.bound = address;
  }

  /**
   * The address GetClusterMetadata reports: the configured advertised address, else the bound
   * one; for a wildcard bind, the address this peer dialled (so a client on another machine is
   * not sent to its own loopback), else 127.0.0.1.
   */
  advertised(session?: IggySession): { host: string; port: number } {
    if (this.configuredAdvertised) return this.configuredAdvertised;
    const b = this.bound ?? { host: '127.0.0.1', port: 8090 };
    const wildcard = b.host === '0.0.0.0' || b.host === '::' || b.host === '';
    if (!wildcard) return b;
    const dialled = session?.localHost?.replace(/^::ffff:/, '');
    return { host: dialled !== undefined && dialled !== '' ? dialled : '127.0.0.1', port: b.port };
  }

  // --- metadata commit and sessions ------------------------------------------------------------

  /** The current metadata commit (ReplyHeader.commit). */
  get commit(): bigint {
    return this.metadataCommit;
  }

  /** Advances the commit (a metadata operation or a Register was applied); returns the new value. */
  nextCommit(): bigint {
    this.metadataCommit++;
    return this.metadataCommit;
  }

  addConnection(session: IggySession): void {
    this.sessions.set(session.connectionId, session);
  }

  removeConnection(session: IggySession): void {
    this.sessions.delete(session.connectionId);
    this.groups.removeConnection(session.connectionId);
    const reg = this.registrations.get(session.clientId);
    if (reg && reg.connectionId === session.connectionId) this.registrations.delete(session.clientId);
  }

  /**
   * Whether `clientId` belongs to another user than `userId` (a live registration or remembered
   * replies of another user): such a login is refused, as the reference server refuses a client id
   * owned by another user.
   */
  ownedByAnotherUser(clientId: bigint, userId: number): boolean {
    const owner = this.registrations.get(clientId)?.userId ?? this.replyCache.get(clientId)?.userId;
    return owner !== undefined && owner !== userId;
  }

  /**
   * A new registration of `clientId`: its epoch fences any older one. The client's remembered
   * replies and request watermark stay (a client that reconnects under its id resumes its request
   * numbers, and a retry of a request applied before must still get its reply, not apply again).
   */
  register(session: IggySession, user: User): bigint {
    const epoch = this.nextCommit();
    const previous = this.registrations.get(session.clientId);
    if (previous && previous.connectionId !== session.connectionId) this.groups.removeConnection(previous.connectionId);
    this.registrations.set(session.clientId, { session: epoch, connectionId: session.connectionId, userId: user.id });
    session.session = epoch;
    session.userId = user.id;
    return epoch;
  }

  /** The current epoch of a client id (0n when unregistered). */
  currentSession(clientId: bigint): bigint {
    return this.registrations.get(clientId)?.session ?? 0n;
  }

  /**
   * Ends the connection's login; its registration goes. With `forgetClient` (a Logout request),
   * the client id's entry in the client table (owner, remembered replies, request watermark) goes
   * too, as the reference server removes it at a Logout's commit: the SDKs log out before logging
   * in again under the same client id, possibly as another user, with their request numbers started
   * over. A new login on the same connection keeps it (the client resumes its numbers).
   */
  logout(session: IggySession, forgetClient = false): void {
    this.groups.removeConnection(session.connectionId);
    const reg = this.registrations.get(session.clientId);
    if (reg && reg.connectionId === session.connectionId) {
      this.registrations.delete(session.clientId);
      if (forgetClient) this.replyCache.delete(session.clientId);
    }
    session.session = 0n;
    session.userId = null;
  }

  // --- exactly-once metadata replies -------------------------------------------------------------

  /**
   * 'cached' with the reply body, 'mismatch' (cached, but for another operation, or the retry's
   * request_checksum differs from the original's, both stamped: the request number was reused for
   * other arguments), 'stale' (applied earlier, no longer cached), or 'new'.
   */
  lookupReply(clientId: bigint, request: bigint, operation: number, checksum: bigint): { kind: 'cached'; body: Buffer[] } | { kind: 'mismatch' } | { kind: 'stale' } | { kind: 'new' } {
    const entry = this.replyCache.get(clientId);
    if (!entry) return { kind: 'new' };
    const cached = entry.replies.get(request);
    if (cached) {
      const reused = cached.operation !== operation || (checksum !== 0n && cached.checksum !== 0n && checksum !== cached.checksum);
      return reused ? { kind: 'mismatch' } : { kind: 'cached', body: cached.body };
    }
    return request <= entry.highest ? { kind: 'stale' } : { kind: 'new' };
  }

  rememberReply(clientId: bigint, userId: number, request: bigint, operation: number, checksum: bigint, body: Buffer[]): void {
    let entry = this.replyCache.get(clientId);
    if (!entry) {
      if (this.replyCache.size >= this.settings.replyCacheClientsMax) {
        const oldest = this.replyCache.keys().next().value;
        if (oldest !== undefined) this.replyCache.delete(oldest);
      }
      entry = { userId, highest: 0n, replies: new Map() };
      this.replyCache.set(clientId, entry);
    }
    entry.replies.set(request, { body, operation, checksum });
    if (request > entry.highest) entry.highest = request;
    while (entry.replies.size > this.settings.replyCacheEntriesMax) {
      const oldest = entry.replies.keys().next().value;
      if (oldest === undefined) break;
      entry.replies.delete(oldest);
    }
  }

  // --- Iggy topic options ----------------------------------------------------------------------

  private async forgetTopic(topic: Topic): Promise<void> {
    this.balanced.delete(topic.internalId);
    await this.groups.topicDeleted(topic.internalId);
  }

  /** Balanced partitioning: round-robin per topic. */
  nextBalancedPartition(topic: Topic): number {
    const n = this.balanced.get(topic.internalId) ?? 0;
    this.balanced.set(topic.internalId, (n + 1) % 0x7fff_ffff);
    return n % topic.partitions;
  }

  // --- liveness ------------------------------------------------------------------------------------

  /**
   * A member silent for 1.2 × heartbeat interval is evicted with StaleClient (13); consumer-group
   * hand-offs past their deadline complete.
   */
  sweepStaleMembers(): void {
    this.groups.expireRevocations();
    const limit = Math.floor(this.settings.heartbeatIntervalMs * 1.2);
    const now = this.clock.now();
    for (const s of [...this.sessions.values()]) {
      if (now - s.lastActivityMs <= limit) continue;
      if (!this.groups.isMemberAnywhere(s.connectionId)) continue;
      this.logger.info('evicting a stale consumer-group member', { connection: s.connectionId, silentMs: now - s.lastActivityMs });
      this.groups.removeConnection(s.connectionId);
      s.evict(EvictionReason.staleClient);
    }
  }

  private scheduleSweep(): void {
    if (this.closed) return;
    // Often enough that a hand-off completes within a tenth of rebalancingTimeoutMs after its deadline.
    const every = Math.max(100, Math.floor(Math.min(this.settings.heartbeatIntervalMs / 5, this.settings.rebalancingTimeoutMs / 10)));
    this.sweepTimer = this.scheduler.schedule(every, () => {
      try {
        this.sweepStaleMembers();
      } catch (error) {
        this.logger.error('stale-member sweep failed', { error });
      }
      this.scheduleSweep();
    });
  }
}
