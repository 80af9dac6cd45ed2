// The Felix wire v1 SDK over QUIC: client and pools, publishers (binary acked, keyed, JSON
// fallback, idempotent), subscriptions with loss detection and resume, caches with TTL, watches
// and counters, queue-group consumers, typed errors. See docs/sdk-felix.md.

export { FelixClient, requireFeature, type CallOptions, type PoolName } from './client.js';
export { defaultClientFeatures, defaultFelixPort, type FelixClientOptions, type FelixPools, type PoolSize } from './options.js';
export { FelixPublisher, type PayloadInput, type PublishResult, type PublisherOptions, type SendOptions } from './publisher.js';
export { FelixIdempotentPublisher, type IdempotentPublisherOptions, type IdempotentReceipt } from './idempotent.js';
export { FelixSubscription, type EventBatch, type Gap, type StartInput, type SubscribeOptions } from './subscriber.js';
export { FelixCache, type PutOptions } from './cache.js';
export { FelixCacheWatch, type CacheChange, type WatchOptions, type WatchStarted } from './cache-watch.js';
export { FelixGroupConsumer, type GroupConsumerOptions, type GroupRecord, type PollOptions } from './group.js';
export {
  FelixAuthError,
  FelixClientError,
  FelixClosedError,
  FelixConnectionError,
  FelixCursorError,
  FelixError,
  FelixForbiddenError,
  FelixNotFoundError,
  FelixNotLeaderError,
  FelixOverloadedError,
  FelixProtocolError,
  FelixPublishRefusedError,
  FelixRequestError,
  FelixTimeoutError,
  FelixUnsupportedError,
  felixError,
  isFelixClientError,
  isRetryable,
  type FelixClientErrorKind,
  type NotFoundWhat,
} from './errors.js';
export { Feature, Flag, type AckMode, type PeerCapabilities, type PublishOwner, type PublishRefusalReason } from '../../protocols/felix/codec/index.js';
