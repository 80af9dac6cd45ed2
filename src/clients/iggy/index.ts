// The Iggy 0.11 SDK: client, producer, consumer, errors. See docs/sdk-iggy.md.

export {
  IggyClient,
  mintClientId,
  sdkName,
  sdkVersion,
  splitAddr,
  toConsumer,
  toIdentifier,
  toPartitioning,
  toPollingStrategy,
  topicOptionsBlock,
  type ConsumerInput,
  type Id,
  type IggyClientOptions,
  type IggyClientState,
  type IggyCredentials,
  type LoginResult,
  type PartitioningInput,
  type PollStrategyInput,
  type ReconnectOptions,
  type RequestOptions,
  type SendResult,
  type TopicOptions,
} from './client.js';
export { IggyProducer, type IggyProducerOptions, type ProducerSendOptions, type SendReceipt } from './producer.js';
export { IggyConsumer, type IggyConsumerOptions } from './consumer.js';
export { partitionForKey, RoundRobin } from './partitioning.js';
export {
  headerValue,
  newMessageId,
  prepareMessage,
  toHeaderValue,
  userHeadersBytesMax,
  type HeaderInput,
  type IggyMessage,
  type PolledMessages,
  type SendMessage,
} from './messages.js';
export {
  IggyClientError,
  IggyClosedError,
  IggyConnectionError,
  IggyError,
  IggyEvictedError,
  IggyProtocolError,
  IggyTimeoutError,
  isIggyClientError,
  type IggyClientErrorKind,
} from './errors.js';
export type { UserHeader, HeaderValue, Permissions, Identifier } from '../../protocols/iggy/codec/index.js';
