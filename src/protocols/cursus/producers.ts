// Idempotent Cursus producers (spec §9; docs/protocols/cursus-wire-v2.md §10.2) over the core's
// producer state. A PUBLISH that names a producer and a seqNum > 0 on an idempotent topic, or that
// declares itself idempotent, is admitted here before it is appended:
//
//   - a lower epoch than the producer's newest: stale_producer_epoch producer= current= got=;
//   - a new (producer, epoch) on a partition starts at seqNum 1; anything else is a gap;
//   - the next seqNum after the last one appends; one at or below it is a duplicate, answered OK
//     without appending (with the original's offsets); a batch that straddles the last one, or
//     starts past the next one, is out_of_order_sequence producer= expected= got=.
//
// Why the core's machinery rather than a Cursus table: the core already keeps per (producer,
// partition) windows, answers a retry with the original offsets (waiting for a write still in
// flight), fences older epochs, and makes all of it durable (snapshots, and replay of the log
// tail at open, from the producer id, epoch and base sequence of each stored batch). What Cursus
// adds is mapped onto it: string producer ids and arbitrary epochs through the core's producer
// names (a persisted table, core/producer-names.ts); seqNum s is core sequence (s - 1) mod 2^31;
// and the two rules Kafka's sequences lack (a first batch starts at 1; any sequence at or below
// the last one is a duplicate, not only a batch of the window) are checked here against the
// core's window (ProducerStateManager.window). Epochs are per producer, as the core's: a higher
// epoch on one partition fences the older session on every partition.

import type { Broker } from '../../core/broker.js';
import type { Topic } from '../../core/catalog.js';
import { partitionKey, sequenceMax, type ProducerWindow } from '../../core/producer-state.js';
import { CursusFailure } from './handler.js';

/** The scope of Cursus producer names in the core (core/producer-names.ts). */
export const cursusProducerScope = 'cursus';

/** Core sequences are int32 and wrap: seqNum s is core sequence (s - 1) mod sequenceSpace. */
const sequenceSpace = sequenceMax + 1;
const halfSpace = sequenceSpace / 2;

/** What a PUBLISH claims: its producer, epoch and the seqNums of its records (first to last, consecutive, >= 1). */
export interface ProducerClaim {
  readonly producerId: string;
  readonly epoch: number;
  readonly seqStart: number;
  readonly seqEnd: number;
}

/** The core producer fields an admitted batch is appended with (AppendRequest). */
export interface CoreProducer {
  producerId: number;
  producerEpoch: number;
  baseSequence: number;
}

export type Admission =
  /** Append as this core producer (the core still answers an exact retry of a window batch with its offsets). */
  | { readonly kind: 'append'; readonly producer: CoreProducer }
  /** A retry of records already appended: answer OK with this offset, append nothing. */
  | { readonly kind: 'duplicate'; readonly lastOffset: number };

function mod(n: number): number {
  return ((n % sequenceSpace) + sequenceSpace) % sequenceSpace;
}

/** mod(n) as a distance in (-2^30, 2^30]. */
function signed(n: number): number {
  const m = mod(n);
  return m > halfSpace ? m - sequenceSpace : m;
}

export function staleEpoch(producerId: string, current: number, got: number): CursusFailure {
  return CursusFailure.of(
    'stale_producer_epoch',
    [
      ['producer', producerId],
      ['current', String(current)],
      ['got', String(got)],
    ],
    'the producer epoch is older than the newest one seen: a newer session fenced this one',
  );
}

export function outOfOrder(producerId: string, expected: number, got: number): CursusFailure {
  return CursusFailure.of(
    'out_of_order_sequence',
    [
      ['producer', producerId],
      ['expected', String(expected)],
      ['got', String(got)],
    ],
    'the seqNum does not follow the last one of this producer epoch on the partition',
  );
}

export class CursusProducers {
  constructor(private readonly broker: Broker) {}

  /** Admits a claim on a partition (the rules above); throws the Cursus failure that refuses it. */
  async admit(topic: Topic, partition: number, claim: ProducerClaim): Promise<Admission> {
    const named = await this.broker.producerNames.resolve(cursusProducerScope, claim.producerId, claim.epoch);
    if (named.kind === 'stale') throw staleEpoch(claim.producerId, named.currentEpoch, claim.epoch);
    const first = mod(claim.seqStart - 1);
    const producer: CoreProducer = { producerId: named.producerId, producerEpoch: named.producerEpoch, baseSequence: first };
    const window = this.broker.producers.window(partitionKey(topic.internalId, partition), named.producerId);
    // A new (producer, epoch) on the partition starts at 1 (spec §9: "starting above 1 is rejected as a gap").
    if (window === null || window.epoch < named.producerEpoch) {
      if (claim.seqStart !== 1) throw outOfOrder(claim.producerId, 1, claim.seqStart);
      return { kind: 'append', producer };
    }
    const last = window.batches[window.batches.length - 1]!.lastSeq;
    const claimLast = mod(first + (claim.seqEnd - claim.seqStart));
    const expected = claim.seqStart + signed(last + 1 - first);
    if (mod(first - last) === 1) return { kind: 'append', producer };
    // Starting at or below the last one: a retry, unless it runs past the last one.
    if (mod(last - first) < halfSpace) {
      if (mod(last - claimLast) >= halfSpace) throw outOfOrder(claim.producerId, expected, claim.seqStart);
      // An exact batch of the window: the core answers it with its offsets, once it is written.
      if (window.batches.some((b) => b.firstSeq === first && b.lastSeq === claimLast)) return { kind: 'append', producer };
      return { kind: 'duplicate', lastOffset: offsetOf(window, claimLast) };
    }
    throw outOfOrder(claim.producerId, expected, claim.seqStart);
  }
}

/**
 * The offset of the record with core sequence `seq`, if a batch of the window holds it (a CBV2
 * batch has one record per offset); else, the producer's newest offset on the partition: the
 * original of a duplicate older than the window is no longer known.
 */
function offsetOf(window: ProducerWindow, seq: number): number {
  for (const b of window.batches) {
    const into = mod(seq - b.firstSeq);
    if (into <= mod(b.lastSeq - b.firstSeq) && b.baseOffset + into <= b.lastOffset) return b.baseOffset + into;
  }
  return window.batches[window.batches.length - 1]!.lastOffset;
}
