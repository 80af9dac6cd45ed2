// A protocol's own options for each topic (what the core topic config does not hold), kept in the
// core topic options store under the protocol's name and mirrored in memory, one table per broker
// and protocol. `watch()` loads what is stored once and listens to the broker's topic changes, so
// that the options of a deleted topic go with it (a topic created again under the same name starts
// without them) whether or not the protocol's listener is open: the server watches every broker
// it opens (src/server/listeners.ts builtinBrokerWatchers). A protocol adds what it needs on top
// (its view of a topic, more topic-change hooks) in a subclass.

import type { Broker, TopicChangeListener } from './broker.js';
import type { Topic } from './catalog.js';

export interface ProtocolTopicTableCodec<T> {
  /** The topic options store's protocol name. */
  readonly protocol: string;
  /** What is stored back into options, or null when it cannot be read (then it is dropped). */
  deserialize(stored: unknown): T | null;
  /** What to store for the options (default: the options themselves, as JSON). */
  serialize?(value: T): unknown;
}

export class ProtocolTopicTable<T> {
  protected readonly stored = new Map<number, T>();
  private listening = false;
  private loading: Promise<void> | null = null;

  constructor(
    protected readonly broker: Broker,
    private readonly codec: ProtocolTopicTableCodec<T>,
  ) {}

  /**
   * Listens to the broker's topic changes (once) and loads what is stored, dropping the options
   * of topics that no longer exist; later calls wait for the same load, or try again after a
   * failed one.
   */
  watch(): Promise<void> {
    if (!this.listening) {
      // Listening first: a topic deleted during the load is not kept.
      this.listening = true;
      this.broker.onTopicChanges({ ...this.topicChanges(), topicDeleted: (topic) => this.forget(topic.internalId) });
    }
    this.loading ??= this.load().catch((err: unknown) => {
      this.loading = null;
      throw err;
    });
    return this.loading;
  }

  /** What the protocol stored for the topic, if anything. */
  get(topic: Topic): T | undefined {
    return this.stored.get(topic.internalId);
  }

  async save(topic: Topic, value: T): Promise<void> {
    await this.broker.topicOptions.save(this.codec.protocol, topic.internalId, this.codec.serialize?.(value) ?? value);
    this.stored.set(topic.internalId, value);
  }

  /** More topic-change hooks of the protocol (deletions are handled here). */
  protected topicChanges(): Omit<TopicChangeListener, 'topicDeleted'> {
    return {};
  }

  private async load(): Promise<void> {
    for (const entry of await this.broker.topicOptions.list(this.codec.protocol)) {
      const internalId = entry.topicInternalId;
      const parsed = this.codec.deserialize(entry.options);
      if (parsed === null || this.broker.catalog.topicByInternalId(internalId) === null) {
        await this.forget(internalId);
        continue;
      }
      this.stored.set(internalId, parsed);
    }
  }

  private async forget(internalId: number): Promise<void> {
    this.stored.delete(internalId);
    await this.broker.topicOptions.delete(this.codec.protocol, internalId).catch(() => undefined);
  }
}

const tables = new WeakMap<Broker, Map<string, ProtocolTopicTable<unknown>>>();

/** The broker's table of the protocol, made by `make` on first use (`watch()` it before reading). */
export function protocolTopicTableOf<P extends ProtocolTopicTable<unknown>>(broker: Broker, protocol: string, make: () => P): P {
  let byProtocol = tables.get(broker);
  if (byProtocol === undefined) {
    byProtocol = new Map();
    tables.set(broker, byProtocol);
  }
  let table = byProtocol.get(protocol);
  if (table === undefined) {
    table = make();
    byProtocol.set(protocol, table);
  }
  return table as P;
}
