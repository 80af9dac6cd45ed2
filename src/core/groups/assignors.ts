// Server-side assignors: where each partition of a topic goes among a group's members
// (server-side.ts applies the answer, with a cooperative hand-off of partitions in flight).

/**
 * Decides one member per partition. `members` come in join order (earliest first; a tie goes to
 * the earlier); `current[p]` is where partition p is headed now (the target of a pending hand-off,
 * else its owner; undefined for none). Called only with at least one member.
 */
export type ServerSideAssignor = <M>(members: readonly M[], current: readonly (M | undefined)[], partitions: number) => M[];

/**
 * Balanced and sticky, as the Iggy reference server's `rebalance_members`: each member gets its
 * fair share (⌊partitions / members⌋, one more for the most loaded when they do not divide),
 * keeping partitions where they are as far as that allows: a member over its share gives up its
 * highest partitions, and the partitions without an owner go to the least loaded members.
 */
export const stickyBalancedAssignor: ServerSideAssignor = <M>(members: readonly M[], current: readonly (M | undefined)[], partitions: number): M[] => {
  const order = new Map<M, number>(members.map((m, i) => [m, i]));
  const desired = current.slice(0, partitions);
  const load = new Map<M, number>(members.map((m) => [m, 0]));
  for (const m of desired) if (m !== undefined) load.set(m, load.get(m)! + 1);
  // Fair shares; the remainder goes to the most loaded (then the earliest joined), so fewer move.
  const fair = Math.floor(partitions / members.length);
  const capacity = new Map<M, number>(members.map((m) => [m, fair]));
  const byLoad = [...members].sort((a, b) => load.get(b)! - load.get(a)! || order.get(a)! - order.get(b)!);
  for (const m of byLoad.slice(0, partitions % members.length)) capacity.set(m, fair + 1);
  // A member over its share gives up its highest partitions; the free ones go to the least loaded.
  for (let p = partitions - 1; p >= 0; p--) {
    const m = desired[p];
    if (m !== undefined && load.get(m)! > capacity.get(m)!) {
      load.set(m, load.get(m)! - 1);
      desired[p] = undefined;
    }
  }
  for (let p = 0; p < partitions; p++) {
    if (desired[p] !== undefined) continue;
    let best: M | undefined;
    for (const m of members) if (load.get(m)! < capacity.get(m)! && (best === undefined || load.get(m)! < load.get(best)!)) best = m;
    desired[p] = best!;
    load.set(best!, load.get(best!)! + 1);
  }
  return desired as M[];
};
