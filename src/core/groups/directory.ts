// Who is in a consumer group now, whichever front-end runs it: each coordinator (Kafka classic
// groups, Iggy and Cursus server-side groups) registers a source under its protocol scope while
// its listener is open, and admin tools (the HTTP admin API) ask it. Membership is live state that
// only the coordinator holds; committed offsets and stored group state are in the OffsetStore and
// GroupStore. A scope with no source (its listener is off) has no members anywhere.

export interface LiveGroupMember {
  memberId: string;
  clientId: string | null;
  clientHost: string | null;
  /** The partitions it owns, when the coordinator assigns them (server-side groups); null otherwise. */
  partitions: number[] | null;
}

export interface LiveGroupSource {
  /** The group's members now; null when the coordinator does not know the group. */
  membersOf(groupId: string): LiveGroupMember[] | null;
  /**
   * Drops the group from the coordinator and from the group store (not its committed offsets);
   * throws group_not_empty while it has members. Absent: the protocol's groups are not deleted
   * this way.
   */
  deleteGroup?(groupId: string): Promise<void>;
}

export class LiveGroupDirectory {
  private readonly sources = new Map<string, LiveGroupSource>();

  /** Registers the scope's source; returns the function that removes it (the listener stops). */
  register(scope: string, source: LiveGroupSource): () => void {
    this.sources.set(scope, source);
    return () => {
      if (this.sources.get(scope) === source) this.sources.delete(scope);
    };
  }

  /** The scope's source, or null when no coordinator of the scope runs (its listener is off). */
  source(scope: string): LiveGroupSource | null {
    return this.sources.get(scope) ?? null;
  }

  /** The group's members now: [] when no coordinator of the scope runs or knows it. */
  membersOf(scope: string, groupId: string): LiveGroupMember[] {
    return this.sources.get(scope)?.membersOf(groupId) ?? [];
  }
}
