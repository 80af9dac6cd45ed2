// Consumer-group changes in the log, the same for every protocol: a group created or deleted,
// members joining and leaving, new generations (rebalances), committed offsets reset or deleted.
// The group engines (client-side.ts for Kafka, server-side.ts for Iggy and Cursus) and the
// offsets store call it, so a front-end never logs these itself. Creations, deletions and offset
// changes are rare (a client's or an operator's action) and always logged at info; member churn
// and rebalances can come in bursts (a fleet of consumers restarting), so each of those kinds
// writes at most one info line per second (LogRateLimiter: the next line says how many it
// dropped) and the dropped ones go to debug.

import type { Clock } from '../../base/clock.js';
import { LogRateLimiter, type LogFields, type Logger } from '../../base/logger.js';

/** How a group is named in the log: its protocol and name, and what else identifies it (its topic). */
export type GroupLabel = Readonly<{ protocol: string; group: string } & Record<string, string | number>>;

/** A protocol's reading of the keys it stores offsets under: the label to log, or null (the raw key). */
export type OffsetKeyNamer = (key: string) => GroupLabel | null;

export class GroupEvents {
  private readonly churn: LogRateLimiter;
  private readonly offsetKeyNamers = new Map<string, OffsetKeyNamer>();

  constructor(
    private readonly logger: Logger,
    clock: Clock,
  ) {
    this.churn = new LogRateLimiter(clock);
  }

  /**
   * Registers how the offset keys of `scope` read in the log (Iggy stores one per consumer or
   * group, topic and partition); returns the function that removes it.
   */
  nameOffsetKeys(scope: string, namer: OffsetKeyNamer): () => void {
    this.offsetKeyNamers.set(scope, namer);
    return () => {
      if (this.offsetKeyNamers.get(scope) === namer) this.offsetKeyNamers.delete(scope);
    };
  }

  /** The label of the offsets the store keeps under (scope, key): the protocol's reading, else the key itself. */
  offsetsLabel(scope: string, key: string): GroupLabel {
    return this.offsetKeyNamers.get(scope)?.(key) ?? { protocol: scope, group: key };
  }

  created(group: GroupLabel): void {
    this.logger.info('created consumer group', group);
  }

  deleted(group: GroupLabel): void {
    this.logger.info('deleted consumer group', group);
  }

  /** `fields`: the member id, and its client id and peer address where the protocol knows them. */
  memberJoined(group: GroupLabel, fields: LogFields): void {
    this.burst('group-member-joined', 'consumer group member joined', group, fields);
  }

  /** `reason`: left (asked to), session expired, disconnected, not rejoined. */
  memberLeft(group: GroupLabel, fields: LogFields & { reason: string }): void {
    this.burst('group-member-left', 'consumer group member left', group, fields);
  }

  /** A new generation: the group's partitions were assigned again (or its members agreed on it). */
  rebalanced(group: GroupLabel, generation: number | bigint, members: number): void {
    this.burst('group-rebalanced', 'consumer group rebalanced', group, { generation: Number(generation), members });
  }

  offsetsReset(group: GroupLabel, fields: LogFields): void {
    this.logger.info('reset consumer group offsets', { ...group, ...fields });
  }

  offsetsDeleted(group: GroupLabel, fields: LogFields): void {
    this.logger.info('deleted consumer group offsets', { ...group, ...fields });
  }

  private burst(kind: string, msg: string, group: GroupLabel, fields: LogFields): void {
    const all = { ...group, ...fields };
    if (!this.churn.log(this.logger, 'info', kind, msg, all)) this.logger.debug(msg, all);
  }
}
