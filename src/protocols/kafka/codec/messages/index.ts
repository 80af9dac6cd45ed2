// The registry of message schemas by API key, and the types derived from it.
import { ApiKey } from '../api-keys.js';
import type { MessageInputOf, MessageOf } from '../schema.js';
import { addOffsetsToTxnRequest, addOffsetsToTxnResponse } from './add-offsets-to-txn.js';
import { createAclsRequest, createAclsResponse, deleteAclsRequest, deleteAclsResponse, describeAclsRequest, describeAclsResponse } from './acls.js';
import { addPartitionsToTxnRequest, addPartitionsToTxnResponse } from './add-partitions-to-txn.js';
import { alterConfigsRequest, alterConfigsResponse } from './alter-configs.js';
import { alterUserScramCredentialsRequest, alterUserScramCredentialsResponse } from './alter-user-scram-credentials.js';
import { apiVersionsRequest, apiVersionsResponse } from './api-versions.js';
import { alterClientQuotasRequest, alterClientQuotasResponse, describeClientQuotasRequest, describeClientQuotasResponse } from './client-quotas.js';
import { createPartitionsRequest, createPartitionsResponse } from './create-partitions.js';
import { createTopicsRequest, createTopicsResponse } from './create-topics.js';
import { deleteGroupsRequest, deleteGroupsResponse } from './delete-groups.js';
import { deleteRecordsRequest, deleteRecordsResponse } from './delete-records.js';
import { deleteTopicsRequest, deleteTopicsResponse } from './delete-topics.js';
import { describeClusterRequest, describeClusterResponse } from './describe-cluster.js';
import { describeConfigsRequest, describeConfigsResponse } from './describe-configs.js';
import { describeGroupsRequest, describeGroupsResponse } from './describe-groups.js';
import { describeLogDirsRequest, describeLogDirsResponse } from './describe-log-dirs.js';
import { describeProducersRequest, describeProducersResponse } from './describe-producers.js';
import { describeTransactionsRequest, describeTransactionsResponse } from './describe-transactions.js';
import { describeUserScramCredentialsRequest, describeUserScramCredentialsResponse } from './describe-user-scram-credentials.js';
import { electLeadersRequest, electLeadersResponse } from './elect-leaders.js';
import { endTxnRequest, endTxnResponse } from './end-txn.js';
import { fetchRequest, fetchResponse } from './fetch.js';
import { findCoordinatorRequest, findCoordinatorResponse } from './find-coordinator.js';
import { heartbeatRequest, heartbeatResponse } from './heartbeat.js';
import { incrementalAlterConfigsRequest, incrementalAlterConfigsResponse } from './incremental-alter-configs.js';
import { initProducerIdRequest, initProducerIdResponse } from './init-producer-id.js';
import { joinGroupRequest, joinGroupResponse } from './join-group.js';
import { leaveGroupRequest, leaveGroupResponse } from './leave-group.js';
import { listGroupsRequest, listGroupsResponse } from './list-groups.js';
import { listOffsetsRequest, listOffsetsResponse } from './list-offsets.js';
import { listTransactionsRequest, listTransactionsResponse } from './list-transactions.js';
import { metadataRequest, metadataResponse } from './metadata.js';
import { offsetCommitRequest, offsetCommitResponse } from './offset-commit.js';
import { offsetDeleteRequest, offsetDeleteResponse } from './offset-delete.js';
import { offsetFetchRequest, offsetFetchResponse } from './offset-fetch.js';
import { offsetForLeaderEpochRequest, offsetForLeaderEpochResponse } from './offset-for-leader-epoch.js';
import { produceRequest, produceResponse } from './produce.js';
import { saslAuthenticateRequest, saslAuthenticateResponse } from './sasl-authenticate.js';
import { saslHandshakeRequest, saslHandshakeResponse } from './sasl-handshake.js';
import { syncGroupRequest, syncGroupResponse } from './sync-group.js';
import { txnOffsetCommitRequest, txnOffsetCommitResponse } from './txn-offset-commit.js';

export const messageSchemas = {
  [ApiKey.Produce]: { request: produceRequest, response: produceResponse },
  [ApiKey.Fetch]: { request: fetchRequest, response: fetchResponse },
  [ApiKey.ListOffsets]: { request: listOffsetsRequest, response: listOffsetsResponse },
  [ApiKey.Metadata]: { request: metadataRequest, response: metadataResponse },
  [ApiKey.OffsetCommit]: { request: offsetCommitRequest, response: offsetCommitResponse },
  [ApiKey.OffsetFetch]: { request: offsetFetchRequest, response: offsetFetchResponse },
  [ApiKey.FindCoordinator]: { request: findCoordinatorRequest, response: findCoordinatorResponse },
  [ApiKey.JoinGroup]: { request: joinGroupRequest, response: joinGroupResponse },
  [ApiKey.Heartbeat]: { request: heartbeatRequest, response: heartbeatResponse },
  [ApiKey.LeaveGroup]: { request: leaveGroupRequest, response: leaveGroupResponse },
  [ApiKey.SyncGroup]: { request: syncGroupRequest, response: syncGroupResponse },
  [ApiKey.DescribeGroups]: { request: describeGroupsRequest, response: describeGroupsResponse },
  [ApiKey.ListGroups]: { request: listGroupsRequest, response: listGroupsResponse },
  [ApiKey.SaslHandshake]: { request: saslHandshakeRequest, response: saslHandshakeResponse },
  [ApiKey.ApiVersions]: { request: apiVersionsRequest, response: apiVersionsResponse },
  [ApiKey.CreateTopics]: { request: createTopicsRequest, response: createTopicsResponse },
  [ApiKey.DeleteTopics]: { request: deleteTopicsRequest, response: deleteTopicsResponse },
  [ApiKey.DeleteRecords]: { request: deleteRecordsRequest, response: deleteRecordsResponse },
  [ApiKey.InitProducerId]: { request: initProducerIdRequest, response: initProducerIdResponse },
  [ApiKey.OffsetForLeaderEpoch]: { request: offsetForLeaderEpochRequest, response: offsetForLeaderEpochResponse },
  [ApiKey.AddPartitionsToTxn]: { request: addPartitionsToTxnRequest, response: addPartitionsToTxnResponse },
  [ApiKey.AddOffsetsToTxn]: { request: addOffsetsToTxnRequest, response: addOffsetsToTxnResponse },
  [ApiKey.EndTxn]: { request: endTxnRequest, response: endTxnResponse },
  [ApiKey.TxnOffsetCommit]: { request: txnOffsetCommitRequest, response: txnOffsetCommitResponse },
  [ApiKey.DescribeConfigs]: { request: describeConfigsRequest, response: describeConfigsResponse },
  [ApiKey.SaslAuthenticate]: { request: saslAuthenticateRequest, response: saslAuthenticateResponse },
  [ApiKey.CreatePartitions]: { request: createPartitionsRequest, response: createPartitionsResponse },
  [ApiKey.DeleteGroups]: { request: deleteGroupsRequest, response: deleteGroupsResponse },
  [ApiKey.IncrementalAlterConfigs]: {
    request: incrementalAlterConfigsRequest,
    response: incrementalAlterConfigsResponse,
  },
  [ApiKey.DescribeCluster]: { request: describeClusterRequest, response: describeClusterResponse },
  [ApiKey.AlterConfigs]: { request: alterConfigsRequest, response: alterConfigsResponse },
  [ApiKey.DescribeLogDirs]: { request: describeLogDirsRequest, response: describeLogDirsResponse },
  [ApiKey.OffsetDelete]: { request: offsetDeleteRequest, response: offsetDeleteResponse },
  [ApiKey.ElectLeaders]: { request: electLeadersRequest, response: electLeadersResponse },
  [ApiKey.DescribeProducers]: { request: describeProducersRequest, response: describeProducersResponse },
  [ApiKey.DescribeTransactions]: { request: describeTransactionsRequest, response: describeTransactionsResponse },
  [ApiKey.ListTransactions]: { request: listTransactionsRequest, response: listTransactionsResponse },
  [ApiKey.DescribeUserScramCredentials]: { request: describeUserScramCredentialsRequest, response: describeUserScramCredentialsResponse },
  [ApiKey.AlterUserScramCredentials]: { request: alterUserScramCredentialsRequest, response: alterUserScramCredentialsResponse },
  [ApiKey.DescribeAcls]: { request: describeAclsRequest, response: describeAclsResponse },
  [ApiKey.CreateAcls]: { request: createAclsRequest, response: createAclsResponse },
  [ApiKey.DeleteAcls]: { request: deleteAclsRequest, response: deleteAclsResponse },
  [ApiKey.DescribeClientQuotas]: { request: describeClientQuotasRequest, response: describeClientQuotasResponse },
  [ApiKey.AlterClientQuotas]: { request: alterClientQuotasRequest, response: alterClientQuotasResponse },
} as const;

export type SchemaApiKey = keyof typeof messageSchemas;
export type RequestOf<K extends SchemaApiKey> = MessageOf<(typeof messageSchemas)[K]['request']>;
export type RequestInputOf<K extends SchemaApiKey> = MessageInputOf<(typeof messageSchemas)[K]['request']>;
export type ResponseOf<K extends SchemaApiKey> = MessageOf<(typeof messageSchemas)[K]['response']>;
export type ResponseInputOf<K extends SchemaApiKey> = MessageInputOf<(typeof messageSchemas)[K]['response']>;

export function hasSchema(apiKey: number): apiKey is SchemaApiKey {
  return Object.prototype.hasOwnProperty.call(messageSchemas, apiKey);
}

export * from './acls.js';
export * from './add-offsets-to-txn.js';
export * from './add-partitions-to-txn.js';
export * from './alter-configs.js';
export * from './alter-user-scram-credentials.js';
export * from './api-versions.js';
export * from './client-quotas.js';
export * from './create-partitions.js';
export * from './create-topics.js';
export * from './delete-groups.js';
export * from './delete-records.js';
export * from './delete-topics.js';
export * from './describe-cluster.js';
export * from './describe-configs.js';
export * from './describe-groups.js';
export * from './describe-log-dirs.js';
export * from './describe-producers.js';
export * from './describe-transactions.js';
export * from './describe-user-scram-credentials.js';
export * from './elect-leaders.js';
export * from './end-txn.js';
export * from './fetch.js';
export * from './find-coordinator.js';
export * from './heartbeat.js';
export * from './incremental-alter-configs.js';
export * from './init-producer-id.js';
export * from './join-group.js';
export * from './leave-group.js';
export * from './list-groups.js';
export * from './list-offsets.js';
export * from './list-transactions.js';
export * from './metadata.js';
export * from './offset-commit.js';
export * from './offset-delete.js';
export * from './offset-fetch.js';
export * from './offset-for-leader-epoch.js';
export * from './produce.js';
export * from './sasl-authenticate.js';
export * from './sasl-handshake.js';
export * from './sync-group.js';
export * from './txn-offset-commit.js';
