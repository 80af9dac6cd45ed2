// Per-topic options a protocol was given that the core topic configuration does not hold (Iggy's
// CreateTopic options: which ones were explicit, message_expiry and max_topic_size as Iggy stated
// them), one opaque JSON-able value per (protocol, topic). The protocol owns the shape and decides
// what the value means next to the core config; the core only keeps it, in the metadata store's
// topic_options table. A protocol drops a deleted topic's options itself (it watches the broker).

import type { Clock } from '../base/clock.js';
import { QuartetError } from '../base/errors.js';
import type { MetadataStore } from './metadata-store.js';

/** A serialized value larger than this is a protocol bug, not options to keep. */
export const topicOptionsBytesMax = 64 * 1024;
/** Protocol names are short tags ('iggy'). */
export const topicOptionsProtocolBytesMax = 64;

export interface StoredProtocolTopicOptions {
  topicInternalId: number;
  options: unknown;
  updatedAt: number;
}

export class TopicOptionsStore {
  constructor(
    private readonly store: MetadataStore,
    private readonly clock: Clock,
  ) {}

  /** Replaces the protocol's options of the topic. `options` must survive JSON.stringify/parse unchanged. */
  async save(protocol: string, topicInternalId: number, options: unknown): Promise<void> {
    assertProtocol(protocol);
    const bytes = Buffer.byteLength(JSON.stringify(options ?? null));
    if (bytes > topicOptionsBytesMax) throw new QuartetError('resource_exhausted', `topic options are ${bytes} bytes; at most ${topicOptionsBytesMax}`);
    await this.store.putTopicOptions({ protocol, topicInternalId, options, updatedAt: this.clock.now() });
  }

  /** Every topic's options of the protocol, by topic internal id ascending. */
  async list(protocol: string): Promise<StoredProtocolTopicOptions[]> {
    return (await this.store.listTopicOptions(protocol)).map((r) => ({ topicInternalId: r.topicInternalId, options: r.options, updatedAt: r.updatedAt }));
  }

  /** True if the topic had options of the protocol. */
  delete(protocol: string, topicInternalId: number): Promise<boolean> {
    return this.store.deleteTopicOptions(protocol, topicInternalId);
  }
}

function assertProtocol(protocol: string): void {
  if (protocol.length === 0 || Buffer.byteLength(protocol) > topicOptionsProtocolBytesMax) throw new QuartetError('invalid_request', `invalid protocol '${protocol}'`);
}
