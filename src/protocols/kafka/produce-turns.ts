// Produce appends reach a partition's log in request order because the handler starts each one
// synchronously. A batch prepared on a worker thread (handlers/produce.ts) starts later, so the
// appends to its partition that come after it must wait for it: one AppendTurns per broker,
// keyed by partition, chains them behind it. A partition with nothing deferred appends at once.

import { AppendTurns } from '../../base/append-turns.js';
import type { Broker } from '../../core/broker.js';

export { AppendTurns };

const turnsByBroker = new WeakMap<Broker, AppendTurns>();

/** The broker's AppendTurns (one per broker, shared by every Kafka connection). */
export function produceTurns(broker: Broker): AppendTurns {
  let turns = turnsByBroker.get(broker);
  if (turns === undefined) {
    turns = new AppendTurns();
    turnsByBroker.set(broker, turns);
  }
  return turns;
}
