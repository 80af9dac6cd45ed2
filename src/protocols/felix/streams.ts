// Felix streams as catalog topics (docs/mapping.md "Catalog ↔ Felix"): a request's tenant,
// namespace and stream resolved to the topic, checked against the stream's tenant ("tenant
// mismatch") and the principal's grants ("forbidden"). Streams are not created by publishing,
// as in the reference broker, whose streams exist before they are used: a missing one is
// "stream not found: tenant=.. namespace=.. stream=..". Create them with any protocol (a Kafka
// CreateTopics or auto-creation, an Iggy topic, a Cursus CREATE).

import type { Broker } from '../../core/broker.js';
import type { Topic } from '../../core/catalog.js';
import { catalogNamespaceForFelix } from '../mapping.js';
import { ErrorText, streamNotFound } from './codec/index.js';
import type { FelixAccess, FelixAction } from './access.js';
import { FelixFailure, type FelixStreamContext } from './handler.js';

export interface StreamName {
  tenantId: string;
  namespace: string;
  stream: string;
}

export class FelixStreams {
  constructor(
    private readonly broker: Broker,
    private readonly access: FelixAccess,
  ) {}

  /** The topic of a stream, or null when it does not exist or has no catalog name. */
  find(name: StreamName): Topic | null {
    const ns = catalogNamespaceForFelix(name.tenantId, name.namespace);
    return ns === null ? null : this.broker.catalog.getTopic({ namespace: ns, topic: name.stream });
  }

  /** The topic a request names, checked (module comment); throws the FelixFailure to answer. */
  resolve(ctx: FelixStreamContext, name: StreamName, action: FelixAction): Topic {
    if (name.tenantId !== ctx.tenantId) throw new FelixFailure(ErrorText.tenantMismatch);
    const topic = this.find(name);
    if (topic === null) throw new FelixFailure(streamNotFound(name.tenantId, name.namespace, name.stream));
    this.access.authorize(ctx.principal, topic, action);
    return topic;
  }

  /** The topic and shard of a request; a shard beyond the topic's partitions is "stream not found". */
  resolveShard(ctx: FelixStreamContext, name: StreamName, shard: number, action: FelixAction): Topic {
    const topic = this.resolve(ctx, name, action);
    if (shard >= topic.partitions) throw new FelixFailure(streamNotFound(name.tenantId, name.namespace, name.stream));
    return topic;
  }
}
