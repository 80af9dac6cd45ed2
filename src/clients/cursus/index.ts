// The Cursus Wire v2 SDK: client, producer, consumer, transactions, event store, errors.
// See docs/sdk-cursus.md.

export { CursusClient, acksOf, offsetsField } from './client.js';
export type {
  AcksInput,
  AppendStreamRequest,
  ConsumeRequest,
  Isolation,
  OffsetsInput,
  PublishOptions,
  ReadStreamResult,
  StreamRequest,
  TopicConfig,
} from './client.js';
export { crq2Fields, routeOf, type DedicatedConnection, type FieldValue, type RequestOptions } from './client-core.js';
export { compressionId, defaultCompressions } from './options.js';
export type { CompressionName, CursusClientOptions, CursusClientState, CursusCredentials, ReconnectOptions } from './options.js';
export { CursusProducer, type CursusProducerOptions, type ProducerReceipt, type ProducerRecord } from './producer.js';
export { CursusConsumer, type BatchHandler, type ConsumedBatch, type CursusConsumerOptions } from './consumer.js';
export { CursusTransactionalProducer, type TransactionalProducerOptions, type TransactionState } from './transactions.js';
export { CursusEventStore, storedEvent, type AppendResult, type EventStoreOptions, type NewEvent, type ReadResult, type StoredEvent } from './event-store.js';
export { CursusStream, streamEvent, type StreamEvent, type StreamOptions } from './stream.js';
export { choosePartition, fnv1a64, partitionForKey, RoundRobin } from './partitioning.js';
export type {
  AckResponse,
  AlterTopicConfigResult,
  AuthPolicy,
  CleanupPolicy,
  Coordinator,
  DeleteTopicResult,
  EndTxnResult,
  GroupStatus,
  JoinGroupResult,
  PartitionOffsets,
  Partitioner,
  ProducerSession,
  ReadStreamEnvelope,
  Snapshot,
  TopicDefinition,
  TopicDescription,
  TopicMetadata,
  TruncateTopicResult,
  TxnStatus,
} from './replies.js';
export {
  CursusClientError,
  CursusClosedError,
  CursusConnectionError,
  CursusError,
  CursusProtocolError,
  CursusTimeoutError,
  isAuthorization,
  isAvailability,
  isConflict,
  isCursusClientError,
  isFencing,
  isNotFound,
  isRebalance,
  isRetryable,
  isRouting,
  isValidation,
  parseHostPort,
  rebalanceCodes,
  redirectOf,
  type CursusClientErrorKind,
} from './errors.js';
export type { Acks, CursusBatch, CursusRecord, ErrorClassName, StreamClose, StreamCloseReason } from '../../protocols/cursus/codec/index.js';
