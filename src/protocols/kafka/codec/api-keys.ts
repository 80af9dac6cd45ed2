// Kafka API keys. Numbers and names follow the apache/kafka message schemas
// (clients/src/main/resources/common/message/*Request.json, "apiKey"), cross-checked against
// franz-go's generate/definitions/NN_<name> files, which are numbered by key.
//
// `supportedApis` is what this broker implements and advertises in ApiVersions: min 0 for every
// API (librdkafka < 2.11.1 needs exact single versions inside the range, see
// shared/specs/kafka-broker-notes.md §3.1) and the max from the "Advertise" column of §2.
// `flexibleFrom` is the first flexible (KIP-482) version from each schema's "flexibleVersions".

export const ApiKey = {
  Produce: 0,
  Fetch: 1,
  ListOffsets: 2,
  Metadata: 3,
  LeaderAndIsr: 4,
  StopReplica: 5,
  UpdateMetadata: 6,
  ControlledShutdown: 7,
  OffsetCommit: 8,
  OffsetFetch: 9,
  FindCoordinator: 10,
  JoinGroup: 11,
  Heartbeat: 12,
  LeaveGroup: 13,
  SyncGroup: 14,
  DescribeGroups: 15,
  ListGroups: 16,
  SaslHandshake: 17,
  ApiVersions: 18,
  CreateTopics: 19,
  DeleteTopics: 20,
  DeleteRecords: 21,
  InitProducerId: 22,
  OffsetForLeaderEpoch: 23,
  AddPartitionsToTxn: 24,
  AddOffsetsToTxn: 25,
  EndTxn: 26,
  WriteTxnMarkers: 27,
  TxnOffsetCommit: 28,
  DescribeAcls: 29,
  CreateAcls: 30,
  DeleteAcls: 31,
  DescribeConfigs: 32,
  AlterConfigs: 33,
  AlterReplicaLogDirs: 34,
  DescribeLogDirs: 35,
  SaslAuthenticate: 36,
  CreatePartitions: 37,
  CreateDelegationToken: 38,
  RenewDelegationToken: 39,
  ExpireDelegationToken: 40,
  DescribeDelegationToken: 41,
  DeleteGroups: 42,
  ElectLeaders: 43,
  IncrementalAlterConfigs: 44,
  AlterPartitionReassignments: 45,
  ListPartitionReassignments: 46,
  OffsetDelete: 47,
  DescribeClientQuotas: 48,
  AlterClientQuotas: 49,
  DescribeUserScramCredentials: 50,
  AlterUserScramCredentials: 51,
  Vote: 52,
  BeginQuorumEpoch: 53,
  EndQuorumEpoch: 54,
  DescribeQuorum: 55,
  AlterPartition: 56,
  UpdateFeatures: 57,
  Envelope: 58,
  FetchSnapshot: 59,
  DescribeCluster: 60,
  DescribeProducers: 61,
  BrokerRegistration: 62,
  BrokerHeartbeat: 63,
  UnregisterBroker: 64,
  DescribeTransactions: 65,
  ListTransactions: 66,
  AllocateProducerIds: 67,
  ConsumerGroupHeartbeat: 68,
  ConsumerGroupDescribe: 69,
  ControllerRegistration: 70,
  GetTelemetrySubscriptions: 71,
  PushTelemetry: 72,
  AssignReplicasToDirs: 73,
  ListConfigResources: 74,
  DescribeTopicPartitions: 75,
} as const;
export type ApiKeyName = keyof typeof ApiKey;
export type ApiKeyNumber = (typeof ApiKey)[ApiKeyName];

const namesByKey = new Map<number, ApiKeyName>();
for (const name of Object.keys(ApiKey) as ApiKeyName[]) namesByKey.set(ApiKey[name], name);

/** The API's name for a key, or `Unknown(<key>)`. */
export function apiKeyName(key: number): string {
  return namesByKey.get(key) ?? `Unknown(${key})`;
}

export interface SupportedApi {
  key: number;
  name: ApiKeyName;
  minVersion: number;
  maxVersion: number;
  /** First flexible version, or null if the API has none. */
  flexibleFrom: number | null;
}

function api(name: ApiKeyName, maxVersion: number, flexibleFrom: number | null): SupportedApi {
  return { key: ApiKey[name], name, minVersion: 0, maxVersion, flexibleFrom };
}

/** The APIs this broker advertises, in key order. */
export const supportedApis: readonly SupportedApi[] = [
  api('Produce', 9, 9),
  api('Fetch', 12, 12),
  api('ListOffsets', 7, 6),
  api('Metadata', 12, 9),
  api('OffsetCommit', 8, 8),
  api('OffsetFetch', 8, 6),
  api('FindCoordinator', 4, 3),
  api('JoinGroup', 7, 6),
  api('Heartbeat', 4, 4),
  api('LeaveGroup', 4, 4),
  api('SyncGroup', 5, 4),
  api('DescribeGroups', 5, 5),
  api('ListGroups', 4, 3),
  api('SaslHandshake', 1, null),
  api('ApiVersions', 3, 3),
  api('CreateTopics', 7, 5),
  api('DeleteTopics', 6, 4),
  api('DeleteRecords', 2, 2),
  api('InitProducerId', 4, 2),
  api('OffsetForLeaderEpoch', 4, 4),
  api('AddPartitionsToTxn', 3, 3),
  api('AddOffsetsToTxn', 3, 3),
  api('EndTxn', 4, 3),
  api('TxnOffsetCommit', 3, 3),
  api('DescribeAcls', 3, 2),
  api('CreateAcls', 3, 2),
  api('DeleteAcls', 3, 2),
  api('DescribeConfigs', 4, 4),
  api('AlterConfigs', 2, 2),
  api('DescribeLogDirs', 4, 2),
  api('SaslAuthenticate', 2, 2),
  api('CreatePartitions', 3, 2),
  api('DeleteGroups', 2, 2),
  api('ElectLeaders', 2, 2),
  api('IncrementalAlterConfigs', 1, 1),
  api('OffsetDelete', 0, null),
  api('DescribeClientQuotas', 1, 1),
  api('AlterClientQuotas', 1, 1),
  api('DescribeUserScramCredentials', 0, 0),
  api('AlterUserScramCredentials', 0, 0),
  api('DescribeCluster', 1, 0),

  api('DescribeProducers', 0, 0),
  api('DescribeTransactions', 0, 0),
  api('ListTransactions', 1, 0),];

const supportedByKey = new Map<number, SupportedApi>(supportedApis.map((a) => [a.key, a]));

export function supportedApi(key: number): SupportedApi | undefined {
  return supportedByKey.get(key);
}

export function isVersionSupported(key: number, version: number): boolean {
  const a = supportedByKey.get(key);
  return a !== undefined && version >= a.minVersion && version <= a.maxVersion;
}

/** Whether (key, version) uses flexible encoding. Unknown keys are treated as not flexible. */
export function isFlexible(key: number, version: number): boolean {
  const a = supportedByKey.get(key);
  return a !== undefined && a.flexibleFrom !== null && version >= a.flexibleFrom;
}
