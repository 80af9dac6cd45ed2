// The options Iggy stored for each topic (the core topic options store, protocol `iggy`: the
// metadata store's topic_options table), one table per broker. It is looked after whether or not the Iggy listener
// is open (the server watches every broker it opens, src/server/listeners.ts
// builtinBrokerWatchers): a max_topic_size is spread again over a partition count changed by any
// protocol, in the same catalog step, and the options of a deleted topic go with it. The Iggy view
// is computed from what is stored here and the core config when it is read (topic-options.ts).

import type { Broker, TopicChangeListener } from '../../core/broker.js';
import type { Topic } from '../../core/catalog.js';
import { ProtocolTopicTable, protocolTopicTableOf } from '../../core/protocol-topic-table.js';
import {
  deserializeTopicOptions,
  maxTopicSizeSpread,
  optionsFromCoreConfig,
  optionsOverCoreConfig,
  serializeTopicOptions,
  storedAfterPatch,
  topicOptionsProtocol,
  type PatchedTopicOptions,
  type StoredTopicOptions,
} from './topic-options.js';

export class IggyTopicOptionsTable extends ProtocolTopicTable<StoredTopicOptions> {
  constructor(broker: Broker) {
    super(broker, { protocol: topicOptionsProtocol, deserialize: deserializeTopicOptions, serialize: serializeTopicOptions });
  }

  /** A max_topic_size is spread again over a partition count changed by any protocol, in the same catalog step. */
  protected override topicChanges(): Omit<TopicChangeListener, 'topicDeleted'> {
    return {
      partitionCountConfig: (topic, newCount) => {
        const stored = this.stored.get(topic.internalId);
        return stored === undefined ? null : maxTopicSizeSpread(stored, topic, this.broker.topicDefaults, newCount);
      },
    };
  }

  /**
   * The Iggy view of the topic's options: what Iggy stored wherever the core config still holds
   * what it maps to, and what the core config holds where another protocol changed it (or the
   * topic was made by another protocol).
   */
  viewOf(topic: Topic): StoredTopicOptions {
    const stored = this.stored.get(topic.internalId);
    return stored === undefined ? optionsFromCoreConfig(topic, this.broker.topicDefaults) : optionsOverCoreConfig(stored, topic, this.broker.topicDefaults);
  }

  /** Stores an update's patch over what Iggy stored for the topic (storedAfterPatch). */
  async savePatch(topic: Topic, patch: PatchedTopicOptions): Promise<void> {
    const stored = this.stored.get(topic.internalId) ?? optionsFromCoreConfig(topic, this.broker.topicDefaults);
    await this.save(topic, storedAfterPatch(stored, patch));
  }
}

/** The broker's table (made on first use; `watch()` it before reading). */
export function iggyTopicOptionsOf(broker: Broker): IggyTopicOptionsTable {
  return protocolTopicTableOf(broker, topicOptionsProtocol, () => new IggyTopicOptionsTable(broker));
}

/** The server's broker watcher: spreads and drops Iggy topic options whatever listeners are open. */
export function watchIggyTopicOptions(broker: Broker): Promise<void> {
  return iggyTopicOptionsOf(broker).watch();
}
