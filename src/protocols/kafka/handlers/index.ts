// Every Kafka API this broker answers, one handler file per API key. ApiVersions advertises
// exactly this list. Keep each area's entries in its own block.

import type { KafkaHandler } from './types.js';

// -- data path (api-versions, metadata, produce, fetch, list-offsets, offset-for-leader-epoch, delete-records)
import { apiVersionsHandler } from './api-versions.js';
import { deleteRecordsHandler } from './delete-records.js';
import { fetchHandler } from './fetch.js';
import { listOffsetsHandler } from './list-offsets.js';
import { metadataHandler } from './metadata.js';
import { offsetForLeaderEpochHandler } from './offset-for-leader-epoch.js';
import { produceHandler } from './produce.js';

// -- consumer groups and committed offsets
import { deleteGroupsHandler } from './delete-groups.js';
import { describeGroupsHandler } from './describe-groups.js';
import { findCoordinatorHandler } from './find-coordinator.js';
import { heartbeatHandler } from './heartbeat.js';
import { joinGroupHandler } from './join-group.js';
import { leaveGroupHandler } from './leave-group.js';
import { listGroupsHandler } from './list-groups.js';
import { offsetCommitHandler } from './offset-commit.js';
import { offsetDeleteHandler } from './offset-delete.js';
import { offsetFetchHandler } from './offset-fetch.js';
import { syncGroupHandler } from './sync-group.js';

// -- administration
import { alterClientQuotasHandler } from './alter-client-quotas.js';
import { describeClientQuotasHandler } from './describe-client-quotas.js';
import { createAclsHandler } from './create-acls.js';
import { deleteAclsHandler } from './delete-acls.js';
import { describeAclsHandler } from './describe-acls.js';
import { alterUserScramCredentialsHandler } from './alter-user-scram-credentials.js';
import { describeUserScramCredentialsHandler } from './describe-user-scram-credentials.js';
import { electLeadersHandler } from './elect-leaders.js';
import { describeLogDirsHandler } from './describe-log-dirs.js';
import { alterConfigsHandler } from './alter-configs.js';
import { createPartitionsHandler } from './create-partitions.js';
import { createTopicsHandler } from './create-topics.js';
import { deleteTopicsHandler } from './delete-topics.js';
import { describeClusterHandler } from './describe-cluster.js';
import { describeConfigsHandler } from './describe-configs.js';
import { incrementalAlterConfigsHandler } from './incremental-alter-configs.js';

// -- SASL
import { saslAuthenticateHandler } from './sasl-authenticate.js';
import { saslHandshakeHandler } from './sasl-handshake.js';

// -- transactions
import { addOffsetsToTxnHandler } from './add-offsets-to-txn.js';
import { addPartitionsToTxnHandler } from './add-partitions-to-txn.js';
import { describeProducersHandler } from './describe-producers.js';
import { describeTransactionsHandler } from './describe-transactions.js';
import { endTxnHandler } from './end-txn.js';
import { initProducerIdHandler } from './init-producer-id.js';
import { listTransactionsHandler } from './list-transactions.js';
import { txnOffsetCommitHandler } from './txn-offset-commit.js';

export const kafkaHandlers: readonly KafkaHandler[] = [
  // data path
  produceHandler,
  fetchHandler,
  listOffsetsHandler,
  metadataHandler,
  apiVersionsHandler,
  deleteRecordsHandler,
  offsetForLeaderEpochHandler,
  // consumer groups and committed offsets
  findCoordinatorHandler,
  joinGroupHandler,
  syncGroupHandler,
  heartbeatHandler,
  leaveGroupHandler,
  offsetCommitHandler,
  offsetFetchHandler,
  describeGroupsHandler,
  listGroupsHandler,
  deleteGroupsHandler,
  offsetDeleteHandler,
  // administration
  createTopicsHandler,
  deleteTopicsHandler,
  createPartitionsHandler,
  describeConfigsHandler,
  incrementalAlterConfigsHandler,
  describeClusterHandler,
  describeClientQuotasHandler,
  alterClientQuotasHandler,
  describeAclsHandler,
  createAclsHandler,
  deleteAclsHandler,
  alterUserScramCredentialsHandler,
  describeUserScramCredentialsHandler,
  electLeadersHandler,
  describeLogDirsHandler,
  alterConfigsHandler,
  // SASL
  saslHandshakeHandler,
  saslAuthenticateHandler,
  // transactions
  initProducerIdHandler,
  addPartitionsToTxnHandler,
  addOffsetsToTxnHandler,
  endTxnHandler,
  txnOffsetCommitHandler,
  describeProducersHandler,
  describeTransactionsHandler,
  listTransactionsHandler,
];
