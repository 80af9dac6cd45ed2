// Persistent consumer-group state. Each front-end brings its own coordinator (Kafka classic
// groups, Iggy/Cursus server-side assignment, Felix queue groups) and its own state shape; the
// core only stores it as an opaque JSON-able value per (protocol scope, group id), so that a
// coordinator can resume its groups (generations, assignments, members to expire) after restart.

import type { Clock } from '../../base/clock.js';
import { QuartetError } from '../../base/errors.js';
import type { MetadataStore } from '../metadata-store.js';
import { groupIdBytesMax, scopeBytesMax } from '../offsets.js';

/** A serialized state larger than this is a coordinator bug, not data to keep. */
export const groupStateBytesMax = 4 * 1024 * 1024;

export interface StoredGroup {
  scope: string;
  groupId: string;
  state: unknown;
  updatedAt: number;
}

export class GroupStore {
  constructor(
    private readonly store: MetadataStore,
    private readonly clock: Clock,
  ) {}

  /** Replaces the group's state. `state` must survive JSON.stringify/parse unchanged. */
  async save(scope: string, groupId: string, state: unknown): Promise<void> {
    assertKey(scope, groupId);
    const bytes = Buffer.byteLength(JSON.stringify(state ?? null));
    if (bytes > groupStateBytesMax) throw new QuartetError('resource_exhausted', `group state is ${bytes} bytes; at most ${groupStateBytesMax}`);
    await this.store.putGroup({ scope, groupId, state, updatedAt: this.clock.now() });
  }

  async load(scope: string, groupId: string): Promise<StoredGroup | null> {
    return this.store.getGroup(scope, groupId);
  }

  list(scope: string): Promise<StoredGroup[]> {
    return this.store.listGroups(scope);
  }

  /** True if the group existed. Its committed offsets are separate (OffsetStore.deleteGroup). */
  delete(scope: string, groupId: string): Promise<boolean> {
    return this.store.deleteGroup(scope, groupId);
  }

  /**
   * The ids the next group of each topic gets, for a protocol that numbers its groups per topic
   * and never gives an id twice (Iggy): topic internal id → next id.
   */
  async nextGroupIds(scope: string): Promise<Map<number, number>> {
    return new Map((await this.store.listGroupIdCounters(scope)).map((r) => [r.topicInternalId, r.nextId]));
  }

  async saveNextGroupId(scope: string, topicInternalId: number, nextId: number): Promise<void> {
    assertKey(scope, '');
    if (!Number.isSafeInteger(nextId) || nextId < 0) throw new QuartetError('invalid_request', `invalid next group id ${nextId}`);
    await this.store.putGroupIdCounter({ scope, topicInternalId, nextId });
  }

  /** The topic is gone: its counter goes with it. True if there was one. */
  deleteNextGroupId(scope: string, topicInternalId: number): Promise<boolean> {
    return this.store.deleteGroupIdCounter(scope, topicInternalId);
  }
}

function assertKey(scope: string, groupId: string): void {
  if (scope.length === 0 || Buffer.byteLength(scope) > scopeBytesMax) throw new QuartetError('invalid_request', `invalid group scope '${scope}'`);
  if (Buffer.byteLength(groupId) > groupIdBytesMax) throw new QuartetError('invalid_request', `group id longer than ${groupIdBytesMax} bytes`);
}
