// The connection limits of one listener, as bookkeeping without sockets: which connections hold a
// slot, which of them have not authenticated yet (oldest first), and how many come from each peer
// address. The TCP listener (./tcp-listener.ts) asks it whether to admit a connection it has just
// accepted and tells it when one authenticates, logs out or closes.
//
// Admission: a peer with `perPeerMax` connections already is refused (0: no such limit). A
// listener with `connectionsMax` connections, or `unauthenticatedMax` unauthenticated ones, makes
// room by evicting its oldest unauthenticated connection (the caller closes it); only a listener
// full of authenticated connections refuses. So connections that never authenticate cannot lock
// out a client that does: they are the ones that go, oldest first, and each lasts at most the
// listener's authentication deadline anyway.

/** One admitted connection's place, from admission to release. */
export class Slot<T> {
  authenticated = false;
  released = false;

  constructor(
    /** The peer's address (no port): the per-peer limit counts by it. */
    readonly peer: string,
    /** What the caller closes to evict it (the listener: the raw socket, replaced once adopted). */
    public holder: T,
  ) {}
}

export interface SlotLimits {
  connectionsMax: number;
  unauthenticatedMax: number;
  /** 0: no limit per peer. */
  perPeerMax: number;
}

export type Admission<T> =
  | { admitted: Slot<T>; evicted: Slot<T> | null }
  /** 'full': every slot is held by an authenticated connection; 'peer': the peer's limit. */
  | { refused: 'full' | 'peer' };

export class ConnectionSlots<T> {
  private readonly held = new Set<Slot<T>>();
  /** Slots not authenticated, in the order they became so (Set keeps insertion order): oldest first. */
  private readonly unauthenticatedSlots = new Set<Slot<T>>();
  private readonly byPeer = new Map<string, number>();

  constructor(readonly limits: SlotLimits) {}

  /** Slots held. */
  get size(): number {
    return this.held.size;
  }

  get unauthenticatedCount(): number {
    return this.unauthenticatedSlots.size;
  }

  peerCount(peer: string): number {
    return this.byPeer.get(peer) ?? 0;
  }

  /**
   * Admits a new connection from `peer`, unauthenticated, or refuses it. An eviction made to admit
   * it is released already: the caller only closes `evicted.holder`.
   */
  admit(peer: string, holder: T): Admission<T> {
    const { connectionsMax, unauthenticatedMax, perPeerMax } = this.limits;
    if (perPeerMax > 0 && this.peerCount(peer) >= perPeerMax) return { refused: 'peer' };
    let evicted: Slot<T> | null = null;
    if (this.held.size >= connectionsMax || this.unauthenticatedSlots.size >= unauthenticatedMax) {
      evicted = this.oldestUnauthenticated();
      if (evicted === null) return { refused: 'full' };
      this.release(evicted);
    }
    const slot = new Slot(peer, holder);
    this.held.add(slot);
    this.unauthenticatedSlots.add(slot);
    this.byPeer.set(peer, this.peerCount(peer) + 1);
    return { admitted: slot, evicted };
  }

  /** The connection authenticated: it is no longer evicted to make room. */
  authenticated(slot: Slot<T>): void {
    if (slot.released || slot.authenticated) return;
    slot.authenticated = true;
    this.unauthenticatedSlots.delete(slot);
  }

  /** The connection logged out: unauthenticated again, and the newest such. */
  unauthenticated(slot: Slot<T>): void {
    if (slot.released || !slot.authenticated) return;
    slot.authenticated = false;
    this.unauthenticatedSlots.add(slot);
  }

  /** The connection is gone (closed, or evicted). Idempotent. */
  release(slot: Slot<T>): void {
    if (slot.released) return;
    slot.released = true;
    this.held.delete(slot);
    this.unauthenticatedSlots.delete(slot);
    const left = this.peerCount(slot.peer) - 1;
    if (left > 0) this.byPeer.set(slot.peer, left);
    else this.byPeer.delete(slot.peer);
  }

  private oldestUnauthenticated(): Slot<T> | null {
    for (const slot of this.unauthenticatedSlots) return slot;
    return null;
  }
}

/** The address a per-peer limit counts by: the remote IP, an IPv4-mapped IPv6 one as IPv4. */
export function peerAddressOf(remoteAddress: string | undefined): string {
  if (remoteAddress === undefined || remoteAddress === '') return 'unknown';
  return remoteAddress.startsWith('::ffff:') && remoteAddress.includes('.') ? remoteAddress.slice('::ffff:'.length) : remoteAddress;
}
