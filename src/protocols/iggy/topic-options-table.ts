// The options Iggy stored for each topic (the core topic options store, protocol `iggy`: the
// metadata store's topic_options table), one table per broker. It is looked after whether or not the Iggy listener
// is open (the server watches every broker it opens, src/server/listeners.ts
// builtinBrokerWatchers): a max_topic_size is spread again over a partition count changed by any
// protocol, in the same catalog step, and the options of a deleted topic go with it. The Iggy view
// is computed from what is stored here and the core config when it is read (topic-options.ts).

import type { Broker } from '../../core/broker.js';
import type { Topic } from '../../core/catalog.js';
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

export class IggyTopicOptionsTable {
  private readonly stored = new Map<number, StoredTopicOptions>();
  private listening = false;
  private loading: Promise<void> | null = null;

  constructor(private readonly broker: Broker) {}

  /**
   * Listens to the broker's topic changes (once) and loads what is stored, dropping the options
   * of topics that no longer exist; later calls wait for the same load, or try again after a
   * failed one.
   */
  watch(): Promise<void> {
    if (!this.listening) {
      // Listening first: a topic deleted during the load is not kept.
      this.listening = true;
      this.broker.onTopicChanges({
        topicDeleted: (topic) => this.forget(topic.internalId),
        partitionCountConfig: (topic, newCount) => {
          const stored = this.stored.get(topic.internalId);
          return stored === undefined ? null : maxTopicSizeSpread(stored, topic, this.broker.topicDefaults, newCount);
        },
      });
    }
    this.loading ??= this.load().catch((err: unknown) => {
      this.loading = null;
      throw err;
    });
    return this.loading;
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

  async save(topic: Topic, options: StoredTopicOptions): Promise<void> {
    await this.broker.topicOptions.save(topicOptionsProtocol, topic.internalId, serializeTopicOptions(options));
    this.stored.set(topic.internalId, options);
  }

  /** Stores an update's patch over what Iggy stored for the topic (storedAfterPatch). */
  async savePatch(topic: Topic, patch: PatchedTopicOptions): Promise<void> {
    const stored = this.stored.get(topic.internalId) ?? optionsFromCoreConfig(topic, this.broker.topicDefaults);
    await this.save(topic, storedAfterPatch(stored, patch));
  }

  private async load(): Promise<void> {
    for (const entry of await this.broker.topicOptions.list(topicOptionsProtocol)) {
      const internalId = entry.topicInternalId;
      const parsed = deserializeTopicOptions(entry.options);
      if (parsed === null || this.broker.catalog.topicByInternalId(internalId) === null) {
        await this.forget(internalId);
        continue;
      }
      this.stored.set(internalId, parsed);
    }
  }

  private async forget(internalId: number): Promise<void> {
    this.stored.delete(internalId);
    await this.broker.topicOptions.delete(topicOptionsProtocol, internalId).catch(() => undefined);
  }
}

const tables = new WeakMap<Broker, IggyTopicOptionsTable>();

/** The broker's table (made on first use; `watch()` it before reading). */
export function iggyTopicOptionsOf(broker: Broker): IggyTopicOptionsTable {
  let table = tables.get(broker);
  if (table === undefined) {
    table = new IggyTopicOptionsTable(broker);
    tables.set(broker, table);
  }
  return table;
}

/** The server's broker watcher: spreads and drops Iggy topic options whatever listeners are open. */
export function watchIggyTopicOptions(broker: Broker): Promise<void> {
  return iggyTopicOptionsOf(broker).watch();
}
