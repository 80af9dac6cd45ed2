// The Iggy 0.11 SDK: client, producer, consumer, errors. See docs/sdk-iggy.md.

export { IggyClient, mintClientId, sdkName, sdkVersion } from './client.js';
export type { IggyClientOptions, IggyClientState, LoginResult, ReconnectOptions, RequestOptions, SendResult } from './options.js';
export {
  splitAddr,
  toConsumer,
  toIdentifier,
  toPartitioning,
  toPollingStrategy,
  topicOptionsBlock,
  type ConsumerInput,
  type Id,
  type IggyCredentials,
  type PartitioningInput,
  type PollStrategyInput,
  type TopicOptions,
} from './inputs.js';
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
