// @platformatic/kafka, loaded from its own install in test/peers/ (`npm run peers`). Its 2.x line
// declares Node >= 22 and would warn at every root `npm install` on Node 20, so the root package
// leaves it out; on Node 20 it needs only Promise.withResolvers, polyfilled before it loads.
// Every user loads it through here: a test gets a skip reason with the install hint when it is
// absent (a failure under QUARTET_REQUIRE_CLIENTS=1, test/missing-client.ts); a benchmark, an error.
//
// The types below are the part of the client's API that the tests and benchmarks call, written
// out because the root type check runs without the peer install. A call that stops matching the
// installed client fails when the tests run with it (CI installs it).

import './promise-with-resolvers.js';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { missingClient } from '../missing-client.js';

export const peersInstallHint = 'npm run peers, which runs npm ci --prefix test/peers';
const notInstalled = '@platformatic/kafka is not installed';

/** The module, or null when test/peers has not been installed. */
export async function loadPlatformaticKafka(): Promise<PlatformaticKafka | null> {
  let entry: string;
  try {
    entry = createRequire(new URL('./package.json', import.meta.url)).resolve('@platformatic/kafka');
  } catch {
    return null;
  }
  return (await import(pathToFileURL(entry).href)) as PlatformaticKafka;
}

/** The module, or an error that says how to install it (for a benchmark, which has no skip). */
export async function requirePlatformaticKafka(): Promise<PlatformaticKafka> {
  const kafka = await loadPlatformaticKafka();
  if (kafka === null) throw new Error(`${notInstalled} (${peersInstallHint})`);
  return kafka;
}

export type PlatformaticKafkaPeer = { kafka: PlatformaticKafka; skip: false } | { kafka: null; skip: string };

/** For a test: the module, or the reason to skip (throws instead when QUARTET_REQUIRE_CLIENTS=1). */
export async function platformaticKafkaPeer(): Promise<PlatformaticKafkaPeer> {
  const kafka = await loadPlatformaticKafka();
  if (kafka !== null) return { kafka, skip: false };
  return { kafka: null, skip: missingClient(`${notInstalled} (${peersInstallHint})`) };
}

// --- the API used -------------------------------------------------------------------------------

export interface PlatformaticKafka {
  Admin: new (options: ClientOptions) => Admin;
  Producer: new (options: ClientOptions & { serializers?: Codecs; autocreateTopics?: boolean; retries?: number }) => Producer;
  /** Only with stringDeserializers: keys, values and headers arrive as strings. */
  Consumer: new (options: ClientOptions & { groupId: string; deserializers: Codecs; maxWaitTime?: number }) => Consumer;
  Connection: new (clientId?: string, options?: { sasl?: { mechanism: string; username: string; password: string } }) => Connection;
  stringSerializers: Codecs;
  stringDeserializers: Codecs;
  ProduceAcks: { LEADER: number; ALL: number };
  ConfigResourceTypes: { TOPIC: number };
  IncrementalAlterConfigOperationTypes: { SET: number; DELETE: number };
  findErrorBy(error: Error | null | undefined, property: string, value: unknown): { apiCode?: number } | null;
  metadataV12: Api<[topics: string[], allowAutoTopicCreation: boolean, includeTopicAuthorizedOperations: boolean], { brokers: unknown[] }>;
  describeUserScramCredentialsV0: Api<[users: Array<{ name: string }>], { results: Array<{ user: string; errorCode: number; credentialInfos: Array<{ mechanism: number; iterations: number }> }> }>;
  alterUserScramCredentialsV0: Api<
    [deletions: Array<{ name: string; mechanism: number }>, upsertions: Array<{ name: string; mechanism: number; iterations: number; salt: Buffer; saltedPassword: Buffer }>],
    { results: Array<{ user: string; errorCode: number; errorMessage: string | null }> }
  >;
  describeProducersV0: Api<
    [topics: Array<{ name: string; partitionIndexes: number[] }>],
    { topics: Array<{ partitions: Array<{ activeProducers: Array<{ producerId: bigint; producerEpoch: number; lastSequence: number; currentTxnStartOffset: bigint }> }> }> }
  >;
  describeTransactionsV0: Api<
    [transactionalIds: string[]],
    { transactionStates: Array<{ errorCode: number; transactionState: string; producerId: bigint; producerEpoch: number; topics: Array<{ topic: string; partitions: number[] }> }> }
  >;
  listTransactionsV1: Api<
    [stateFilters: string[], producerIdFilters: bigint[], durationFilter: bigint, unused: null],
    { transactionStates: Array<{ transactionalId: string; producerId: bigint; transactionState: string }> }
  >;
}

/** The serializers or deserializers a client is built with (opaque here). */
export type Codecs = object;

export interface ClientOptions {
  clientId: string;
  bootstrapBrokers: string[];
}

/** One request API of one version, sent over a Connection. */
export interface Api<Args extends unknown[], Response> {
  api: { async(connection: Connection, ...args: Args): Promise<Response> };
}

export interface Connection {
  connect(host: string, port: number): Promise<void>;
  close(): Promise<void>;
}

export interface Admin {
  close(): Promise<void>;
  createTopics(options: { topics: string[]; partitions: number; replicas: number; configs?: Array<{ name: string; value: string }> }): Promise<unknown>;
  createPartitions(options: { topics: Array<{ name: string; count: number }> }): Promise<void>;
  deleteTopics(options: { topics: string[] }): Promise<void>;
  incrementalAlterConfigs(options: { resources: Array<{ resourceType: number; resourceName: string; configs: AlterConfig[] }> }): Promise<unknown>;
  describeLogDirs(options: { topics: Array<{ name: string; partitions: number[] }> }): Promise<Array<{ results: LogDir[] }>>;
  alterConsumerGroupOffsets(options: { groupId: string; topics: Array<{ name: string; partitionOffsets: Array<{ partition: number; offset: bigint }> }> }): Promise<void>;
  deleteConsumerGroupOffsets(options: { groupId: string; topics: Array<{ name: string; partitionIndexes: number[] }> }): Promise<Array<{ name: string; partitionIndexes: number[] }>>;
  listConsumerGroupOffsets(options: { groups: string[] }): Promise<Array<{ topics: Array<{ name: string; partitions: Array<{ partitionIndex: number; committedOffset: bigint }> }> }>>;
  alterClientQuotas(options: { entries: Array<{ entities: QuotaEntity[]; ops: Array<{ key: string; value: number; remove: boolean }> }> }): Promise<Array<{ errorCode: number }>>;
  describeClientQuotas(options: { components: Array<{ entityType: string; matchType: number; match?: string }>; strict?: boolean }): Promise<Array<{ entity: QuotaEntity[]; values: Array<{ key: string; value: number }> }>>;
}

export interface AlterConfig {
  name: string;
  configOperation: number;
  value?: string;
}

export interface QuotaEntity {
  entityType: string;
  entityName: string | null;
}

export interface LogDir {
  logDir: string;
  totalBytes: bigint;
  usableBytes: bigint;
  topics: Array<{ name: string; partitions: Array<{ partitionIndex: number; partitionSize: bigint; offsetLag: bigint; isFutureKey: boolean }> }>;
}

export interface Producer {
  send(options: { messages: ProducedMessage[]; acks: number }): Promise<{ offsets?: unknown[] }>;
  close(): Promise<void>;
}

export interface ProducedMessage {
  topic: string;
  partition?: number;
  key?: string | Buffer;
  value: string | Buffer;
  headers?: Map<string, string>;
}

export interface Consumer {
  consume(options: { topics: string[]; mode: 'earliest' | 'latest'; autocommit: boolean; sessionTimeout?: number; heartbeatInterval?: number }): Promise<MessagesStream>;
  close(force?: boolean): Promise<void>;
}

export interface MessagesStream extends AsyncIterable<ConsumedMessage> {
  close(): Promise<void>;
}

export interface ConsumedMessage {
  partition: number;
  offset: bigint;
  key: string;
  value: string;
  headers: Map<string, string>;
}
